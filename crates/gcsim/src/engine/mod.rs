//! The Monte Carlo engine: trials in fixed-size chunks on all cores.
//!
//! Trials are split into chunks of [`CHUNK`]. Chunks run in parallel; their
//! results are merged in chunk-index order (power sums) or by integer
//! addition (quantile tallies), so the output is the same bytes for any
//! thread count. The first [`PILOT_CHUNKS`] chunks are the pilot: their values
//! are kept, fix each configuration's reference value and quantile windows
//! (see [`crate::stats::quantile`]), and are then counted like any other
//! chunk. A run no longer than the pilot keeps every value and reports exact
//! sample quantiles. A run of at least [`LAW_WINDOWS_AFTER`] pilots whose
//! configurations all have an exact law takes its reference values and
//! windows from that law instead, and has no pilot. Where every trial's
//! values are one of a replayed trace's steps' rows
//! ([`trial::StepRows`]), chunks and the pilot are counted by their
//! trials' steps, with the same results (see `pass/steps.rs`, `pilot.rs`).

pub mod approx;
pub mod bootstrap;
pub mod collective;
mod kernels;
pub mod pairing;
pub mod pass;
mod pilot;
pub mod pipelines;
mod runner;
pub mod sort;
mod started;
mod targets;
pub mod timeline;
pub mod trial;

use std::rc::Rc;

use rayon::prelude::*;

use crate::analytic::ExactLaw;
use crate::scheme::Scheme;
use crate::stats::quantile::{self, Tally, Verdict, Window};
use crate::stats::{MeanEstimate, Moments, QUANTILES};
use crate::study::{Decoder, Study, Workers};
use kernels::transpose_rows4;
use pass::{Counts, LogBins, Pass, PassTotals, StepTable, Watch};
use pilot::{Pilot, PilotColumn};
pub use targets::{Targets, interval_bounded, interval_ranks};
pub use trial::{
    RulePath, Sampling, Scratch, TrialPlan, async_reads_order_statistics, bisection_apply, order_statistics_apply,
    spacings_apply,
};

/// Trials per chunk.
pub const CHUNK: u64 = 8192;
/// Chunks in the pilot (65 536 trials), fewer where the pilot's values of
/// every configuration would exceed [`PILOT_BYTES`].
pub const PILOT_CHUNKS: u64 = 8;
/// Memory the pilot's stored values may take.
pub const PILOT_BYTES: u64 = 128 << 20;
/// Chunks per block (2²⁰ trials). Power sums fold in chunk order within a
/// block, then in block order: the same floating-point sums whether the
/// blocks run in one process or in shards.
pub const BLOCK_CHUNKS: u64 = 128;
/// Trials simulated between two calls of the accumulator.
const BATCH: usize = 64;
/// Passes over the trials at most (the first plus refinements).
const MAX_PASSES: u32 = 8;

pub use crate::progress::{Progress, Silent};

/// The statistics of one configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Trials.
    pub trials: u64,
    /// Mean with its standard error and 95% interval.
    pub mean: MeanEstimate,
    /// p50, p90, p99 and p999 (see [`QUANTILES`]).
    pub quantiles: [f64; 4],
    /// A 95% distribution-free interval for each quantile: the order
    /// statistics at levels q ∓ 1.96·√(q(1−q)/N) (binomial normal approximation).
    pub quantile_ci95: [(f64, f64); 4],
    /// The empirical survival function `(t, P(T > t))` on log-spaced points,
    /// if [`Options::survival_points`] asked for it.
    pub survival: Vec<(f64, f64)>,
    /// The fraction of trials finished by [`Options::deadline`], if set.
    pub within_deadline: Option<f64>,
    /// Trials whose iteration time is infinite: under the rank decoder, the
    /// trials in which even every worker's message did not decode.
    pub infinite: u64,
}

/// What a simulation computes beyond the summary statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Options {
    /// Points of the empirical survival function per configuration (0: none).
    pub survival_points: usize,
    /// A deadline T: count the trials that finish by T (for `plan`).
    pub deadline: Option<f64>,
}

