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

pub mod rng;
pub mod timeline;
pub mod trial;

use rayon::prelude::*;

use crate::stats::quantile::{self, Tally, Verdict, Window};
use crate::stats::{MeanEstimate, Moments, QUANTILES};
use crate::study::Study;
pub use trial::{RulePath, Scratch, TrialPlan};

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
    simulate_with(&TrialPlan::new(study, RulePath::Fast), study, progress)
}

/// Simulates `study` with a given trial plan.
pub fn simulate_with(plan: &TrialPlan, study: &Study, progress: &dyn Progress) -> Outcome {
    let runner = Runner {
        plan,
        seed: study.seed(),
        total: study.trials(),
    };
    progress.pass(1, runner.total);
    let pilot = runner.pilot(progress);
    let columns: Vec<Vec<f64>> = (0..plan.slots())
        .map(|j| {
            let mut c: Vec<f64> = pilot
                .iter()
                .flat_map(|rows| rows.chunks_exact(plan.slots()).map(|r| r[j]))
                .collect();
            c.sort_unstable_by(f64::total_cmp);
            c
        })
        .collect();
    let refs: Vec<f64> = columns
        .iter()
        .map(|c| {
            Some(quantile::exact_quantile(c, 0.5))
                .filter(|m| m.is_finite())
                .unwrap_or(0.0)
        })
        .collect();

    let (summaries, passes) = if pilot.len() as u64 == runner.chunks() {
        let moments = runner
            .pass(&Pass::new(&refs, Vec::new(), plan.slots()), &pilot, progress)
            .moments;
        let summaries = columns
            .iter()
            .zip(&moments)
            .zip(&refs)
            .map(|((c, m), &r)| Summary {
                trials: runner.total,
                mean: m.summarize(r),
                quantiles: QUANTILES.map(|q| quantile::exact_quantile(c, q)),
            })
            .collect();
        (summaries, 1)
    } else {
        runner.full(&columns, &refs, &pilot, progress)
    };
    progress.finish();
    let mut configs: Vec<Summary> = summaries;
    let baseline = configs.pop().expect("the baseline slot is always present");
    Outcome {
        configs,
        baseline,
        passes,
    }
}

/// One window to tally: the slot it watches and its range.
#[derive(Debug, Clone, Copy)]
struct Watch {
    slot: usize,
    window: Window,
}

/// What a pass counts: power sums (first pass only) and window tallies.
struct Pass<'a> {
    refs: &'a [f64],
    watches: Vec<Watch>,
    by_slot: Vec<Vec<usize>>,
    offsets: Vec<usize>,
}

impl<'a> Pass<'a> {
    fn new(refs: &'a [f64], watches: Vec<Watch>, slots: usize) -> Self {
        let mut by_slot = vec![Vec::new(); slots];
        let mut offsets = Vec::with_capacity(watches.len());
        let mut total = 0;
        for (w, watch) in watches.iter().enumerate() {
            by_slot[watch.slot].push(w);
            offsets.push(total);
            total += watch.window.bins;
        }
        Self {
            refs,
            watches,
            by_slot,
            offsets,
        }
    }
}

/// The counts of one chunk (or of many, merged).
struct Counts {
    moments: Vec<Moments>,
    range: Vec<(f64, f64)>,
    below: Vec<u64>,
    hits: Vec<u32>,
    inside: Vec<(f64, f64)>,
}

impl Counts {
    fn new(slots: usize, watches: usize) -> Self {
        Self {
            moments: vec![Moments::ZERO; slots],
            range: vec![(f64::INFINITY, f64::NEG_INFINITY); slots],
            below: vec![0; watches],
            hits: Vec::new(),
            inside: vec![(f64::INFINITY, f64::NEG_INFINITY); watches],
        }
    }

    #[inline]
    fn add_row(&mut self, pass: &Pass, row: &[f64]) {
        for (j, &v) in row.iter().enumerate() {
            if !pass.refs.is_empty() {
                self.moments[j].push(v, pass.refs[j]);
            }
            let r = &mut self.range[j];
            *r = (r.0.min(v), r.1.max(v));
            for &w in &pass.by_slot[j] {
                let win = &pass.watches[w].window;
                if v < win.lo {
                    self.below[w] += 1;
                } else if v < win.hi {
                    self.hits.push((pass.offsets[w] + win.bin(v)) as u32);
                    let i = &mut self.inside[w];
                    *i = (i.0.min(v), i.1.max(v));
                }
            }
        }
    }
}

