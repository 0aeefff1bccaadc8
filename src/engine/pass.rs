//! What one pass over the trials counts, per chunk, and how chunks merge.
//!
//! Power sums merge in chunk-index order (floating-point addition is not
//! associative); window tallies and histograms are integer counts and merge
//! in any order.

use crate::stats::Moments;
use crate::stats::quantile::{Tally, Window};

/// One window to tally: the slot it watches and its range.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    /// The slot (configuration) whose values are tallied.
    pub slot: usize,
    /// The window.
    pub window: Window,
}

/// Log-spaced bins over `[lo, hi)` for an empirical survival function, with
/// one bin below and one above.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogBins {
    lo: f64,
    hi: f64,
    bins: usize,
}

impl LogBins {
    /// `bins` log-spaced bins over `[lo, hi)`, `0 < lo < hi`.
    pub fn new(lo: f64, hi: f64, bins: usize) -> Self {
        assert!(lo > 0.0 && hi > lo && bins > 0, "log bins need 0 < lo < hi");
        Self { lo, hi, bins }
    }

    /// Slots per histogram: the bins and the two overflow bins.
    pub fn slots(&self) -> usize {
        self.bins + 2
    }

    #[inline]
    fn index(&self, v: f64) -> usize {
        if v < self.lo {
            0
        } else if v >= self.hi {
            self.bins + 1
        } else {
            let f = (v / self.lo).ln() / (self.hi / self.lo).ln();
            1 + ((f * self.bins as f64) as usize).min(self.bins - 1)
        }
    }

    /// The upper edge of histogram slot `i` (slot 0 ends at `lo`).
    pub fn upper_edge(&self, i: usize) -> f64 {
        self.lo * (self.hi / self.lo).powf(i as f64 / self.bins as f64)
    }
}

/// What a pass counts: power sums (when `refs` is not empty), window
/// tallies, and survival histograms (when `survival` is set).
pub struct Pass<'a> {
    refs: &'a [f64],
    /// The windows, in the order their tallies are returned.
    pub watches: Vec<Watch>,
    by_slot: Vec<Vec<usize>>,
    offsets: Vec<usize>,
    survival: Option<LogBins>,
}

impl<'a> Pass<'a> {
    /// A pass over `slots` slots.
    pub fn new(refs: &'a [f64], watches: Vec<Watch>, slots: usize, survival: Option<LogBins>) -> Self {
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
            survival,
        }
    }
}

/// The counts of one chunk.
pub struct Counts {
    moments: Vec<Moments>,
    range: Vec<(f64, f64)>,
    below: Vec<u64>,
    hits: Vec<u32>,
    inside: Vec<(f64, f64)>,
    histogram: Vec<u64>,
}

impl Counts {
    /// Nothing counted yet.
    pub fn new(pass: &Pass) -> Self {
        let slots = pass.by_slot.len();
        let watches = pass.watches.len();
        Self {
            moments: vec![Moments::ZERO; slots],
            range: vec![(f64::INFINITY, f64::NEG_INFINITY); slots],
            below: vec![0; watches],
            hits: Vec::new(),
            inside: vec![(f64::INFINITY, f64::NEG_INFINITY); watches],
            histogram: vec![0; pass.survival.map_or(0, |b| b.slots() * slots)],
        }
    }

    /// Counts one trial's values, one per slot.
    #[inline]
    pub fn add_row(&mut self, pass: &Pass, row: &[f64]) {
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
            if let Some(bins) = &pass.survival {
                self.histogram[j * bins.slots() + bins.index(v)] += 1;
            }
        }
    }
}

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
}

impl PassTotals {
    /// Nothing merged yet.
    pub fn new(pass: &Pass) -> Self {
        let slots = pass.by_slot.len();
        Self {
            moments: vec![Moments::ZERO; slots],
            range: vec![(f64::INFINITY, f64::NEG_INFINITY); slots],
            tallies: pass.watches.iter().map(|w| Tally::new(&w.window)).collect(),
            histogram: vec![0; pass.survival.map_or(0, |b| b.slots() * slots)],
        }
    }

    /// Appends the next chunk's counts (chunks arrive in index order).
    pub fn absorb(&mut self, pass: &Pass, c: Counts) {
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
        for (a, b) in self.histogram.iter_mut().zip(&c.histogram) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_bins_cover_and_survival_counts_exceedances() {
        let bins = LogBins::new(1.0, 100.0, 2);
        assert_eq!(bins.index(0.5), 0);
        assert_eq!(bins.index(1.0), 1);
        assert_eq!(bins.index(9.99), 1);
        assert_eq!(bins.index(10.0), 2);
        assert_eq!(bins.index(100.0), 3);
        let pass = Pass::new(&[], Vec::new(), 1, Some(bins));
        let mut c = Counts::new(&pass);
        for v in [0.5, 2.0, 20.0, 30.0, 500.0] {
            c.add_row(&pass, &[v]);
        }
        let mut t = PassTotals::new(&pass);
        t.absorb(&pass, c);
        let sf = t.survival(&bins, 0, 5);
        let expected = [(1.0, 0.8), (10.0, 0.6), (100.0, 0.2)];
        for ((x, p), (ex, ep)) in sf.iter().zip(expected) {
            assert!((x - ex).abs() < 1e-9 && (p - ep).abs() < 1e-12, "{sf:?}");
        }
    }
}