impl Summary {
    /// From the power sums about `reference` and the values at the
    /// [`Targets::levels`].
    fn new(trials: u64, moments: &Moments, reference: f64, v: Targets) -> Self {
        Self {
            trials,
            mean: moments.summarize(reference),
            infinite: moments.infinite(),
            quantiles: std::array::from_fn(|i| v.quantile(i)),
            quantile_ci95: std::array::from_fn(|i| v.interval(i)),
            survival: Vec::new(),
            within_deadline: None,
        }
    }
}

/// The statistics of every configuration of a study, and of its baseline.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// One summary per scheme of the study, in order.
    pub configs: Vec<Summary>,
    /// The uncoded baseline on the same draws.
    pub baseline: Summary,
    /// Passes over the trials that the quantiles needed.
    pub passes: u32,
    /// Each configuration's correlations with the baseline on the same
    /// draws, for the paired speedup intervals (see [`pairing`]).
    pub pairing: Vec<pairing::Pairing>,
    /// A hybrid-parallel job's pipeline sums over its first trials, where
    /// this run simulated them (see [`pipelines::pipeline_shares_of`]).
    pub pipelines: Option<pipelines::PipelineSums>,
    /// The strategies' tallies per slot over their first trials, where
    /// this run simulated them and they count as the tallies' own walk
    /// would (see `approx::tallies_in_pass`).
    pub tallies: Option<Vec<u64>>,
}

/// Equal statistics, whether or not a run counted the strategies' tallies
/// on the way: where it did, they are the tallies' own walk's (see
/// `approx::tallies_in_pass`), which a run that did not count them makes
/// when its rows are written.
impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        self.configs == other.configs
            && self.baseline == other.baseline
            && self.passes == other.passes
            && self.pairing == other.pairing
            && self.pipelines == other.pipelines
    }
}

/// Simulates `study` with the fast rule evaluations.
pub fn simulate(study: &Study, progress: &dyn Progress) -> Outcome {
    simulate_with(&TrialPlan::new(study), study, progress)
}

/// Simulates `study` with a given trial plan.
pub fn simulate_with(plan: &TrialPlan, study: &Study, progress: &dyn Progress) -> Outcome {
    simulate_full(plan, study, progress, &Options::default())
}

/// Simulates `study` with a given trial plan and options.
pub fn simulate_full(plan: &TrialPlan, study: &Study, progress: &dyn Progress, options: &Options) -> Outcome {
    let run = Started::new(plan, study, options, progress);
    let outcome = run.outcome_of_all(progress);
    progress.finish();
    outcome
}

/// The outcome of `study` from every trial's values, simulated before
/// (by the shards of a run that keep values): `rows` holds trial t's
/// values of every slot at `rows[t·slots..(t+1)·slots]`. The same bytes
/// as [`simulate`]: the engine reads these values where it would have
/// simulated them.
pub fn outcome_of_values(study: &Study, rows: &[f64], progress: &dyn Progress) -> Outcome {
    let plan = TrialPlan::new(study);
    let chunks = runner::chunk_layout(rows, plan.slots(), study.trials());
    let run = Started::with_values(&plan, study, &Options::default(), progress, Some(&chunks));
    let outcome = run.outcome_of_all(progress);
    progress.finish();
    outcome
}

/// The number of blocks of [`BLOCK_CHUNKS`] chunks (2²⁰ trials) in a run of `trials`.
pub(crate) fn block_count(trials: u64) -> u64 {
    trials.div_ceil(CHUNK).div_ceil(BLOCK_CHUNKS)
}

/// The number of chunks of [`CHUNK`] trials in a run of `trials`.
pub(crate) fn chunk_count(trials: u64) -> u64 {
    trials.div_ceil(CHUNK)
}

/// The number of trials in chunk `chunk` of a run of `trials`.
pub(crate) fn chunk_trials(trials: u64, chunk: u64) -> u64 {
    let first = |c: u64| c.saturating_mul(CHUNK).min(trials);
    first(chunk.saturating_add(1)) - first(chunk)
}

/// The number of trials in block `block` of a run of `trials`.
pub(crate) fn block_trials(trials: u64, block: u64) -> u64 {
    let first = |b: u64| b.saturating_mul(BLOCK_CHUNKS * CHUNK).min(trials);
    first(block.saturating_add(1)) - first(block)
}

