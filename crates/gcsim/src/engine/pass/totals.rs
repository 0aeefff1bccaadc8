//! The merged counts of a pass: chunks' counts appended in chunk-index
//! order, blocks' totals in block order.

use rayon::prelude::*;

use super::{Counts, LogBins, Pass};
use crate::stats::Moments;
use crate::stats::quantile::{BinRanges, Tally};

/// The merged counts of a pass.
pub struct PassTotals {
    /// Power sums per slot.
    pub moments: Vec<Moments>,
    /// Smallest and largest value per slot.
    pub range: Vec<(f64, f64)>,
    /// One tally per watch.
    pub tallies: Vec<Tally>,
    /// Survival histograms, slot-major (empty unless asked for).
    pub histogram: Vec<u64>,
    /// Values at or below the pass's deadline, per slot (empty unless asked for).
    pub at_most: Vec<u64>,
}

impl PassTotals {
    /// Nothing merged yet.
    pub fn new(pass: &Pass) -> Self {
        let slots = pass.slots();
        Self {
            moments: vec![Moments::ZERO; slots],
            range: vec![(f64::INFINITY, f64::NEG_INFINITY); slots],
            tallies: pass
                .watches
                .iter()
                .map(|w| {
                    let mut t = Tally::new(&w.window);
                    if pass.bin_ranges {
                        t.bin_range = BinRanges::tracking(w.window.bins);
                    }
                    t
                })
                .collect(),
            histogram: vec![0; pass.survival.map_or(0, |b| b.slots() * slots)],
            at_most: vec![0; if pass.deadline.is_some() { slots } else { 0 }],
        }
    }

    /// Appends chunks' counts, given in chunk-index order. Power sums fold
    /// in that order; window bins are integer counts and are added window
    /// by window in parallel.
    pub(crate) fn absorb_all(&mut self, mut counts: Vec<Counts>) {
        self.tallies.par_iter_mut().enumerate().for_each(|(w, t)| {
            for c in &counts {
                c.tally_hits(w, t);
            }
        });
        for c in &mut counts {
            c.hits.clear();
            c.runs.clear();
            c.run.clear();
            c.atoms.clear();
            c.recent.clear();
            c.held.clear();
        }
        for c in counts {
            self.absorb(c);
        }
    }

    /// Appends the next chunk's counts (chunks arrive in index order).
    pub(crate) fn absorb(&mut self, c: Counts) {
        for (m, chunk) in self.moments.iter_mut().zip(c.moments()) {
            m.merge(&chunk);
        }
        for ((r, &lo), &hi) in self.range.iter_mut().zip(&c.min).zip(&c.max) {
            *r = (r.0.min(lo), r.1.max(hi));
        }
        for (w, t) in self.tallies.iter_mut().enumerate() {
            t.below += c.below[w];
            t.min_in = t.min_in.min(c.inside[w].0);
            t.max_in = t.max_in.max(c.inside[w].1);
        }
        for (w, t) in self.tallies.iter_mut().enumerate() {
            c.tally_hits(w, t);
        }
        for (a, b) in self.histogram.iter_mut().zip(&c.histogram) {
            *a += b;
        }
        for (a, b) in self.at_most.iter_mut().zip(&c.at_most) {
            *a += b;
        }
    }

    /// Appends the totals of the next block (blocks arrive in index order).
    pub fn merge(&mut self, later: PassTotals) {
        for (m, lm) in self.moments.iter_mut().zip(&later.moments) {
            m.merge(lm);
        }
        for (r, lr) in self.range.iter_mut().zip(&later.range) {
            *r = (r.0.min(lr.0), r.1.max(lr.1));
        }
        for (t, lt) in self.tallies.iter_mut().zip(&later.tallies) {
            t.merge(lt);
        }
        for (a, b) in self.histogram.iter_mut().zip(&later.histogram) {
            *a += b;
        }
        for (a, b) in self.at_most.iter_mut().zip(&later.at_most) {
            *a += b;
        }
    }

    /// The empirical survival function of `slot` at the bins' upper edges:
    /// `(t, P(T > t))`, from `total` trials.
    pub fn survival(&self, bins: &LogBins, slot: usize, total: u64) -> Vec<(f64, f64)> {
        let h = &self.histogram[slot * bins.slots()..(slot + 1) * bins.slots()];
        let mut above = total;
        h[..h.len() - 1]
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                above -= c;
                (bins.upper_edge(i), above as f64 / total as f64)
            })
            .collect()
    }
}

impl Counts {
    /// Each slot's power sums over this chunk: its four lanes folded
    /// pairwise, as every total adds them.
    pub(crate) fn moments(&self) -> Vec<Moments> {
        let fold = |l: &[f64; 4]| (l[0] + l[1]) + (l[2] + l[3]);
        self.s1
            .iter()
            .zip(&self.s2)
            .zip(&self.infinite)
            .map(|((s1, s2), &inf)| Moments::from_sums(self.trials, fold(s1), fold(s2), inf))
            .collect()
    }
}
