//! What one pass over the trials counts, per chunk, and how chunks merge.
//!
//! Power sums merge in chunk-index order (floating-point addition is not
//! associative); window tallies and histograms are integer counts and merge
//! in any order.

use rayon::prelude::*;

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
    /// Window edges by quantile, then slot, when every slot has four disjoint
    /// windows (the usual first pass): window `4j + i` of slot j is
    /// `[lo[i][j], hi[i][j])`. The per-trial work is then loops over slots
    /// that the compiler vectorises, with a scalar path for the few values
    /// inside a window.
    stacked: Option<Stacked>,
    survival: Option<LogBins>,
    deadline: Option<f64>,
    /// Whether this processor has AVX2 (see [`Counts::add_rows`]).
    avx2: bool,
    /// Whether tallies keep each bin's smallest and largest value.
    bin_ranges: bool,
}

#[derive(Debug, Clone)]
struct Stacked {
    lo: [Vec<f64>; 4],
    hi: [Vec<f64>; 4],
}

impl<'a> Pass<'a> {
    /// A pass over `slots` slots.
    pub fn new(refs: &'a [f64], watches: Vec<Watch>, slots: usize, survival: Option<LogBins>) -> Self {
        let mut by_slot = vec![Vec::new(); slots];
        for (w, watch) in watches.iter().enumerate() {
            by_slot[watch.slot].push(w);
        }
        let stackable = by_slot.iter().enumerate().all(|(j, ws)| {
            ws.len() == 4
                && ws.iter().enumerate().all(|(i, &w)| w == 4 * j + i)
                && ws
                    .windows(2)
                    .all(|p| watches[p[0]].window.hi <= watches[p[1]].window.lo)
        });
        let stacked = stackable.then(|| Stacked {
            lo: std::array::from_fn(|i| (0..slots).map(|j| watches[4 * j + i].window.lo).collect()),
            hi: std::array::from_fn(|i| (0..slots).map(|j| watches[4 * j + i].window.hi).collect()),
        });
        Self {
            refs,
            watches,
            by_slot,
            stacked,
            survival,
            deadline: None,
            #[cfg(target_arch = "x86_64")]
            avx2: std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(not(target_arch = "x86_64"))]
            avx2: false,
            bin_ranges: false,
        }
    }

    /// The same pass, keeping each bin's value range (for refinement
    /// passes, whose few windows can afford it: it resolves atoms).
    pub fn with_bin_ranges(mut self) -> Self {
        self.bin_ranges = true;
        self
    }

    /// The same pass, also counting values at or below `deadline`.
    pub fn with_deadline(mut self, deadline: Option<f64>) -> Self {
        self.deadline = deadline;
        self
    }
}

/// The counts of one chunk.
pub struct Counts {
    trials: u64,
    s1: Vec<f64>,
    s2: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
    below: Vec<u64>,
    below4: [Vec<u32>; 4],
    inside_any: Vec<bool>,
    /// The bins of the values inside each window, by window.
    hits: Vec<Vec<u32>>,
    /// The values themselves, where the pass tracks bin ranges.
    hit_values: Vec<Vec<f64>>,
    inside: Vec<(f64, f64)>,
    histogram: Vec<u64>,
    at_most: Vec<u64>,
}

impl Counts {
    /// Nothing counted yet.
    pub fn new(pass: &Pass) -> Self {
        let slots = pass.by_slot.len();
        let watches = pass.watches.len();
        Self {
            trials: 0,
            s1: vec![0.0; slots],
            s2: vec![0.0; slots],
            min: vec![f64::INFINITY; slots],
            max: vec![f64::NEG_INFINITY; slots],
            below: vec![0; watches],
            below4: std::array::from_fn(|_| vec![0; if pass.stacked.is_some() { slots } else { 0 }]),
            inside_any: vec![false; slots],
            hits: vec![Vec::new(); watches],
            hit_values: vec![Vec::new(); if pass.bin_ranges { watches } else { 0 }],
            inside: vec![(f64::INFINITY, f64::NEG_INFINITY); watches],
            histogram: vec![0; pass.survival.map_or(0, |b| b.slots() * slots)],
            at_most: vec![0; if pass.deadline.is_some() { slots } else { 0 }],
        }
    }

