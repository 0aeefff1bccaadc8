//! `gcsim trace FILE`: what a measured trace says about its stragglers, and
//! the two-state straggler model fitted to it as a `--dist` string.
//!
//! Per worker: the mean time and its rank, how often the worker is among the
//! s slowest of a step, how often it stays there, and the lag-1
//! autocorrelation of its times (formulas in `stats.rs`). Trace-wide: the
//! mean cross-worker correlation and the mean autocorrelation. The model
//! (Markov-modulated slow state, Baum–Welch on log time relative to the step
//! median, bootstrap standard errors: `hmm.rs`) gives p_slow, slowdown and
//! persist = ρ; the base law is the best of [`crate::fit::fit_all`] on the
//! times of the (worker, step) pairs whose posterior slow probability is
//! below 1/2, so that a slow step's time is `slowdown` times a base draw.

use std::borrow::Cow;

use serde::Serialize;
use thiserror::Error;

use super::Trace;
use super::hmm::{self, HmmFit, NoFit};
use super::stats;
use super::{best_fit, heterogeneity, subsample};
use crate::dist::Dist;
use crate::param::{Described, Naming, Param};
use crate::progress::{Progress, Silent};

/// Steps below which the estimates are called rough.
pub(crate) const FEW_STEPS: usize = 100;

/// A mean cross-worker correlation above this is reported as step-wide slowdowns.
pub(crate) const STEP_WIDE_CORRELATION: f64 = 0.3;

/// Significant digits of p_slow, slowdown and persist in the `--dist` string.
const MODEL_DIGITS: usize = 4;

/// The largest persist written: the simulator takes ρ < 1.
const MAX_PERSIST: f64 = 0.999;

/// What the fit of the model is, in one line (also in `--help`).
pub(crate) const METHOD: &str = "two-state hidden Markov model fitted by Baum-Welch (EM) to ln(time / step median), \
     the slow state's log time shifted by ln(slowdown)";

/// Why a trace cannot be analysed as asked.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TraceAnalysisError {
    /// The number of slowest workers per step is out of range.
    #[error("{}", self.describe(&crate::param::keys))]
    S {
        /// The value given.
        value: usize,
        /// The trace's workers.
        workers: usize,
    },
}

impl Described for TraceAnalysisError {
    fn describe(&self, name: Naming) -> String {
        match self {
            TraceAnalysisError::S { value, workers } => format!(
                "{} {value} is out of range for a trace of {workers} workers; accepted: 1..{workers}",
                name(Param::S)
            ),
        }
    }
}

/// One worker's statistics: a flat row of the `gcsim trace` output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerRow {
    /// The worker, as the trace's `worker` column names it.
    pub worker: u64,
    /// Mean time over the complete steps, in the trace's unit (seconds for the shipped traces).
    pub mean: f64,
    /// Rank by mean time, 1 = slowest (ties to the lower worker).
    pub rank: usize,
    /// Share of the steps in which the worker is among the s slowest, in [0, 1].
    pub slowest_share: f64,
    /// `P(among the s slowest at t+1 | among them at t)`; empty when never among them before the last step.
    pub stay_slowest: Option<f64>,
    /// Lag-1 autocorrelation of the worker's times across steps, in [-1, 1]; empty with fewer than 3 steps or constant times.
    pub autocorrelation: Option<f64>,
    /// Share of the steps the fitted model puts in the slow state (posterior > 1/2); empty without a slow state.
    pub slow_state_share: Option<f64>,
}

/// The fitted two-state model. Every estimate is absent when the trace
/// shows no slow state; standard errors are absent with fewer than
/// [`hmm::MIN_RESAMPLED_WORKERS`] workers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StragglerModel {
    /// How the model was fitted.
    pub method: &'static str,
    /// Whether the trace shows a separable slow state.
    pub slow_state: bool,
    /// Stationary probability that a worker is slow in a step.
    pub p_slow: Option<f64>,
    /// Bootstrap standard error of `p_slow`.
    pub p_slow_se: Option<f64>,
    /// Factor on a slow step's time (≥ 1).
    pub slowdown: Option<f64>,
    /// Bootstrap standard error of `slowdown`.
    pub slowdown_se: Option<f64>,
    /// ρ = 1 − P(N→S) − P(S→N), the lag-1 autocorrelation of the slow state (may fall below 0; `--dist` takes 0 ≤ ρ < 1).
    pub persist: Option<f64>,
    /// Bootstrap standard error of `persist`.
    pub persist_se: Option<f64>,
    /// Ashman's separation δ/σ of the two states' log times (a slow state needs ≥ 2).
    pub separation: Option<f64>,
    /// Standard deviation σ of the log time relative to the step median within a state.
    pub log_sigma: Option<f64>,
    /// How the standard errors were computed.
    pub standard_errors: String,
    /// The base law fitted to the normal-state times, as a `--dist` string.
    pub base: Option<String>,
    /// Normal-state times the base law was fitted to.
    pub base_times: usize,
    /// Kolmogorov–Smirnov distance of the base law to those times, in [0, 1].
    pub base_ks_distance: Option<f64>,
}