/// Totals of a pass.
struct PassTotals {
    moments: Vec<Moments>,
    range: Vec<(f64, f64)>,
    tallies: Vec<Tally>,
}

impl PassTotals {
    fn new(pass: &Pass, slots: usize) -> Self {
        Self {
            moments: vec![Moments::ZERO; slots],
            range: vec![(f64::INFINITY, f64::NEG_INFINITY); slots],
            tallies: pass.watches.iter().map(|w| Tally::new(&w.window)).collect(),
        }
    }

    /// Appends the next chunk's counts (chunks arrive in index order).
    fn absorb(&mut self, pass: &Pass, c: Counts) {
        for (m, cm) in self.moments.iter_mut().zip(&c.moments) {
            m.merge(cm);
        }
        for (r, cr) in self.range.iter_mut().zip(&c.range) {
            *r = (r.0.min(cr.0), r.1.max(cr.1));
        }
        for (w, t) in self.tallies.iter_mut().enumerate() {
            t.below += c.below[w];
            t.min_in = t.min_in.min(c.inside[w].0);
            t.max_in = t.max_in.max(c.inside[w].1);
        }
        for h in c.hits {
            let h = h as usize;
            let w = pass.offsets.partition_point(|&o| o <= h) - 1;
            self.tallies[w].counts[h - pass.offsets[w]] += 1;
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
        let mut totals = PassTotals::new(pass, slots);
        let chunks = self.chunks();
        let mut start = 0;
        while start < chunks {
            let end = (start + BATCH).min(chunks);
            let batch: Vec<Counts> = (start..end)
                .into_par_iter()
                .map_init(
                    || self.plan.scratch(),
                    |scratch, c| {
                        let mut counts = Counts::new(slots, pass.watches.len());
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
        columns: &[Vec<f64>],
        refs: &[f64],
        pilot: &[Vec<f64>],
        progress: &dyn Progress,
    ) -> (Vec<Summary>, u32) {
        let slots = self.plan.slots();
        let mut watches = Vec::new();
        for (slot, c) in columns.iter().enumerate() {
            for q in QUANTILES {
                watches.push(Watch {
                    slot,
                    window: quantile::pilot_window(c, q, self.total),
                });
            }
        }
        let first = Pass::new(refs, watches, slots);
        let totals = self.pass(&first, pilot, progress);
        let range = totals.range.clone();
        let mut quantiles = vec![[f64::NAN; 4]; slots];
        // (slot, quantile index, window, tally) still to resolve.
        let mut open: Vec<(usize, usize, Window, Tally)> = first
            .watches
            .iter()
            .zip(totals.tallies)
            .enumerate()
            .map(|(w, (watch, tally))| (watch.slot, w % QUANTILES.len(), watch.window, tally))
            .collect();
        let mut passes = 1;
        loop {
            let mut next = Vec::new();
            for (slot, qi, window, tally) in open {
                let q = QUANTILES[qi];
                match quantile::judge(q, self.total, &window, &tally, range[slot]) {
                    Verdict::Resolved(x) => quantiles[slot][qi] = x,
                    Verdict::Refine(w) if passes < MAX_PASSES => next.push((slot, qi, w)),
                    Verdict::Refine(w) => quantiles[slot][qi] = 0.5 * (w.lo + w.hi.next_down()),
                }
            }
            if next.is_empty() {
                break;
            }
            passes += 1;
            progress.pass(passes, self.total);
            let watches = next.iter().map(|&(slot, _, window)| Watch { slot, window }).collect();
            let pass = Pass::new(&[], watches, slots);
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
            .zip(quantiles)
            .map(|((m, &r), quantiles)| Summary {
                trials: self.total,
                mean: m.summarize(r),
                quantiles,
            })
            .collect();
        (summaries, passes)
    }
}