    #[inline]
    fn hit(&mut self, pass: &Pass, w: usize, v: f64) {
        let win = &pass.watches[w].window;
        self.hits[w].push(win.bin(v) as u32);
        if pass.bin_ranges {
            self.hit_values[w].push(v);
        }
        let i = &mut self.inside[w];
        *i = (i.0.min(v), i.1.max(v));
    }

    /// Counts trials' values, row-major (one value per slot per trial).
    ///
    /// On x86-64 processors with AVX2 the same code is compiled a second
    /// time for AVX2 and chosen at run time: twice the values per vector
    /// instruction, and the same results (the operations and their order do
    /// not change; floating-point contraction is never enabled).
    pub fn add_rows(&mut self, pass: &Pass, rows: &[f64]) {
        #[cfg(target_arch = "x86_64")]
        if pass.avx2 {
            // SAFETY: `pass.avx2` is set only where the processor has AVX2.
            unsafe { self.add_rows_avx2(pass, rows) };
            return;
        }
        self.add_rows_portable(pass, rows);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn add_rows_avx2(&mut self, pass: &Pass, rows: &[f64]) {
        self.add_rows_portable(pass, rows);
    }

    #[inline(always)]
    fn add_rows_portable(&mut self, pass: &Pass, rows: &[f64]) {
        for row in rows.chunks_exact(pass.by_slot.len()) {
            self.add_row(pass, row);
        }
    }

    /// Counts one trial's values, one per slot.
    #[inline(always)]
    pub fn add_row(&mut self, pass: &Pass, row: &[f64]) {
        self.trials += 1;
        if !pass.refs.is_empty() {
            for (((s1, s2), &v), &r) in self.s1.iter_mut().zip(self.s2.iter_mut()).zip(row).zip(pass.refs) {
                let d = v - r;
                *s1 += d;
                *s2 += d * d;
            }
        }
        for ((lo, hi), &v) in self.min.iter_mut().zip(self.max.iter_mut()).zip(row) {
            *lo = lo.min(v);
            *hi = hi.max(v);
        }
        match &pass.stacked {
            Some(st) => {
                // The eight edges of a slot's windows ascend, so a value is
                // inside a window exactly when an odd number of edges are at
                // or below it; one comparison per edge serves both counts.
                let slots = row.len();
                let (lo, hi) = (&st.lo, &st.hi);
                let (lo0, lo1, lo2, lo3) = (&lo[0][..slots], &lo[1][..slots], &lo[2][..slots], &lo[3][..slots]);
                let (hi0, hi1, hi2, hi3) = (&hi[0][..slots], &hi[1][..slots], &hi[2][..slots], &hi[3][..slots]);
                let [b0, b1, b2, b3] = &mut self.below4;
                let (b0, b1, b2, b3) = (&mut b0[..slots], &mut b1[..slots], &mut b2[..slots], &mut b3[..slots]);
                let flags = &mut self.inside_any[..slots];
                let mut any = false;
                for j in 0..slots {
                    let v = row[j];
                    let (a0, a1, a2, a3) = (v >= lo0[j], v >= lo1[j], v >= lo2[j], v >= lo3[j]);
                    b0[j] += u32::from(!a0);
                    b1[j] += u32::from(!a1);
                    b2[j] += u32::from(!a2);
                    b3[j] += u32::from(!a3);
                    let at_or_below = u32::from(a0)
                        + u32::from(a1)
                        + u32::from(a2)
                        + u32::from(a3)
                        + u32::from(v >= hi0[j])
                        + u32::from(v >= hi1[j])
                        + u32::from(v >= hi2[j])
                        + u32::from(v >= hi3[j]);
                    let inside = at_or_below & 1 == 1;
                    flags[j] = inside;
                    any |= inside;
                }
                if any {
                    for (j, &v) in row.iter().enumerate() {
                        if self.inside_any[j] {
                            let i = (0..4).find(|&i| v >= st.lo[i][j] && v < st.hi[i][j]).unwrap_or(0);
                            self.hit(pass, 4 * j + i, v);
                        }
                    }
                }
            }
            None => {
                for (j, &v) in row.iter().enumerate() {
                    for &w in &pass.by_slot[j] {
                        let win = &pass.watches[w].window;
                        if v < win.lo {
                            self.below[w] += 1;
                        } else if v < win.hi {
                            self.hit(pass, w, v);
                        }
                    }
                }
            }
        }
        if let Some(bins) = &pass.survival {
            for (j, &v) in row.iter().enumerate() {
                self.histogram[j * bins.slots() + bins.index(v)] += 1;
            }
        }
        if let Some(t) = pass.deadline {
            for (c, &v) in self.at_most.iter_mut().zip(row) {
                *c += u64::from(v <= t);
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
    /// Values at or below the pass's deadline, per slot (empty unless asked for).
    pub at_most: Vec<u64>,
}

impl PassTotals {
    /// Nothing merged yet.
    pub fn new(pass: &Pass) -> Self {
        let slots = pass.by_slot.len();
        Self {
            moments: vec![Moments::ZERO; slots],
            range: vec![(f64::INFINITY, f64::NEG_INFINITY); slots],
            tallies: pass
                .watches
                .iter()
                .map(|w| {
                    let mut t = Tally::new(&w.window);
                    if pass.bin_ranges {
                        t.bin_range = vec![(f64::INFINITY, f64::NEG_INFINITY); w.window.bins];
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
    pub fn absorb_all(&mut self, pass: &Pass, mut counts: Vec<Counts>) {
        let hits: Vec<Vec<Vec<u32>>> = counts.iter_mut().map(|c| std::mem::take(&mut c.hits)).collect();
        let values: Vec<Vec<Vec<f64>>> = counts.iter_mut().map(|c| std::mem::take(&mut c.hit_values)).collect();
        self.tallies.par_iter_mut().enumerate().for_each(|(w, t)| {
            for (c, bins) in hits.iter().map(|h| &h[w]).enumerate() {
                match values[c].get(w) {
                    Some(vs) => bins.iter().zip(vs).for_each(|(&b, &v)| t.add(b as usize, v)),
                    None => bins.iter().for_each(|&b| t.counts[b as usize] += 1),
                }
            }
        });
        for c in counts {
            self.absorb(pass, c);
        }
    }

    /// Appends the next chunk's counts (chunks arrive in index order).
    pub fn absorb(&mut self, pass: &Pass, c: Counts) {
        for ((m, &s1), &s2) in self.moments.iter_mut().zip(&c.s1).zip(&c.s2) {
            m.merge(&Moments::from_sums(c.trials, s1, s2));
        }
        for ((r, &lo), &hi) in self.range.iter_mut().zip(&c.min).zip(&c.max) {
            *r = (r.0.min(lo), r.1.max(hi));
        }
        if pass.stacked.is_some() {
            for (i, below) in c.below4.iter().enumerate() {
                for (j, &b) in below.iter().enumerate() {
                    self.tallies[4 * j + i].below += u64::from(b);
                }
            }
        }
        for (w, t) in self.tallies.iter_mut().enumerate() {
            t.below += c.below[w];
            t.min_in = t.min_in.min(c.inside[w].0);
            t.max_in = t.max_in.max(c.inside[w].1);
        }
        for (w, (t, bins)) in self.tallies.iter_mut().zip(c.hits).enumerate() {
            match c.hit_values.get(w) {
                Some(vs) => bins.iter().zip(vs).for_each(|(&b, &v)| t.add(b as usize, v)),
                None => bins.iter().for_each(|&b| t.counts[b as usize] += 1),
            }
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
