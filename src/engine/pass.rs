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
    /// Power sums per slot, in four lanes.
    s1: Vec<[f64; 4]>,
    s2: Vec<[f64; 4]>,
    min: Vec<f64>,
    max: Vec<f64>,
    /// Values equal to +∞, per slot.
    infinite: Vec<u64>,
    below: Vec<u64>,
    below4: [Vec<u32>; 4],
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
            s1: vec![[0.0; 4]; slots],
            s2: vec![[0.0; 4]; slots],
            min: vec![f64::INFINITY; slots],
            max: vec![f64::NEG_INFINITY; slots],
            infinite: vec![0; slots],
            below: vec![0; watches],
            below4: std::array::from_fn(|_| vec![0; if pass.stacked.is_some() { slots } else { 0 }]),
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

    /// Counts a batch of `count` trials' values, column-major: slot j's
    /// values are `batch[j·count..(j+1)·count]`, in trial order.
    ///
    /// Each slot's values are processed four at a time with the slot's
    /// window edges and sums held in registers; power sums keep four lanes
    /// (value i of a batch goes to lane i mod 4), folded in a fixed order
    /// when the chunk is absorbed, so results do not depend on threads or
    /// shards. On x86-64 processors with AVX2 the same code is compiled a
    /// second time for AVX2 and chosen at run time (the operations and
    /// their order do not change; floating-point contraction is never
    /// enabled, so the results are the same bits).
    pub fn add_batch(&mut self, pass: &Pass, batch: &[f64], count: usize) {
        #[cfg(target_arch = "x86_64")]
        if pass.avx2 {
            // SAFETY: `pass.avx2` is set only where the processor has AVX2.
            unsafe { self.add_batch_avx2(pass, batch, count) };
            return;
        }
        self.add_batch_portable(pass, batch, count);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn add_batch_avx2(&mut self, pass: &Pass, batch: &[f64], count: usize) {
        self.add_batch_portable(pass, batch, count);
    }

    #[inline(always)]
    fn add_batch_portable(&mut self, pass: &Pass, batch: &[f64], count: usize) {
        self.trials += count as u64;
        for (j, col) in batch.chunks_exact(count).enumerate() {
            self.add_column(pass, j, col);
        }
    }

    /// Counts one slot's values.
    #[inline(always)]
    fn add_column(&mut self, pass: &Pass, j: usize, col: &[f64]) {
        let r = pass.refs.get(j).copied();
        let (mut s1, mut s2) = (self.s1[j], self.s2[j]);
        let (mut mn, mut mx) = ([self.min[j]; 4], [self.max[j]; 4]);
        let mut infinite = [0u64; 4];
        // Window edges (when stacked); an empty window never counts.
        let (lo, hi) = match &pass.stacked {
            Some(st) => (
                std::array::from_fn(|i| st.lo[i][j]),
                std::array::from_fn(|i| st.hi[i][j]),
            ),
            None => ([f64::NEG_INFINITY; 4], [f64::NEG_INFINITY; 4]),
        };
        // below[i][l]: lane l's values under window i's lower edge.
        let mut below = [[0u64; 4]; 4];
        let quads = col.chunks_exact(4);
        let tail = quads.remainder();
        for q in quads {
            let v: [f64; 4] = [q[0], q[1], q[2], q[3]];
            let mut inside = [0u64; 4];
            for l in 0..4 {
                mn[l] = if v[l] < mn[l] { v[l] } else { mn[l] };
                mx[l] = if v[l] > mx[l] { v[l] } else { mx[l] };
                infinite[l] += u64::from(v[l] == f64::INFINITY);
                if let Some(r) = r {
                    let d = v[l] - r;
                    s1[l] += d;
                    s2[l] += d * d;
                }
                for i in 0..4 {
                    let under = u64::from(v[l] < lo[i]);
                    below[i][l] += under;
                    inside[l] |= (1 - under) & u64::from(v[l] < hi[i]);
                }
            }
            if inside != [0; 4] {
                for l in 0..4 {
                    if inside[l] != 0 {
                        self.hit_stacked(pass, j, &lo, &hi, v[l]);
                    }
                }
            }
        }
        for (l, &v) in tail.iter().enumerate() {
            mn[l] = if v < mn[l] { v } else { mn[l] };
            mx[l] = if v > mx[l] { v } else { mx[l] };
            infinite[l] += u64::from(v == f64::INFINITY);
            if let Some(r) = r {
                let d = v - r;
                s1[l] += d;
                s2[l] += d * d;
            }
            for i in 0..4 {
                below[i][l] += u64::from(v < lo[i]);
            }
            if (0..4).any(|i| v >= lo[i] && v < hi[i]) {
                self.hit_stacked(pass, j, &lo, &hi, v);
            }
        }
        (self.s1[j], self.s2[j]) = (s1, s2);
        self.infinite[j] += infinite.iter().sum::<u64>();
        self.min[j] = mn.into_iter().fold(f64::INFINITY, |a, b| if b < a { b } else { a });
        self.max[j] = mx.into_iter().fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a });
        if pass.stacked.is_some() {
            for (i, b) in below.iter().enumerate() {
                self.below4[i][j] += b.iter().sum::<u64>() as u32;
            }
        } else {
            for &w in &pass.by_slot[j] {
                let win = &pass.watches[w].window;
                for &v in col {
                    if v < win.lo {
                        self.below[w] += 1;
                    } else if v < win.hi {
                        self.hit(pass, w, v);
                    }
                }
            }
        }
        if let Some(bins) = &pass.survival {
            for &v in col {
                self.histogram[j * bins.slots() + bins.index(v)] += 1;
            }
        }
        if let Some(t) = pass.deadline {
            self.at_most[j] += col.iter().map(|&v| u64::from(v <= t)).sum::<u64>();
        }
    }

    /// A value of slot `j` inside one of its four stacked windows.
    #[inline]
    fn hit_stacked(&mut self, pass: &Pass, j: usize, lo: &[f64; 4], hi: &[f64; 4], v: f64) {
        let i = (0..4).find(|&i| v >= lo[i] && v < hi[i]).unwrap_or(0);
        self.hit(pass, 4 * j + i, v);
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
        let fold = |l: &[f64; 4]| (l[0] + l[1]) + (l[2] + l[3]);
        for (((m, s1), s2), &inf) in self.moments.iter_mut().zip(&c.s1).zip(&c.s2).zip(&c.infinite) {
            m.merge(&Moments::from_sums(c.trials, fold(s1), fold(s2), inf));
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

    /// The AVX2 build of the accumulator and the portable one give the same
    /// counts and the same bits of every sum, on stacked and plain windows.
    #[test]
    fn avx2_and_portable_accumulators_agree() {
        use rand::SeedableRng;
        use rand_distr::{Distribution, Exp1};
        let slots = 7;
        let refs: Vec<f64> = (0..slots).map(|j| 0.5 + j as f64 * 0.1).collect();
        let watches: Vec<Watch> = (0..slots)
            .flat_map(|slot| {
                [(0.3, 0.6), (0.9, 1.1), (1.5, 1.6), (2.5, 3.0)].map(|(lo, hi)| Watch {
                    slot,
                    window: Window { lo, hi, bins: 64 },
                })
            })
            .collect();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        for pass in [
            Pass::new(&refs, watches.clone(), slots, None),
            Pass::new(&refs, watches[..5].to_vec(), slots, Some(LogBins::new(0.1, 10.0, 5))).with_deadline(Some(1.0)),
        ] {
            let mut a = Counts::new(&pass);
            let mut b = Counts::new(&pass);
            for count in [64, 64, 13, 1, 64] {
                let batch: Vec<f64> = (0..count * slots).map(|_| Exp1.sample(&mut rng)).collect();
                a.add_batch_portable(&pass, &batch, count);
                b.add_batch(&pass, &batch, count);
            }
            let bits = |c: &Counts| {
                let f = |v: &[[f64; 4]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
                (
                    f(&c.s1),
                    f(&c.s2),
                    c.min.clone(),
                    c.max.clone(),
                    c.below.clone(),
                    c.below4.clone(),
                    c.hits.clone(),
                )
            };
            assert_eq!(format!("{:?}", bits(&a)), format!("{:?}", bits(&b)));
            assert_eq!((a.histogram, a.at_most, a.trials), (b.histogram, b.at_most, b.trials));
        }
    }

    /// Infinite values (trials a code never decodes) are counted in the
    /// four lanes and in the tail of a batch whose length is not a multiple
    /// of four, and nowhere else.
    #[test]
    fn infinite_values_are_counted_in_lanes_and_tail() {
        let slots = 2;
        let refs = vec![1.0; slots];
        let pass = Pass::new(&refs, Vec::new(), slots, None);
        let mut c = Counts::new(&pass);
        // Slot 0: 13 values, infinite at 1 and 6 (lanes) and 12 (the tail);
        // slot 1: infinite at 11 and 12 (both in the tail).
        let mut batch = vec![0.5; 2 * 13];
        for i in [1, 6, 12, 13 + 11, 13 + 12] {
            batch[i] = f64::INFINITY;
        }
        c.add_batch(&pass, &batch, 13);
        assert_eq!(c.infinite, vec![3, 2]);
        let mut finite = Counts::new(&pass);
        finite.add_batch(&pass, &[0.5; 2 * 13], 13);
        assert_eq!(finite.infinite, vec![0, 0]);
    }

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
        c.add_batch(&pass, &[0.5, 2.0, 20.0, 30.0, 500.0], 5);
        let mut t = PassTotals::new(&pass);
        t.absorb(&pass, c);
        let sf = t.survival(&bins, 0, 5);
        let expected = [(1.0, 0.8), (10.0, 0.6), (100.0, 0.2)];
        for ((x, p), (ex, ep)) in sf.iter().zip(expected) {
            assert!((x - ex).abs() < 1e-9 && (p - ep).abs() < 1e-12, "{sf:?}");
        }
    }
}