/// The analysis of one trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceReport {
    /// The trace file.
    pub file: String,
    /// Workers in the trace.
    pub workers: usize,
    /// Complete steps in the trace.
    pub steps: usize,
    /// The s of the slowest-s statistics.
    pub s: usize,
    /// Where s came from: `given`, or `default max(1, n/10)`.
    pub s_source: &'static str,
    /// One row per worker, in the trace's worker order.
    pub per_worker: Vec<WorkerRow>,
    /// Mean over pairs of workers of the Pearson correlation of their times across steps; empty when no pair defines one.
    pub mean_cross_correlation: Option<f64>,
    /// Pairs of workers behind `mean_cross_correlation`.
    pub correlated_pairs: usize,
    /// Mean over workers of the lag-1 autocorrelation; empty when no worker defines one.
    pub mean_autocorrelation: Option<f64>,
    /// The fitted two-state model.
    pub model: StragglerModel,
    /// The fitted law as a `--dist` string (base law, then p_slow, slowdown, persist); empty when no law could be fitted.
    pub fitted: Option<String>,
    /// Cautions about the result.
    pub warnings: Vec<String>,
    /// What is absent and why, and what was dropped.
    pub notes: Vec<String>,
}

/// `x` rounded to `digits` significant digits.
fn round_to(x: f64, digits: usize) -> f64 {
    format!("{:.*e}", digits - 1, x).parse().unwrap_or(x)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

impl TraceReport {
    /// Analyses `trace` with the s slowest workers per step (`None`: the
    /// default max(1, n/10)), the bootstrap drawing from `seed`.
    ///
    /// Cost: O(n²·T) for the cross-worker correlation, and about 200
    /// Baum–Welch fits of O(min(n·T, 32 768)) per iteration for the
    /// standard errors.
    pub fn new(trace: &Trace, s: Option<usize>, seed: u64) -> Result<Self, TraceAnalysisError> {
        Self::with_progress(trace, s, seed, &Silent)
    }

    /// [`TraceReport::new`], telling `progress` of each of the model's
    /// [`fits`](Self::fits) as it ends.
    pub fn with_progress(
        trace: &Trace,
        s: Option<usize>,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<Self, TraceAnalysisError> {
        let (n, steps) = (trace.workers(), trace.steps());
        let (s, s_source) = match s {
            Some(v) if v == 0 || v > n => return Err(TraceAnalysisError::S { value: v, workers: n }),
            Some(v) => (v, "given"),
            None => ((n / 10).max(1), "default max(1, n/10)"),
        };
        let mut notes: Vec<String> = trace.dropped_note().into_iter().collect();
        let mut warnings = Vec::new();
        if steps < FEW_STEPS {
            warnings.push(format!(
                "estimates from {steps} steps are rough: persistence and p_slow rest on few transitions \
                 per worker; a trace of {FEW_STEPS} or more steps gives firmer ones"
            ));
        }

        let series = stats::worker_major(trace);
        // The statistics beside the model's fits: each takes the other's
        // idle threads.
        let mut model_notes = Vec::new();
        let (statistics, (model, shares, fitted)) = rayon::join(
            || stats::Statistics::new(trace, &series, s),
            || fit_model(trace, &series, seed, progress, &mut model_notes),
        );
        let stats::Statistics {
            means,
            ranks,
            slowest,
            autocorrelations,
            cross_correlation: (mean_cross_correlation, correlated_pairs),
        } = statistics;
        let defined: Vec<f64> = autocorrelations.iter().flatten().copied().collect();
        let mean_autocorrelation = (!defined.is_empty()).then(|| mean(&defined));
        if steps < stats::MIN_STEPS {
            notes.push(format!(
                "{steps} steps: correlations, autocorrelations and the slow-state model need at least {} steps",
                stats::MIN_STEPS
            ));
        } else {
            let constant = autocorrelations.iter().filter(|a| a.is_none()).count();
            if constant > 0 {
                notes.push(format!(
                    "{constant} of the {n} workers have the same time in every step: their autocorrelation \
                     and their correlations with others are undefined and left out"
                ));
            }
        }
        if n < 2 {
            notes.push("one worker: there is no cross-worker correlation".into());
        }
        if let Some(c) = mean_cross_correlation
            && c > STEP_WIDE_CORRELATION
        {
            warnings.push(format!(
                "the mean cross-worker correlation is {c:.2}: whole steps are slower or faster for every \
                 worker; the fitted law draws workers independently and leaves this out (the model is \
                 fitted relative to each step's median)"
            ));
        }

        notes.append(&mut model_notes);

        let per_worker = (0..n)
            .map(|w| WorkerRow {
                worker: trace.worker_ids()[w],
                mean: means[w],
                rank: ranks[w],
                slowest_share: slowest[w].iter().filter(|&&b| b).count() as f64 / steps as f64,
                stay_slowest: stats::stay_probability(&slowest[w]),
                autocorrelation: autocorrelations[w],
                slow_state_share: shares.as_ref().map(|s| s[w]),
            })
            .collect();

        let mut report = Self {
            file: trace.file().to_string(),
            workers: n,
            steps,
            s,
            s_source,
            per_worker,
            mean_cross_correlation,
            correlated_pairs,
            mean_autocorrelation,
            model,
            fitted,
            warnings,
            notes,
        };
        if let Some(w) = heterogeneity_warning(&report, &series, trace) {
            report.warnings.push(w);
        }
        Ok(report)
    }

    /// The Baum–Welch fits an analysis runs at most, for a progress bar:
    /// three starts and the bootstrap's refits.
    pub fn fits() -> u64 {
        3 + hmm::RESAMPLES as u64
    }

    /// The closing line of the table: `fitted: --dist <string>`.
    pub fn fitted_line(&self) -> String {
        match &self.fitted {
            Some(d) => format!("fitted: --dist {d}"),
            None => "fitted: none (see the notes)".into(),
        }
    }
}

/// The warning of workers that differ rather than straggle, if any
/// (`heterogeneity.rs`), from the report's rows and the times `series`
/// holds worker by worker.
fn heterogeneity_warning(report: &TraceReport, series: &[Vec<f64>], trace: &Trace) -> Option<String> {
    let workers: Vec<heterogeneity::Worker> = report
        .per_worker
        .iter()
        .zip(series)
        .zip(trace.worker_ids())
        .map(|((row, times), &id)| heterogeneity::Worker {
            id,
            mean: row.mean,
            autocorrelation: row.autocorrelation,
            slow_state_share: row.slow_state_share,
            times,
        })
        .collect();
    heterogeneity::warning(report.steps, &workers)
}

/// Fits the two-state model (`hmm.rs`) and the base law to `trace`, whose
/// times `series` holds worker by worker: the model, each worker's share of
/// slow-state steps (when there is a slow state) and the fitted `--dist`.
fn fit_model(
    trace: &Trace,
    series: &[Vec<f64>],
    seed: u64,
    progress: &dyn Progress,
    notes: &mut Vec<String>,
) -> (StragglerModel, Option<Vec<f64>>, Option<String>) {
    let (n, steps) = (trace.workers(), trace.steps());
    let relative = hmm::log_relative_times(trace, series);
    let blocks = subsample::fit_blocks(n, steps);
    let fitted_series: Vec<&[f64]> = relative
        .iter()
        .flat_map(|r| blocks.iter().map(move |b| &r[b.clone()]))
        .collect();
    notes.extend(subsample_note(&blocks, steps));
    let fitted_hmm = hmm::fit(&fitted_series, progress);
    let slow = match &fitted_hmm {
        Ok(f) if f.has_slow_state() => Some(f),
        _ => None,
    };
    let posterior = slow.map(|f| hmm::posterior_slow(&f.model, &relative));
    match (&fitted_hmm, slow) {
        (Err(NoFit::TooFewSteps), _) => {}
        (Err(NoFit::Constant), _) => {
            notes.push("every time equals its step's median: there is no slow state to fit".into())
        }
        (Ok(f), None) => notes.push(format!(
            "no slow state: the best two-state fit (slowdown {:.3}, p_slow {:.3}) is rejected: {}; \
             p_slow, slowdown and persist are absent and the fitted law, fitted to every time, has \
             no stragglers",
            f.model.slowdown(),
            f.model.p_slow,
            f.no_slow_state().unwrap_or_default()
        )),
        (Ok(_), Some(_)) => {}
    }

    let (base_times, base, errors) = base_and_errors(trace, posterior.as_ref(), notes, || {
        slow.and_then(|f| hmm::bootstrap(&f.model, &fitted_series, blocks.len(), seed, progress))
    });
    let shares: Option<Vec<f64>> = posterior.as_ref().map(|post| {
        post.iter()
            .map(|p| p.iter().filter(|&&x| x > 0.5).count() as f64 / steps as f64)
            .collect()
    });

    let model = StragglerModel {
        method: METHOD,
        slow_state: slow.is_some(),
        p_slow: slow.map(|f| f.model.p_slow),
        p_slow_se: errors.map(|e| e.p_slow),
        slowdown: slow.map(|f| f.model.slowdown()),
        slowdown_se: errors.map(|e| e.slowdown),
        persist: slow.map(|f| f.model.rho),
        persist_se: errors.map(|e| e.rho),
        separation: fitted_hmm.as_ref().ok().map(|f| f.model.separation()),
        log_sigma: fitted_hmm.as_ref().ok().map(|f| f.model.sigma),
        standard_errors: match errors {
            Some(_) => format!("bootstrap over workers: {} resamples, seed {seed}", hmm::RESAMPLES),
            None => "none".into(),
        },
        base: base.as_ref().ok().map(|b| b.dist.clone()),
        base_times,
        base_ks_distance: base.as_ref().ok().map(|b| b.ks_distance),
    };
    let fitted = base.ok().map(|b| fitted_dist(&b.law, slow, notes));
    (model, shares, fitted)
}

/// The note saying which steps the model is fitted on, when `blocks` (from
/// [`subsample::fit_blocks`]) leave out any of the trace's `steps`.
fn subsample_note(blocks: &[std::ops::Range<usize>], steps: usize) -> Option<String> {
    if blocks.len() == 1 && blocks[0].len() == steps {
        return None;
    }
    let kept: usize = blocks.iter().map(|b| b.len()).sum();
    Some(format!(
        "the slow-state model is fitted on {kept} of the {steps} steps ({} evenly spaced blocks of {} \
         consecutive steps, at most {} times): p_slow, slowdown, persist and their standard errors \
         are those of that subsample; slow_state and the base law read every step",
        blocks.len(),
        blocks[0].len(),
        subsample::MAX_FIT_TIMES
    ))
}

/// The base law fitted to the normal-state times (every time without a
/// slow state, `posterior` None) and their number, and the model's standard
/// errors from `bootstrap` (None with too few workers), with a note for
/// each that is absent. The two run at once: the base law's fits and the
/// bootstrap's refits share rayon's threads.
fn base_and_errors(
    trace: &Trace,
    posterior: Option<&Vec<Vec<f64>>>,
    notes: &mut Vec<String>,
    bootstrap: impl FnOnce() -> Option<hmm::StandardErrors> + Send,
) -> (
    usize,
    Result<crate::fit::Fit, crate::fit::FitError>,
    Option<hmm::StandardErrors>,
) {
    let n = trace.workers();
    // Taken step by step: the fit sorts the times, so their order is not
    // part of it.
    let normal_times: Cow<[f64]> = match posterior {
        Some(post) => (trace.all().chunks_exact(n).enumerate())
            .flat_map(|(t, step)| step.iter().zip(post).filter(move |(_, p)| p[t] < 0.5).map(|(x, _)| *x))
            .collect(),
        None => Cow::Borrowed(trace.all()),
    };
    let resampled = n >= hmm::MIN_RESAMPLED_WORKERS;
    let (base, errors) = rayon::join(
        || best_fit(&normal_times),
        || if resampled { bootstrap() } else { None },
    );
    if let Err(e) = &base {
        notes.push(format!("no base law: {e}"));
    }
    if posterior.is_some() && !resampled {
        notes.push(format!(
            "no standard errors: they resample workers, and {n} are fewer than {}",
            hmm::MIN_RESAMPLED_WORKERS
        ));
    }
    (normal_times.len(), base, errors)
}

/// The `--dist` string of the base law with the slow state: p_slow and
/// slowdown to [`MODEL_DIGITS`] significant digits, and persist where ρ is
/// positive (capped below 1, with a note).
fn fitted_dist(base: &Dist, slow: Option<&HmmFit>, notes: &mut Vec<String>) -> String {
    let Some(f) = slow else {
        return base.to_string();
    };
    let (p, slowdown, rho) = (f.model.p_slow, f.model.slowdown(), f.model.rho);
    let with = base
        .with_stragglers(round_to(p, MODEL_DIGITS), round_to(slowdown, MODEL_DIGITS).max(1.0))
        .unwrap_or(*base);
    let mut text = with.to_string();
    let persist = round_to(rho, MODEL_DIGITS);
    if persist >= 1.0 || rho > MAX_PERSIST {
        notes.push(format!(
            "persist {rho:.6} is written as {MAX_PERSIST}, the simulator takes persist < 1; \
             states that never change within the trace suggest different workers, not a chain"
        ));
        text.push_str(&format!(",persist={MAX_PERSIST}"));
    } else if persist > 0.0 {
        text.push_str(&format!(",persist={persist}"));
    } else if persist < 0.0 {
        notes.push(format!(
            "persist {rho:.4} is below 0 (slow steps alternate): outside the model, left out of the --dist"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::hmm::Hmm;

    fn fit_with(p_slow: f64, rho: f64) -> HmmFit {
        HmmFit {
            model: Hmm {
                mu: 0.0,
                sigma: 0.1,
                shift: 8f64.ln(),
                p_slow,
                rho,
            },
            log_likelihood: 0.0,
            one_state_log_likelihood: 0.0,
            observations: 100,
        }
    }

    #[test]
    fn the_dist_string_carries_persist_only_where_the_model_takes_it() {
        let base = Dist::lognormal(0.5, 0.25).unwrap();
        let mut notes = Vec::new();
        assert_eq!(fitted_dist(&base, None, &mut notes), "lognormal:mu=0.5,sigma=0.25");
        let text = fitted_dist(&base, Some(&fit_with(0.050_004_9, 0.912_345)), &mut notes);
        assert_eq!(
            text,
            "lognormal:mu=0.5,sigma=0.25,p_slow=0.05,slowdown=8,persist=0.9123"
        );
        assert!(notes.is_empty(), "{notes:?}");
        let text = fitted_dist(&base, Some(&fit_with(0.05, 0.0)), &mut notes);
        assert_eq!(text, "lognormal:mu=0.5,sigma=0.25,p_slow=0.05,slowdown=8");
        assert!(notes.is_empty(), "{notes:?}");
        let text = fitted_dist(&base, Some(&fit_with(0.05, -0.04)), &mut notes);
        assert!(!text.contains("persist"), "{text}");
        assert!(notes.pop().unwrap().contains("below 0"));
        let text = fitted_dist(&base, Some(&fit_with(0.25, 1.0)), &mut notes);
        assert!(text.ends_with(",persist=0.999"), "{text}");
        assert!(notes.pop().unwrap().contains("written as 0.999"));
    }

    #[test]
    fn s_must_lie_between_1_and_the_workers() {
        let trace = Trace::parse("t.csv", "step,worker,time\n0,0,1\n0,1,2\n1,0,1\n1,1,3\n").unwrap();
        for s in [0, 3] {
            let e = TraceReport::new(&trace, Some(s), 0).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("s {s} is out of range for a trace of 2 workers; accepted: 1..2")
            );
        }
        let r = TraceReport::new(&trace, Some(2), 0).unwrap();
        assert_eq!((r.s, r.s_source), (2, "given"));
        let r = TraceReport::new(&trace, None, 0).unwrap();
        assert_eq!((r.s, r.s_source), (1, "default max(1, n/10)"));
    }

    #[test]
    fn the_subsample_note_reads_as_one_sentence() {
        assert_eq!(subsample_note(&subsample::fit_blocks(8, 500), 500), None);
        let note = subsample_note(&subsample::fit_blocks(64, 44_406), 44_406).unwrap();
        assert!(!note.contains("  "), "a run of spaces: {note:?}");
        assert!(
            note.starts_with("the slow-state model is fitted on 512 of the 44406 steps (2 evenly spaced blocks of 256 consecutive steps, at most 32768 times): "),
            "{note}"
        );
    }
}
