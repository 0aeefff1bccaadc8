//! Calibrating the load model from a trace measured at several loads: which
//! of `fixed`, `scaled`, `additive` and `affine` (see [`crate::load`]) the
//! times support, with affine's unit time c and the base law X at load 1.
//!
//! Each model is tested twice over the times of every load, pooled over
//! steps and workers:
//!
//! - **moments** (all four models): the per-load means and variances against
//!   the model's (E T, Var T) at ℓ, fitted by minimum chi-square with a
//!   step-clustered covariance; Q is χ² with 2k − p degrees of freedom
//!   (`moments.rs`). Under fixed the mean and variance stay, under scaled they
//!   grow as ℓ and ℓ², under additive both as ℓ, under affine the mean as
//!   μ + c·ℓ and the variance stays.
//! - **distribution** (fixed, scaled, affine): each maps T at load ℓ to one
//!   base law (`T`, `T/ℓ`, `T − c·ℓ`), so the k samples of base times must
//!   share a law; the k-sample Anderson–Darling statistic A²_akN (Scholz &
//!   Stephens 1987; `ksample.rs`) measures how far apart they are, its
//!   p-value from permutations of whole steps between loads
//!   (`resample.rs`). Affine's c is the one that minimises A²_akN (a
//!   minimum-distance estimate, robust to the rare very slow times that move
//!   a mean), with a bootstrap standard error over steps. Additive has no
//!   such map (the shape of a sum changes with ℓ), so its moments speak for it.
//!
//! A model's p-value is the Bonferroni combination `min(1, 2·min(p_moments,
//! p_ad))` (additive: p_moments); it fits when p ≥ [`ALPHA`]. The ranking
//! puts the models that fit first, fewer parameters first (affine, with
//! three, contains fixed at c = 0), then by p; the rejected ones follow by
//! Q/df of the moment test, the criterion all four share. The base law of the
//! best model is the best `gcsim fit` family for its base times (additive:
//! for the load-1 times, else the log-normal with the fitted mean and
//! variance of X).
//!
//! Times within a step are correlated in real clusters (a slow step slows
//! every worker): both tests allow for it by treating steps, not times, as
//! the independent units, when every load has at least [`MIN_STEPS`] steps.
//! Persistent differences between workers (one slow machine at every load)
//! are not allowed for; `gcsim trace` shows them.

mod export;
mod ksample;
mod moments;
mod read;
mod resample;

pub use export::{LoadFitReport, LoadSummary, ModelFit};
pub use ksample::anderson_darling;
pub use read::{LoadTimes, LoadTrace, names_load_column};
pub use resample::{PERMUTATIONS, RESAMPLES};

use serde::Serialize;
use thiserror::Error;

use super::FitError;
use crate::dist::Dist;
use crate::load::LoadModel;
use crate::table::TraceFileError;
use ksample::{Merge, shift_fit};
use moments::{LoadMoments, moment_fit, variance_growth};
use resample::{Steps, affine_fit, max_unit_time};

/// The significance level below which a model is rejected.
pub const ALPHA: f64 = 0.01;
/// Steps every load needs for steps to be the units of the tests; with
/// fewer, every time is its own unit.
pub const MIN_STEPS: usize = 10;
/// Times below which a load's tests are weak (a warning).
pub(crate) const FEW_TIMES: usize = 30;

/// A load model to be tested, its parameters still to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Candidate {
    /// T = X.
    Fixed,
    /// T = ℓ·X.
    Scaled,
    /// T = X₁ + … + X_ℓ.
    Additive,
    /// T = c·ℓ + X.
    Affine,
}

impl Candidate {
    /// Every candidate, in the order ties are broken.
    pub const ALL: [Candidate; 4] = [
        Candidate::Fixed,
        Candidate::Scaled,
        Candidate::Additive,
        Candidate::Affine,
    ];

    /// The `--load-model` name.
    pub fn name(self) -> &'static str {
        match self {
            Candidate::Fixed => "fixed",
            Candidate::Scaled => "scaled",
            Candidate::Additive => "additive",
            Candidate::Affine => "affine",
        }
    }

    /// The model with `unit_time` as affine's c (ignored by the others).
    pub fn model(self, unit_time: f64) -> LoadModel {
        match self {
            Candidate::Fixed => LoadModel::Fixed,
            Candidate::Scaled => LoadModel::Scaled,
            Candidate::Additive => LoadModel::Additive,
            Candidate::Affine => LoadModel::Affine { unit_time },
        }
    }

    /// Parameters of the moment fit: X's mean and variance, and affine's c.
    pub fn parameters(self) -> usize {
        if self == Candidate::Affine { 3 } else { 2 }
    }
}

