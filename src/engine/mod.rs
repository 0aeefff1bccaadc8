//! The Monte Carlo engine: trials in fixed-size chunks on all cores.
//!
//! Trials are split into chunks of [`CHUNK`]. Chunks run in parallel; their
//! results are merged in chunk-index order (power sums) or by integer
//! addition (quantile tallies), so the output is the same bytes for any
//! thread count. The first [`PILOT_CHUNKS`] chunks are the pilot: their values
//! are kept, fix each configuration's reference value and quantile windows
//! (see [`crate::stats::quantile`]), and are then counted like any other
//! chunk. A run no longer than the pilot keeps every value and reports exact
//! sample quantiles.

pub mod pass;
pub mod rng;
pub mod timeline;
pub mod trial;

use rayon::prelude::*;

use crate::stats::quantile::{self, Tally, Verdict, Window};
use crate::stats::{MeanEstimate, QUANTILES};
use crate::study::Study;
use pass::{Counts, LogBins, Pass, PassTotals, Watch};
pub use trial::{RulePath, Sampling, Scratch, TrialPlan, order_statistics_apply};

/// Trials per chunk.
pub const CHUNK: u64 = 8192;
/// Chunks in the pilot (65 536 trials).
pub const PILOT_CHUNKS: u64 = 8;
/// Chunks merged per batch; bounds the memory held by finished chunks.
const BATCH: u64 = 64;
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
}

/// What a simulation computes beyond the summary statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Points of the empirical survival function per configuration (0: none).
    pub survival_points: usize,
}

impl Summary {
    /// From the values at [`quantile_levels`].
    fn new(trials: u64, mean: MeanEstimate, v: [f64; 12]) -> Self {
        Self {
            trials,
            mean,
            quantiles: [v[0], v[3], v[6], v[9]],
            quantile_ci95: [(v[1], v[2]), (v[4], v[5]), (v[7], v[8]), (v[10], v[11])],
            survival: Vec::new(),
        }
    }
}

/// For each reported quantile q: q, then the levels of its interval's ends.
pub fn quantile_levels(trials: u64) -> [f64; 12] {
    let mut levels = [0.0; 12];
    for (i, q) in QUANTILES.into_iter().enumerate() {
        let half = 1.959_963_984_540_054 * (q * (1.0 - q) / trials as f64).sqrt();
        levels[3 * i] = q;
        levels[3 * i + 1] = (q - half).max(0.0);
        levels[3 * i + 2] = (q + half).min(1.0);
    }
    levels
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
    let runner = Runner {
        plan,
        seed: study.seed(),
        total: study.trials(),
    };
    progress.pass(1, runner.total);
    let pilot = runner.pilot(progress);
    let slots = plan.slots();
    let columns: Vec<PilotColumn> = (0..slots)
        .into_par_iter()
        .map(|j| {
            let values = pilot.iter().flat_map(|rows| rows.chunks_exact(slots).map(|r| r[j])).collect();
            PilotColumn::new(values, runner.total)
        })
        .collect();
    let refs: Vec<f64> = columns.iter().map(|c| c.reference).collect();
    let survival = (options.survival_points > 0).then(|| survival_bins(&columns, options.survival_points));
    let (mut summaries, passes, totals) = if pilot.len() as u64 == runner.chunks() {
        let totals = runner.pass(&Pass::new(&refs, Vec::new(), plan.slots(), survival), &pilot, progress);
        let summaries = columns
            .iter()
            .zip(&totals.moments)
            .map(|(c, m)| Summary::new(runner.total, m.summarize(c.reference), c.exact))
            .collect();
        (summaries, 1, totals)
    } else {
        runner.full(&columns, &refs, &pilot, survival, progress)
    };
    if let Some(bins) = &survival {
        for (slot, summary) in summaries.iter_mut().enumerate() {
            summary.survival = totals.survival(bins, slot, runner.total);
        }
    }
    progress.finish();
    let mut configs: Vec<Summary> = summaries;
    let baseline = configs.pop().expect("the baseline slot is always present");
    Outcome {
        configs,
        baseline,
        passes,
    }
}

/// Log bins spanning every pilot value with room on both sides.
fn survival_bins(columns: &[PilotColumn], points: usize) -> LogBins {
    let lo = columns.iter().map(|c| c.span.0).fold(f64::INFINITY, f64::min);
    let hi = columns.iter().map(|c| c.span.1).fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo { (lo / 2.0, hi * 8.0) } else { (1e-3, 1e3) };
    LogBins::new(lo, hi, points)
}

/// What the pilot says about one slot.
struct PilotColumn {
    /// Reference of the power sums: the pilot median (0 if not finite).
    reference: f64,
    /// The values at [`quantile_levels`], exact for a run no longer than the pilot.
    exact: [f64; 12],
    /// First-pass windows of the four quantiles.
    windows: [Window; 4],
    /// Smallest positive and largest finite value, for survival bins.
    span: (f64, f64),
}

