// Longer than 600 lines because the run's stages (pilot, passes,
// refinement) and the runner that simulates chunks share private state.

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
mod kernels;
pub mod pairing;
pub mod pass;
mod pilot;
pub mod sort;
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
pub use targets::Targets;
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

/// Observer of a run's progress, called once per chunk, never per trial
/// (criterion's `Report` pattern). Every method has a no-op default.
pub trait Progress: Sync {
    /// A pass over `trials` trials begins (pass 1 is the main run).
    fn pass(&self, _pass: u32, _trials: u64) {}
    /// `trials` more trials are done.
    fn advance(&self, _trials: u64) {}
    /// The run is over.
    fn finish(&self) {}
}

/// A [`Progress`] that shows nothing.
pub struct Silent;

impl Progress for Silent {}

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
#[derive(Debug, Clone, PartialEq)]
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
    let outcome = if run.pilot_is_whole_run() {
        run.whole_run_outcome(progress)
    } else {
        let first = run.first_pass(0..run.runner.blocks(), progress);
        run.finish(first.totals, progress)
    };
    progress.finish();
    outcome
}

/// The number of blocks of [`BLOCK_CHUNKS`] chunks (2²⁰ trials) in a run of `trials`.
pub fn block_count(trials: u64) -> u64 {
    trials.div_ceil(CHUNK).div_ceil(BLOCK_CHUNKS)
}