/// A run whose pilot is done: what every path (whole run, shard, merge) shares.
pub(crate) struct Started<'a> {
    pub(crate) runner: Runner<'a>,
    pilot: Pilot,
    /// The pairings on the pilot's values, found with its columns (none
    /// where it keeps steps, or has no values).
    pilot_pairings: Option<Vec<pairing::Pairing>>,
    columns: Vec<PilotColumn>,
    refs: Vec<f64>,
    survival: Option<LogBins>,
    deadline: Option<f64>,
    /// Whether worker times come from a finite set (trace or replay): then
    /// the first pass also keeps each bin's value range, so that a
    /// percentile on an atom resolves without a refinement pass.
    discrete: bool,
    /// Where the run has no pilot: the values of its first
    /// [`pairing::CHUNKS`] chunks, kept by the first pass as it simulates
    /// them, for the pairings (see [`Started::pairing`]).
    kept: std::sync::Mutex<Vec<Option<Vec<f64>>>>,
}

/// The first pass's totals, each whole block's power sums, and each chunk's
/// of the blocks it covered only in part.
pub(crate) struct FirstPass {
    pub(crate) totals: PassTotals,
    pub(crate) blocks: Vec<(u64, Vec<Moments>)>,
    pub(crate) chunks: Vec<(u64, Vec<Moments>)>,
}

/// Runs at least this many times the pilot place their percentile windows
/// by the exact law where one exists: a window from the pilot must allow for
/// the pilot's sampling error, √(N/p) times the run's, while the exact law
/// needs room only for the run's own. Fewer values fall inside, and fewer
/// bins are kept. The quantiles are still the run's sample quantiles: a
/// window that misses its rank is refined like any other.
pub const LAW_WINDOWS_AFTER: u64 = 8;

/// Whether every slot's simulated value has the law
/// [`Study::exact_law`] gives: no transfer or decode time, the threshold decoder.
fn values_follow_the_exact_law(study: &Study) -> bool {
    !study.comm().transfers() && study.comm().decode_time == 0.0 && study.decoder() == Decoder::Threshold
}

/// The four first-pass windows of a slot from its exact law, if the law
/// places them (finite, ascending and disjoint).
fn law_windows(law: &ExactLaw, total: u64) -> Option<[Window; 4]> {
    let windows: [Window; 4] = std::array::from_fn(|i| {
        let q = QUANTILES[i];
        let half = quantile::law_half_width(q, total);
        let (lo, hi) = (law.quantile((q - half).max(0.0)), law.quantile((q + half).min(1.0)));
        quantile::window_over(lo, hi, q, half, total)
    });
    let finite = windows
        .iter()
        .all(|w| w.lo.is_finite() && w.hi.is_finite() && w.lo < w.hi);
    let disjoint = windows.windows(2).all(|p| p[0].hi <= p[1].lo);
    (finite && disjoint).then_some(windows)
}

/// Log bins spanning every pilot value with room on both sides.
fn survival_bins(columns: &[PilotColumn], points: usize) -> LogBins {
    let lo = columns.iter().map(|c| c.span.0).fold(f64::INFINITY, f64::min);
    let hi = columns.iter().map(|c| c.span.1).fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo / 2.0, hi * 8.0)
    } else {
        (1e-3, 1e3)
    };
    LogBins::new(lo, hi, points)
}

pub(crate) struct Runner<'a> {
    plan: &'a TrialPlan,
    seed: u64,
    total: u64,
    /// Every chunk's values, laid out as [`Runner::run_chunk`] lays them
    /// out, where they were simulated elsewhere (the shards of a run whose
    /// values are kept): read, never simulated.
    given: Option<&'a [Vec<f64>]>,
    /// A hybrid-parallel job's pipeline sums over its first trials
    /// ([`pipelines::pipeline_trials`]), collected as chunk 0 is simulated.
    pipelines: std::sync::OnceLock<pipelines::PipelineSums>,
    /// The trials whose strategies' tallies the pass counts
    /// ([`approx::tallies_in_pass`]; 0: none).
    tally_trials: u64,
    /// Per chunk holding some of those trials, their tallies per slot, once
    /// it is simulated.
    tallies: Vec<std::sync::OnceLock<Vec<u64>>>,
}
