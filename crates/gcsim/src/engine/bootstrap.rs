//! The uncertainty of a trace's recorded steps: a bootstrap over steps.
//!
//! A study whose workers replay or resample a trace estimates the trace's
//! law, and the Monte Carlo interval covers only the noise of the trials
//! drawn from it. The recorded steps are themselves a sample: with 43
//! steps, another recording of the same job gives another answer. Each
//! bootstrap replicate draws the trace's steps with replacement (in runs of
//! `--iterations` consecutive steps, the moving-block bootstrap of Künsch
//! 1989, which keeps the persistence within a run) and simulates the study
//! on its own trials. The replicates' values vary with the data and with
//! their Monte Carlo noise; the variance due to the data is their sample
//! variance less the mean of their Monte Carlo variances (never below 0;
//! Efron & Tibshirani 1993, §6 for the bootstrap estimate of variance).
//! Added in quadrature to a Monte Carlo interval's half-widths, it gives an
//! interval for the value the job itself would have.

use super::{Options, Outcome, Summary};
use crate::study::{Study, StudyError};

/// Default number of bootstrap replicates over a trace's steps.
pub const DATA_REPLICATES: usize = 30;

/// Most trials one replicate runs.
pub const MAX_REPLICATE_TRIALS: u64 = 100_000;

/// Mixed into the seed of the bootstrap replicates.
const REPLICATE_SEED: u64 = 0x6273_7472_6170_0001;

/// A configuration's value and its Monte Carlo 95% interval, if it has one.
pub(crate) type Valued = (f64, Option<(f64, f64)>);

/// Why a number of replicates cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicatesError {
    /// Replicates asked for on workers that are a law, not a trace.
    NoTrace,
    /// One replicate, which has no spread.
    One,
    /// Replicates asked for exact values, which have no interval.
    Analytic,
}

/// The replicates to run: `given` (or [`DATA_REPLICATES`]) for a trace
/// simulated, none for a law or exact values; 0 turns them off.
pub fn replicates(
    given: Option<usize>,
    workers: &crate::workers::Workers,
    analytic: bool,
) -> Result<usize, ReplicatesError> {
    if !workers.is_measured() {
        return match given {
            Some(_) => Err(ReplicatesError::NoTrace),
            None => Ok(0),
        };
    }
    match given {
        Some(1) => Err(ReplicatesError::One),
        Some(b) if b > 0 && analytic => Err(ReplicatesError::Analytic),
        _ if analytic => Ok(0),
        given => Ok(given.unwrap_or(DATA_REPLICATES)),
    }
}

/// Trials per bootstrap replicate: a tenth of the study's trials, at least
/// 2000 and at most [`MAX_REPLICATE_TRIALS`] (its Monte Carlo noise is
/// subtracted, so it need only be well below the data's spread).
pub fn replicate_trials(trials: u64) -> u64 {
    (trials / 10).clamp(2000, MAX_REPLICATE_TRIALS)
}

/// Worker draws of `study` and `replicates` bootstrap replicates of it
/// together, to be held within [`crate::study::MAX_TOTAL_DRAWS`].
pub fn total_draws(study: &Study, replicates: usize) -> u128 {
    let trials = u128::from(study.trials()) + replicates as u128 * u128::from(replicate_trials(study.trials()));
    u128::from(study.draws_per_trial()) * u128::from(study.iterations()) * trials
}

/// The variance due to the data of each configuration's value, from
/// `replicates` bootstrap replicates of `study`'s recorded steps, each
/// simulated by `simulate` on [`replicate_trials`] trials. `value` reads a
/// configuration's value and its Monte Carlo 95% interval from its summary.
/// `None` for a law, or with fewer than 2 replicates.
pub fn data_variance(
    study: &Study,
    replicates: usize,
    options: &Options,
    simulate: &dyn Fn(&Study, &Options) -> Outcome,
    value: &dyn Fn(&Summary) -> Valued,
) -> Result<Option<Vec<f64>>, StudyError> {
    if replicates < 2 || !study.workers().is_measured() {
        return Ok(None);
    }
    let trials = replicate_trials(study.trials());
    let configs = study.schemes().len();
    let (mut sum, mut sum_sq, mut mc) = (vec![0.0; configs], vec![0.0; configs], vec![0.0; configs]);
    for b in 0..replicates as u64 {
        let mut rng = crate::rng::trial_rng(study.seed() ^ REPLICATE_SEED, b);
        let workers = study.workers().resample_steps(study.iterations() as usize, &mut rng);
        let replicate = study.replicate(workers, trials, rand::Rng::next_u64(&mut rng))?;
        let outcome = simulate(&replicate, options);
        for (i, summary) in outcome.configs.iter().enumerate() {
            let (v, ci) = value(summary);
            sum[i] += v;
            sum_sq[i] += v * v;
            // The Monte Carlo variance of this replicate's value, from its interval.
            mc[i] += ci.map_or(0.0, |(lo, hi)| ((hi - lo) / (2.0 * crate::stats::Z95)).powi(2));
        }
    }
    let b = replicates as f64;
    Ok(Some(
        (0..configs)
            .map(|i| {
                let mean = sum[i] / b;
                let var = (sum_sq[i] - b * mean * mean) / (b - 1.0);
                let v = (var - mc[i] / b).max(0.0);
                if v.is_finite() { v } else { 0.0 }
            })
            .collect(),
    ))
}

/// A Monte Carlo interval `ci` around `value`, each side widened by the
/// data's variance `var`: half-widths add in quadrature.
pub fn widened(value: f64, ci: (f64, f64), var: f64) -> (f64, f64) {
    let extra = crate::stats::Z95 * crate::stats::Z95 * var;
    let low = value - ((value - ci.0).powi(2) + extra).sqrt();
    let high = value + ((ci.1 - value).powi(2) + extra).sqrt();
    (low, high)
}