/// The number of trials in block `block` of a run of `trials`.
pub fn block_trials(trials: u64, block: u64) -> u64 {
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

/// The first pass's totals, and each block's power sums.
pub(crate) struct FirstPass {
    pub(crate) totals: PassTotals,
    pub(crate) blocks: Vec<(u64, Vec<Moments>)>,
}

impl<'a> Started<'a> {
    pub(crate) fn new(plan: &'a TrialPlan, study: &Study, options: &Options, progress: &dyn Progress) -> Self {
        let runner = Runner {
            plan,
            seed: study.seed(),
            total: study.trials(),
        };
        progress.pass(1, runner.total);
        let slots = plan.slots();
        let pilot_trials = runner.pilot_chunks() * CHUNK;
        // Windows from the exact law, where it places them (see LAW_WINDOWS_AFTER).
        let laws: Vec<Option<(f64, [Window; 4])>> =
            if runner.total >= LAW_WINDOWS_AFTER * pilot_trials && values_follow_the_exact_law(study) {
                let baseline = study.baseline();
                let schemes: Vec<&Scheme> = study.schemes().iter().chain(std::iter::once(&baseline)).collect();
                schemes
                    .par_iter()
                    .map(|s| {
                        let law = study.exact_law(s)?;
                        let median = law.quantile(0.5);
                        Some((
                            if median.is_finite() { median } else { 0.0 },
                            law_windows(&law, runner.total)?,
                        ))
                    })
                    .collect()
            } else {
                vec![None; slots]
            };
        // Where every slot has them and no survival curve is asked for, the
        // pilot has nothing left to decide: the run goes straight to its pass.
        let pilot = if laws.iter().all(Option::is_some) && options.survival_points == 0 {
            Pilot::Values(Vec::new())
        } else {
            runner.pilot(progress)
        };
        let trials = match &pilot {
            // Each stored batch holds a slot's values contiguously.
            Pilot::Values(chunks) => chunks.iter().map(|values| values.len() / slots).sum(),
            Pilot::Steps(chunks) => chunks.iter().map(Vec::len).sum(),
        };
        let step_counts = match (&pilot, plan.step_rows()) {
            (Pilot::Steps(chunks), Some(rows)) => {
                Some((rows, pilot::step_counts(rows, chunks.iter().flatten().copied())))
            }
            _ => None,
        };
        // Slot j's pilot values in trial order.
        let column_of = |j: usize, values: &mut Vec<f64>| {
            values.clear();
            values.reserve(trials);
            for (c, stored) in pilot.values().iter().enumerate() {
                runner.stored_batches(c as u64, stored, |b, count| {
                    values.extend_from_slice(&b[j * count..(j + 1) * count]);
                });
            }
        };
        // The baseline's column and p99, for the pairings on the pilot.
        let baseline = (!pilot.values().is_empty()).then(|| {
            let mut u = Vec::new();
            column_of(slots - 1, &mut u);
            let mut kept = u.clone();
            let (_, &mut q, _) = kept.select_nth_unstable_by(pairing::p99_rank(trials), f64::total_cmp);
            (u, q)
        });
        let (columns, pairings): (Vec<PilotColumn>, Vec<Option<pairing::Pairing>>) = laws
            .into_par_iter()
            .enumerate()
            // Two column buffers per thread, reused slot after slot: fresh
            // memory for every slot's copies costs more in page faults than
            // the selection.
            .map_init(
                Default::default,
                |(values, kept): &mut (Vec<f64>, Vec<f64>), (j, law)| {
                    if pilot.is_empty()
                        && let Some((reference, windows)) = law
                    {
                        let column = PilotColumn {
                            reference,
                            sample_quantiles: Targets::UNKNOWN,
                            windows,
                            span: (f64::NAN, f64::NAN),
                        };
                        return (column, None);
                    }
                    let (mut column, pairing) = match (&step_counts, &baseline) {
                        (Some((rows, counts)), _) => (PilotColumn::of_steps(rows, j, counts, runner.total), None),
                        (None, Some((u, qu))) => {
                            // The column in trial order for its pairing with the
                            // baseline; a copy to select its ranks and its p99 in.
                            column_of(j, values);
                            kept.clear();
                            kept.extend_from_slice(values);
                            let (column, q) = PilotColumn::with_rank(kept, runner.total, pairing::p99_rank(trials));
                            let pairing =
                                (j + 1 < slots).then(|| pairing::pairing_of((values, Some(q)), (u, Some(*qu))));
                            (column, pairing)
                        }
                        (None, None) => unreachable!("a pilot of values has a baseline column"),
                    };
                    if let Some((reference, windows)) = law {
                        // As without a pilot, so that asking for a survival
                        // curve does not change a bit of the statistics.
                        column.reference = reference;
                        column.windows = windows;
                    }
                    (column, pairing)
                },
            )
            .unzip();
        // Every configuration's pairing, where the pilot's values gave them.
        let pilot_pairings = baseline
            .is_some()
            .then(|| pairings.into_iter().take(slots - 1).flatten().collect());
        let refs = columns.iter().map(|c| c.reference).collect();
        let survival = (options.survival_points > 0).then(|| survival_bins(&columns, options.survival_points));
        Self {
            runner,
            pilot,
            pilot_pairings,
            columns,
            refs,
            survival,
            deadline: options.deadline,
            discrete: matches!(study.workers(), Workers::Trace(_) | Workers::Replay(_)),
            kept: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Where the pairings will need the run's first [`pairing::CHUNKS`]
    /// chunks (it has no pilot of values), their places, for the first
    /// pass to keep them in.
    fn keep(&self) -> Option<&std::sync::Mutex<Vec<Option<Vec<f64>>>>> {
        if self.runner.plan.step_rows().is_some() || self.pilot_pairings.is_some() {
            return None;
        }
        let mut kept = self.kept.lock().expect("no panic while keeping chunks");
        if kept.is_empty() {
            kept.resize(self.runner.pairing_chunks() as usize, None);
        }
        Some(&self.kept)
    }

    /// Whether the pilot is the whole run (its sample quantiles are the run's).
    pub(crate) fn pilot_is_whole_run(&self) -> bool {
        self.pilot.chunks() as u64 == self.runner.chunks()
    }

    pub(crate) fn whole_run_outcome(&self, progress: &dyn Progress) -> Outcome {
        let pass =
            Pass::new(&self.refs, Vec::new(), self.runner.plan.slots(), self.survival).with_deadline(self.deadline);
        let totals = self
            .runner
            .pass(&pass, self.pilot.values(), 0..self.runner.blocks(), None, progress)
            .totals;
        let summaries = self
            .columns
            .iter()
            .zip(&totals.moments)
            .map(|(c, m)| Summary::new(self.runner.total, m, c.reference, c.sample_quantiles))
            .collect();
        self.outcome(summaries, 1, &totals)
    }

    pub(crate) fn first_pass_spec(&self) -> Pass<'_> {
        let mut watches = Vec::new();
        for (slot, c) in self.columns.iter().enumerate() {
            for window in c.windows {
                watches.push(Watch { slot, window });
            }
        }
        let pass = Pass::new(&self.refs, watches, self.runner.plan.slots(), self.survival).with_deadline(self.deadline);
        if self.discrete { pass.with_bin_ranges() } else { pass }
    }

    pub(crate) fn first_pass(&self, blocks: std::ops::Range<u64>, progress: &dyn Progress) -> FirstPass {
        self.runner.pass(
            &self.first_pass_spec(),
            self.pilot.values(),
            blocks,
            self.keep(),
            progress,
        )
    }

    /// Resolves every quantile from the first pass's totals, running
    /// refinement passes over all trials where a window was not enough.
    pub(crate) fn finish(&self, mut totals: PassTotals, progress: &dyn Progress) -> Outcome {
        let runner = &self.runner;
        let slots = runner.plan.slots();
        let first = self.first_pass_spec();
        let range = totals.range.clone();
        // Each quantile's window also serves the two order statistics of its
        // 95% interval, which lie well inside it.
        let levels = Targets::levels(runner.total);
        let mut values = vec![Targets::UNKNOWN; slots];
        // (slot, target index, window, tally) still to resolve; a window's
        // tally is shared by its targets (it can hold 65 536 bins).
        let mut open: Vec<(usize, usize, Window, Rc<Tally>)> = Vec::new();
        for (w, (watch, tally)) in first
            .watches
            .iter()
            .zip(std::mem::take(&mut totals.tallies))
            .enumerate()
        {
            let qi = w % QUANTILES.len();
            let tally = Rc::new(tally);
            for t in Targets::of_quantile(qi) {
                open.push((watch.slot, t, watch.window, Rc::clone(&tally)));
            }
        }
        let mut passes = 1;
        loop {
            let mut next = Vec::new();
            for (slot, t, window, tally) in open {
                match quantile::judge(levels[t], runner.total, &window, &tally, range[slot]) {
                    Verdict::Resolved(x) => values[slot][t] = x,
                    Verdict::Refine(w) if passes < MAX_PASSES => next.push((slot, t, w)),
                    Verdict::Refine(w) => values[slot][t] = 0.5 * (w.lo + w.hi.next_down()),
                }
            }
            if next.is_empty() {
                break;
            }
            passes += 1;
            progress.pass(passes, runner.total);
            let watches = next.iter().map(|&(slot, _, window)| Watch { slot, window }).collect();
            let pass = Pass::new(&[], watches, slots, None).with_bin_ranges();
            let refined = runner.pass(&pass, &[], 0..runner.blocks(), None, progress).totals;
            open = next
                .into_iter()
                .zip(refined.tallies)
                .map(|((s, qi, w), t)| (s, qi, w, Rc::new(t)))
                .collect();
        }
        let summaries = totals
            .moments
            .iter()
            .zip(&self.refs)
            .zip(values)
            .map(|((m, &r), v)| Summary::new(runner.total, m, r, v))
            .collect();
        self.outcome(summaries, passes, &totals)
    }

    fn outcome(&self, mut summaries: Vec<Summary>, passes: u32, totals: &PassTotals) -> Outcome {
        if let Some(bins) = &self.survival {
            for (slot, summary) in summaries.iter_mut().enumerate() {
                summary.survival = totals.survival(bins, slot, self.runner.total);
            }
        }
        if self.deadline.is_some() {
            for (summary, &c) in summaries.iter_mut().zip(&totals.at_most) {
                summary.within_deadline = Some(c as f64 / self.runner.total as f64);
            }
        }
        let baseline = summaries.pop().expect("the baseline slot is always present");
        Outcome {
            configs: summaries,
            baseline,
            passes,
            pairing: self.pairing(),
        }
    }
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
}

impl Runner<'_> {
    fn chunks(&self) -> u64 {
        self.total.div_ceil(CHUNK)
    }

    fn trials_of(&self, chunk: u64) -> std::ops::Range<u64> {
        chunk * CHUNK..((chunk + 1) * CHUNK).min(self.total)
    }

    /// Simulates one chunk, calling `batch` with the slot values of
    /// [`BATCH`] trials at a time (the last batch may be shorter),
    /// column-major: `(values, count)` with slot j's values, in trial order,
    /// at `values[j·count..(j+1)·count]`.
    /// Where trials are costly ([`TrialPlan::decodes_by_rank`]) a batch's trials
    /// run in parallel, so that one chunk uses every core (same bytes: a
    /// trial's values depend on its index alone).
    fn run_chunk(&self, chunk: u64, scratch: &mut Scratch, mut batch: impl FnMut(&[f64], usize)) {
        let slots = self.plan.slots();
        // Trial-major (trial t + i's values at `by_trial[i·slots..]`) where
        // a batch runs in parallel, then slot-major.
        let (mut by_trial, mut values) = (vec![0.0; BATCH * slots], vec![0.0; BATCH * slots]);
        let trials = self.trials_of(chunk);
        let mut t = trials.start;
        while t < trials.end {
            let count = (trials.end - t).min(BATCH as u64) as usize;
            let place = |values: &mut [f64], i: usize, out: &[f64]| {
                for (j, &v) in out.iter().enumerate() {
                    values[j * count + i] = v;
                }
            };
            if self.plan.decodes_by_rank() {
                let rows = &mut by_trial[..count * slots];
                rows.par_chunks_mut(slots).enumerate().for_each_init(
                    || self.plan.scratch(),
                    |scratch, (i, out)| self.plan.run(self.seed, t + i as u64, scratch, out),
                );
                rows.chunks_exact(slots)
                    .enumerate()
                    .for_each(|(i, out)| place(&mut values, i, out));
            } else {
                // Four trials' rows at a time, each four placed while their
                // values are hot, a slot's four in one store: one scalar
                // store per value, strided a column apart, cost a tenth of
                // the headline's trial.
                let rows = &mut by_trial[..4 * slots];
                let mut i = 0;
                while i < count {
                    let quad = (count - i).min(4);
                    for (r, out) in rows.chunks_exact_mut(slots).take(quad).enumerate() {
                        self.plan.run(self.seed, t + (i + r) as u64, scratch, out);
                    }
                    if quad == 4 {
                        transpose_rows4(rows, &mut values[..count * slots], count, i);
                    } else {
                        rows.chunks_exact(slots)
                            .take(quad)
                            .enumerate()
                            .for_each(|(r, out)| place(&mut values, i + r, out));
                    }
                    i += quad;
                }
            }
            batch(&values[..count * slots], count);
            t += count as u64;
        }
    }

    /// Calls `batch` with each stored batch of a chunk's values, as
    /// [`Self::run_chunk`] laid them out.
    fn stored_batches(&self, chunk: u64, values: &[f64], mut batch: impl FnMut(&[f64], usize)) {
        let slots = self.plan.slots();
        let mut left = self.trials_of(chunk).count();
        let mut at = 0;
        while left > 0 {
            let count = left.min(BATCH);
            batch(&values[at..at + count * slots], count);
            at += count * slots;
            left -= count;
        }
    }

    /// The pilot chunks' values, one vector per chunk, in batches as
    /// [`Self::run_chunk`] lays them out.
    /// Where every trial's values are one step's row, the pilot keeps its
    /// trials' start steps instead.
    fn pilot(&self, progress: &dyn Progress) -> Pilot {
        if self.plan.step_rows().is_some() {
            return Pilot::Steps(
                (0..self.pilot_chunks())
                    .into_par_iter()
                    .map(|c| {
                        let steps = self.chunk_steps(c);
                        progress.advance(steps.len() as u64);
                        steps
                    })
                    .collect(),
            );
        }
        let values = (0..self.pilot_chunks())
            .into_par_iter()
            .map_init(
                || self.plan.scratch(),
                |scratch, c| {
                    let values = self.chunk_values(c, scratch);
                    progress.advance(values.len() as u64 / self.plan.slots() as u64);
                    values
                },
            )
            .collect();
        Pilot::Values(values)
    }

    /// One chunk's trials' start steps, in trial order (where the plan
    /// keeps step rows).
    fn chunk_steps(&self, chunk: u64) -> Vec<u32> {
        self.trials_of(chunk)
            .map(|t| self.plan.start_step(self.seed, t) as u32)
            .collect()
    }

    /// One chunk's values, in batches as [`Self::run_chunk`] lays them out.
    fn chunk_values(&self, chunk: u64, scratch: &mut Scratch) -> Vec<f64> {
        let mut values = Vec::with_capacity(CHUNK as usize * self.plan.slots());
        self.run_chunk(chunk, scratch, |batch, _| values.extend_from_slice(batch));
        values
    }

    /// Chunks of the pairing sample of a run without a pilot
    /// ([`pairing::CHUNKS`], at most the pilot's).
    fn pairing_chunks(&self) -> u64 {
        pairing::CHUNKS.min(self.pilot_chunks())
    }

    /// Chunks in the pilot: [`PILOT_CHUNKS`], within [`PILOT_BYTES`], at least one.
    fn pilot_chunks(&self) -> u64 {
        let per_chunk = CHUNK * self.plan.slots() as u64 * 8;
        (PILOT_BYTES / per_chunk).clamp(1, PILOT_CHUNKS).min(self.chunks())
    }

    /// Blocks of [`BLOCK_CHUNKS`] chunks.
    pub(crate) fn blocks(&self) -> u64 {
        block_count(self.total)
    }

    /// One pass over the trials of `blocks`; chunks held in `stored` are
    /// read, not simulated. Chunks fold in order into their block, blocks in
    /// order into the total. Where `keep` is given, chunk c's values (laid
    /// out as by [`Self::run_chunk`]) go to its place c, if it has one, as
    /// the chunk is simulated.
    fn pass(
        &self,
        pass: &Pass,
        stored: &[Vec<f64>],
        blocks: std::ops::Range<u64>,
        keep: Option<&std::sync::Mutex<Vec<Option<Vec<f64>>>>>,
        progress: &dyn Progress,
    ) -> FirstPass {
        // The first block's totals are the pass's so far (adding them to
        // zeros gives the same values; a window's tally can hold 65 536
        // bins).
        let mut totals: Option<PassTotals> = None;
        let mut block_sums = Vec::new();
        let keep = keep.map(|k| (k, k.lock().expect("no panic while keeping chunks").len()));
        // Where every trial's values are one step's row, chunks are counted
        // by their trials' start steps (stored chunks too: the same trials).
        let rows = self.plan.step_rows();
        let table = rows.map(|r| StepTable::new(r.rows(), self.plan.slots(), pass));
        for block in blocks {
            let mut block_totals = PassTotals::new(pass);
            let chunks = block * BLOCK_CHUNKS..((block + 1) * BLOCK_CHUNKS).min(self.chunks());
            let counts: Vec<Counts> = chunks
                .into_par_iter()
                .map_init(
                    || self.plan.scratch(),
                    |scratch, c| {
                        let mut counts = Counts::new(pass);
                        if let Some(table) = &table {
                            let steps = self.chunk_steps(c);
                            counts.add_steps(pass, table, &steps);
                            if stored.get(c as usize).is_none() {
                                progress.advance(steps.len() as u64);
                            }
                            counts.seal();
                            return counts;
                        }
                        match stored.get(c as usize) {
                            Some(values) => self.stored_batches(c, values, |b, count| counts.add_batch(pass, b, count)),
                            None => {
                                let place = keep.filter(|&(_, places)| (c as usize) < places);
                                let mut kept = Vec::new();
                                self.run_chunk(c, scratch, |b, count| {
                                    counts.add_batch(pass, b, count);
                                    if place.is_some() {
                                        kept.extend_from_slice(b);
                                    }
                                });
                                if let Some((k, _)) = place {
                                    k.lock().expect("no panic while keeping chunks")[c as usize] = Some(kept);
                                }
                                progress.advance(self.trials_of(c).count() as u64);
                            }
                        }
                        counts.seal();
                        counts
                    },
                )
                .collect();
            block_totals.absorb_all(counts);
            block_sums.push((block, block_totals.moments.clone()));
            match &mut totals {
                None => totals = Some(block_totals),
                Some(t) => t.merge(block_totals),
            }
        }
        FirstPass {
            totals: totals.unwrap_or_else(|| PassTotals::new(pass)),
            blocks: block_sums,
        }
    }
}