impl PilotColumn {
    /// From the pilot's values of one slot, for a run of `total` trials;
    /// selects the ranks it needs instead of sorting.
    fn new(mut values: Vec<f64>, total: u64) -> Self {
        let p = values.len();
        let levels = quantile_levels(total);
        let mut ranks = vec![quantile::target_index(0.5, p as u64) as usize];
        ranks.extend(levels.iter().map(|&l| quantile::target_index(l, p as u64) as usize));
        ranks.extend(QUANTILES.iter().flat_map(|&q| quantile::pilot_ranks(q, p)));
        let span = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
            if v > 0.0 && v.is_finite() { (lo.min(v), hi.max(v)) } else { (lo, hi) }
        });
        let at = quantile::select_ranks(&mut values, &ranks);
        let windows = std::array::from_fn(|i| {
            quantile::window_from_pilot(at[13 + 2 * i], at[14 + 2 * i], QUANTILES[i], p, total)
        });
        Self {
            reference: Some(at[0]).filter(|m| m.is_finite()).unwrap_or(0.0),
            exact: std::array::from_fn(|i| at[1 + i]),
            windows,
            span,
        }
    }
}

struct Runner<'a> {
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

    /// Simulates one chunk, calling `row` with each trial's slot values.
    fn run_chunk(&self, chunk: u64, scratch: &mut Scratch, mut row: impl FnMut(&[f64])) {
        let mut out = vec![0.0; self.plan.slots()];
        for t in self.trials_of(chunk) {
            self.plan.run(self.seed, t, scratch, &mut out);
            row(&out);
        }
    }

    /// The pilot chunks' values, row-major (trial, slot), one vector per chunk.
    fn pilot(&self, progress: &dyn Progress) -> Vec<Vec<f64>> {
        (0..self.chunks().min(PILOT_CHUNKS))
            .into_par_iter()
            .map_init(
                || self.plan.scratch(),
                |scratch, c| {
                    let mut values = Vec::with_capacity(CHUNK as usize * self.plan.slots());
                    self.run_chunk(c, scratch, |row| values.extend_from_slice(row));
                    progress.advance(values.len() as u64 / self.plan.slots() as u64);
                    values
                },
            )
            .collect()
    }

    /// One pass over every trial; chunks held in `stored` are read, not simulated.
    fn pass(&self, pass: &Pass, stored: &[Vec<f64>], progress: &dyn Progress) -> PassTotals {
        let slots = self.plan.slots();
        let mut totals = PassTotals::new(pass);
        let chunks = self.chunks();
        let mut start = 0;
        while start < chunks {
            let end = (start + BATCH).min(chunks);
            let batch: Vec<Counts> = (start..end)
                .into_par_iter()
                .map_init(
                    || self.plan.scratch(),
                    |scratch, c| {
                        let mut counts = Counts::new(pass);
                        match stored.get(c as usize) {
                            Some(values) => values.chunks_exact(slots).for_each(|r| counts.add_row(pass, r)),
                            None => {
                                self.run_chunk(c, scratch, |r| counts.add_row(pass, r));
                                progress.advance(self.trials_of(c).count() as u64);
                            }
                        }
                        counts
                    },
                )
                .collect();
            for counts in batch {
                totals.absorb(pass, counts);
            }
            start = end;
        }
        totals
    }

    /// A run longer than the pilot: first pass, then refinement passes until
    /// every quantile is resolved.
    fn full(
        &self,
        columns: &[PilotColumn],
        refs: &[f64],
        pilot: &[Vec<f64>],
        survival: Option<LogBins>,
        progress: &dyn Progress,
    ) -> (Vec<Summary>, u32, PassTotals) {
        let slots = self.plan.slots();
        let mut watches = Vec::new();
        for (slot, c) in columns.iter().enumerate() {
            for window in c.windows {
                watches.push(Watch { slot, window });
            }
        }
        let first = Pass::new(refs, watches, slots, survival);
        let mut totals = self.pass(&first, pilot, progress);
        let range = totals.range.clone();
        // Each quantile's window also serves the two order statistics of its
        // 95% interval, which lie well inside it.
        let levels = quantile_levels(self.total);
        let mut values = vec![[f64::NAN; 12]; slots];
        // (slot, target index, window, tally) still to resolve.
        let mut open: Vec<(usize, usize, Window, Tally)> = Vec::new();
        for (w, (watch, tally)) in first
            .watches
            .iter()
            .zip(std::mem::take(&mut totals.tallies))
            .enumerate()
        {
            let qi = w % QUANTILES.len();
            for t in 3 * qi..3 * qi + 3 {
                open.push((watch.slot, t, watch.window, tally.clone()));
            }
        }
        let mut passes = 1;
        loop {
            let mut next = Vec::new();
            for (slot, t, window, tally) in open {
                match quantile::judge(levels[t], self.total, &window, &tally, range[slot]) {
                    Verdict::Resolved(x) => values[slot][t] = x,
                    Verdict::Refine(w) if passes < MAX_PASSES => next.push((slot, t, w)),
                    Verdict::Refine(w) => values[slot][t] = 0.5 * (w.lo + w.hi.next_down()),
                }
            }
            if next.is_empty() {
                break;
            }
            passes += 1;
            progress.pass(passes, self.total);
            let watches = next.iter().map(|&(slot, _, window)| Watch { slot, window }).collect();
            let pass = Pass::new(&[], watches, slots, None);
            let totals = self.pass(&pass, &[], progress);
            open = next
                .into_iter()
                .zip(totals.tallies)
                .map(|((s, qi, w), t)| (s, qi, w, t))
                .collect();
        }
        let summaries = totals
            .moments
            .iter()
            .zip(refs)
            .zip(values)
            .map(|((m, &r), v)| Summary::new(self.total, m.summarize(r), v))
            .collect();
        (summaries, passes, totals)
    }
}