/// Why a trace with loads cannot be fitted: names the file and, where it
/// applies, the line or the load.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LoadFitError {
    /// The file cannot be read, is not text, or has a bad line.
    #[error(transparent)]
    File(#[from] TraceFileError),
    /// No header or no rows.
    #[error("{file}: the trace is empty; it needs a header `step,worker,time,load` and at least one row")]
    Empty {
        /// The file.
        file: String,
    },
    /// Every row has the same load.
    #[error(
        "{file}: every row has load {load}; fitting the load model needs times at 2 or more loads (without a load column, `gcsim fit` fits the pooled times)"
    )]
    OneLoad {
        /// The file.
        file: String,
        /// The one load.
        load: f64,
    },
    /// A load with too few times, or only one distinct time.
    #[error("{file}: load {load}: {reason}")]
    Load {
        /// The file.
        file: String,
        /// The load.
        load: f64,
        /// What is wrong.
        reason: String,
    },
    /// No continuous law could be fitted to a model's base times.
    #[error("{file}: the base law of {model}: {source}")]
    Base {
        /// The file.
        file: String,
        /// The model.
        model: &'static str,
        /// Why (boxed: the other variants are small).
        source: Box<FitError>,
    },
}

/// Times a load needs: a variance and the spread of its estimate.
const MIN_TIMES: usize = 3;

/// The warning when some load has fewer than [`MIN_STEPS`] steps, so that
/// every time counts as independent.
fn few_steps(trace: &LoadTrace) -> Option<String> {
    if trace.loads().iter().all(|l| l.steps() >= MIN_STEPS) {
        return None;
    }
    let few: Vec<String> = trace
        .loads()
        .iter()
        .filter(|l| l.steps() < MIN_STEPS)
        .map(|l| format!("load {} has {}", l.load, l.steps()))
        .collect();
    Some(format!(
        "{} steps, fewer than {MIN_STEPS}: too few to allow for correlation within a step, so every time counts \
         as independent and the p-values are too small if the workers of a step are correlated",
        few.join(", ")
    ))
}

/// Refuses a load with fewer than [`MIN_TIMES`] times or with one time only.
fn check_loads(trace: &LoadTrace) -> Result<(), LoadFitError> {
    let file = trace.file();
    let load_err = |load: f64, reason: String| LoadFitError::Load {
        file: file.to_string(),
        load,
        reason,
    };
    for l in trace.loads() {
        let n = l.times.len();
        if n < MIN_TIMES {
            return Err(load_err(
                l.load,
                format!("{n} times; every load needs at least {MIN_TIMES}"),
            ));
        }
        if l.times.iter().all(|&t| t == l.times[0]) {
            return Err(load_err(
                l.load,
                format!(
                    "every time equals {}; a load needs at least 2 distinct times",
                    l.times[0]
                ),
            ));
        }
    }
    Ok(())
}

/// The warnings on loads with too few times for the tests to be strong.
fn few_times(trace: &LoadTrace) -> Vec<String> {
    let mut warnings = Vec::new();
    if trace.loads().iter().filter(|l| l.times.len() >= FEW_TIMES).count() < 2 {
        warnings.push(format!(
            "fewer than 2 loads have {FEW_TIMES} or more times: the tests cannot tell the models apart reliably"
        ));
    }
    for l in trace.loads().iter().filter(|l| l.times.len() < FEW_TIMES) {
        warnings.push(format!(
            "load {} has {} times, fewer than {FEW_TIMES}: its tests are weak",
            l.load,
            l.times.len()
        ));
    }
    warnings
}

/// Tests every load model against `trace` and ranks them (module docs).
/// Permutations and bootstrap resamples draw from `seed`.
///
/// Cost: [`PERMUTATIONS`] sorts of the N times per model, and for affine
/// ([`PERMUTATIONS`] + [`RESAMPLES`]) × 44 merges of them, spread over
/// rayon's threads: about 3 s of CPU for N = 5000.
pub fn fit_loads(trace: &LoadTrace, seed: u64) -> Result<LoadFitReport, LoadFitError> {
    let file = trace.file();
    let load_err = |load: f64, reason: String| LoadFitError::Load {
        file: file.to_string(),
        load,
        reason,
    };
    check_loads(trace)?;
    let by_step = trace.loads().iter().all(|l| l.steps() >= MIN_STEPS);
    let mut warnings: Vec<String> = few_steps(trace).into_iter().collect();
    let ends: Vec<Vec<usize>> = trace
        .loads()
        .iter()
        .map(|l| {
            if by_step {
                l.step_ends.clone()
            } else {
                (1..=l.times.len()).collect()
            }
        })
        .collect();
    let moments: Vec<LoadMoments> = trace
        .loads()
        .iter()
        .zip(&ends)
        .map(|(l, e)| LoadMoments::new(l.load, &l.times, e))
        .collect();
    let loads: Vec<f64> = trace.loads().iter().map(|l| l.load).collect();
    let raw = Steps {
        steps: trace
            .loads()
            .iter()
            .zip(&ends)
            .map(|(l, e)| {
                let starts = std::iter::once(0).chain(e.iter().copied());
                starts.zip(e).map(|(a, &b)| l.times[a..b].to_vec()).collect()
            })
            .collect(),
        loads: loads.clone(),
    };
    let sorted = raw.sorted();
    let mut merge = Merge::default();
    let mut models = Vec::with_capacity(Candidate::ALL.len());
    for candidate in Candidate::ALL {
        let fit = moment_fit(candidate, &moments).map_err(|s| {
            load_err(
                s.0,
                "the covariance of its mean and variance is singular (too few steps, or steps too alike); \
                 measure more steps"
                    .to_string(),
            )
        })?;
        let mut row = ModelFit::new(candidate, &fit);
        match candidate {
            Candidate::Fixed | Candidate::Scaled => {
                let model = candidate.model(0.0);
                let base = raw.map(|load, t| model.base_time(load, t));
                let a2 = merge.shifted(&base.sorted(), &loads, 0.0);
                let p = base.permutation_p(a2, seed, |s, m| m.shifted(s, &loads, 0.0));
                row.set_ad(a2, p);
                row.set_base(fit_base(file, candidate, &base.pooled())?);
            }
            Candidate::Affine => {
                let (c, a2) = affine_fit(&sorted, &loads, &mut merge);
                let se = raw.bootstrap_se(seed, |s, m| affine_fit(s, &loads, m).0);
                let hi = max_unit_time(&sorted, &loads);
                let residual = raw.map(|load, t| candidate.model(c).base_time(load, t));
                let p = residual.permutation_p(a2, seed, |s, m| shift_fit(s, &loads, -c, hi - c, m).1);
                let c = super::mle::round_down(c);
                row.set_unit_time(c, se);
                row.set_ad(a2, p);
                let base = raw.map(|load, t| candidate.model(c).base_time(load, t));
                row.set_base(fit_base(file, candidate, &base.pooled())?);
            }
            Candidate::Additive => {
                let at_one = trace.loads().iter().find(|l| l.load == 1.0);
                match at_one {
                    Some(l) => row.set_base(fit_base(file, candidate, &l.times)?),
                    None => row.set_moment_base(lognormal_with(fit.mean, fit.variance)),
                }
            }
        }
        models.push(row);
    }
    warnings.extend(few_times(trace));
    Ok(LoadFitReport::new(
        trace,
        by_step,
        variance_growth(&moments),
        &moments,
        models,
        warnings,
        seed,
    ))
}

/// The best `gcsim fit` family for `times`: its `--dist` string and
/// Kolmogorov–Smirnov distance.
fn fit_base(file: &str, candidate: Candidate, times: &[f64]) -> Result<(String, f64), LoadFitError> {
    let fits = super::fit_all(times).map_err(|source| LoadFitError::Base {
        file: file.to_string(),
        model: candidate.name(),
        source: Box::new(source),
    })?;
    Ok((fits[0].dist.clone(), fits[0].ks_distance))
}

/// The log-normal law with mean `mean` and variance `variance`:
/// σ² = ln(1 + variance/mean²), μ = ln mean − σ²/2 (Johnson, Kotz &
/// Balakrishnan 1994, ch. 14 §3); none unless both are positive.
fn lognormal_with(mean: f64, variance: f64) -> Option<String> {
    if !(mean > 0.0 && variance > 0.0) {
        return None;
    }
    let s2 = (variance / (mean * mean)).ln_1p();
    let law = Dist::lognormal(super::mle::round(mean.ln() - s2 / 2.0), super::mle::round(s2.sqrt())).ok()?;
    Some(law.to_string())
}

#[cfg(test)]
mod tests;
