//! What one pass over the trials counts, per chunk, and how chunks merge.
//!
//! Power sums merge in chunk-index order (floating-point addition is not
//! associative); window tallies and histograms are integer counts and merge
//! in any order (see `totals`).

pub use log_bins::LogBins;
pub use steps::StepTable;
pub use totals::PassTotals;

use crate::stats::quantile::{Tally, Window};
use atoms::{Atom, HELD};

/// One window to tally: the slot it watches and its range.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    /// The slot (configuration) whose values are tallied.
    pub slot: usize,
    /// The window.
    pub window: Window,
}

/// What a pass counts: power sums (when `refs` is not empty), window
/// tallies, and survival histograms (when `survival` is set).
pub struct Pass<'a> {
    refs: &'a [f64],
    /// The windows, in the order their tallies are returned.
    pub watches: Vec<Watch>,
    /// Each slot's windows in groups of four (see [`Group`]), slot-major:
    /// slot j's are `groups[slot_groups[j]..slot_groups[j + 1]]`.
    groups: Vec<Group>,
    slot_groups: Vec<usize>,
    survival: Option<LogBins>,
    deadline: Option<f64>,
    /// Whether this processor has AVX2 (see [`Counts::add_batch`]).
    avx2: bool,
    /// Whether tallies keep each bin's smallest and largest value.
    bin_ranges: bool,
}

/// Up to four windows of one slot, tallied in one sweep over its values:
/// window i is `[lo[i], hi[i])` and counts into watch `watch[i]`. Unused
/// places hold the empty window `[−∞, −∞)`, under which no value lies and
/// inside which none falls. Windows may overlap (on a trace's atoms, two
/// quantiles' windows can hold the same atom): a value is counted in each
/// window that holds it.
#[derive(Debug, Clone, Copy)]
struct Group {
    lo: [f64; 4],
    hi: [f64; 4],
    watch: [usize; 4],
}

impl Group {
    const EMPTY: Group = Group {
        lo: [f64::NEG_INFINITY; 4],
        hi: [f64::NEG_INFINITY; 4],
        watch: [usize::MAX; 4],
    };
}

impl<'a> Pass<'a> {
    /// A pass over `slots` slots.
    pub fn new(refs: &'a [f64], watches: Vec<Watch>, slots: usize, survival: Option<LogBins>) -> Self {
        let mut by_slot = vec![Vec::new(); slots];
        for (w, watch) in watches.iter().enumerate() {
            by_slot[watch.slot].push(w);
        }
        let mut groups = Vec::new();
        let mut slot_groups = vec![0];
        for ws in &by_slot {
            for four in ws.chunks(4) {
                let mut g = Group::EMPTY;
                for (i, &w) in four.iter().enumerate() {
                    (g.lo[i], g.hi[i], g.watch[i]) = (watches[w].window.lo, watches[w].window.hi, w);
                }
                groups.push(g);
            }
            slot_groups.push(groups.len());
        }
        Self {
            refs,
            watches,
            groups,
            slot_groups,
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
    pub(crate) fn with_bin_ranges(mut self) -> Self {
        self.bin_ranges = true;
        self
    }

    /// The same pass, also counting values at or below `deadline`.
    pub(crate) fn with_deadline(mut self, deadline: Option<f64>) -> Self {
        self.deadline = deadline;
        self
    }

    fn slots(&self) -> usize {
        self.slot_groups.len() - 1
    }
}

/// The counts of one chunk.
pub(crate) struct Counts {
    trials: u64,
    /// Power sums per slot, in four lanes.
    s1: Vec<[f64; 4]>,
    s2: Vec<[f64; 4]>,
    min: Vec<f64>,
    max: Vec<f64>,
    /// Values equal to +∞, per slot.
    infinite: Vec<u64>,
    below: Vec<u64>,
    /// The bins of the values inside each window, by window, where the
    /// pass does not track bin ranges: lone values in `hits`, runs of one
    /// value in `runs`, and the current run in `run`, so that a column
    /// that sits on one value (a deadline's cap) adds to a count instead
    /// of a list.
    hits: Vec<Vec<u32>>,
    runs: Vec<Vec<(u32, u32)>>,
    run: Vec<Run>,
    /// Where it does, the values inside each window as atoms, by window:
    /// in `held`, a table of [`HELD`] atoms per window keyed by their bits,
    /// while it has room; where it is full (or sealed), the two most recent
    /// other values in `recent`, and older ones in `atoms`. On a trace's
    /// few distinct values a hit counts up one of the table's, so that a
    /// chunk keeps one atom per value.
    atoms: Vec<Vec<Atom>>,
    recent: Vec<[Atom; 2]>,
    held: Vec<Atom>,
    /// Atoms in each window's table.
    held_len: Vec<usize>,
    /// Room for a column's values inside a window (see [`Self::sweep`]).
    pending: Vec<f64>,
    inside: Vec<(f64, f64)>,
    histogram: Vec<u64>,
    at_most: Vec<u64>,
}

impl Counts {
    /// Nothing counted yet.
    pub fn new(pass: &Pass) -> Self {
        let slots = pass.slots();
        let watches = pass.watches.len();
        Self {
            trials: 0,
            s1: vec![[0.0; 4]; slots],
            s2: vec![[0.0; 4]; slots],
            min: vec![f64::INFINITY; slots],
            max: vec![f64::NEG_INFINITY; slots],
            infinite: vec![0; slots],
            below: vec![0; watches],
            hits: vec![Vec::new(); if pass.bin_ranges { 0 } else { watches }],
            runs: vec![Vec::new(); if pass.bin_ranges { 0 } else { watches }],
            run: vec![Run::NONE; if pass.bin_ranges { 0 } else { watches }],
            atoms: vec![Vec::new(); if pass.bin_ranges { watches } else { 0 }],
            recent: vec![[Atom::NONE; 2]; if pass.bin_ranges { watches } else { 0 }],
            held: vec![Atom::NONE; if pass.bin_ranges { watches * HELD } else { 0 }],
            held_len: vec![0; if pass.bin_ranges { watches } else { 0 }],
            pending: Vec::new(),
            inside: vec![(f64::INFINITY, f64::NEG_INFINITY); watches],
            histogram: vec![0; pass.survival.map_or(0, |b| b.slots() * slots)],
            at_most: vec![0; if pass.deadline.is_some() { slots } else { 0 }],
        }
    }

    /// `count` values `v` inside window `w`: one on the per-trial path
    /// (`MANY` false, where the count is 1 whatever is passed and a hit is a
    /// push), a step's trials when counting by step.
    #[inline]
    fn hit<const MANY: bool>(&mut self, pass: &Pass, w: usize, v: f64, count: u32) {
        let count = if MANY { count } else { 1 };
        let win = &pass.watches[w].window;
        if pass.bin_ranges {
            if self.count_in_table(w, v, count, win) {
                return;
            }
            // The table sealed, or full without this value (and so
            // without any value here, which stays full until sealed): the
            // recent two, then the list.
            // Equal bits: an atom's range is its value, whatever its sign of zero.
            let r = &mut self.recent[w];
            if r[0].value.to_bits() == v.to_bits() {
                r[0].count += count;
            } else if r[1].value.to_bits() == v.to_bits() {
                r[1].count += count;
            } else {
                let old = r[1];
                r[1] = r[0];
                r[0] = Atom {
                    value: v,
                    bin: win.bin(v) as u32,
                    count,
                };
                if old.count > 0 {
                    self.atoms[w].push(old);
                }
                let i = &mut self.inside[w];
                *i = (i.0.min(v), i.1.max(v));
            }
            return;
        }
        let run = &mut self.run[w];
        if run.count > 0 && run.bits == v.to_bits() {
            // The same bits: the same bin, and the range inside holds it.
            run.count += count;
            return;
        }
        match run.count {
            0 => {}
            1 => self.hits[w].push(run.bin),
            c => self.runs[w].push((run.bin, c)),
        }
        *run = Run {
            bits: v.to_bits(),
            bin: win.bin(v) as u32,
            count,
        };
        let i = &mut self.inside[w];
        *i = (i.0.min(v), i.1.max(v));
    }

    /// Counts a batch of `count` trials' values, column-major: slot j's
    /// values are `batch[j·count..(j+1)·count]`, in trial order.
    ///
    /// Each slot's values are processed four at a time with the edges of
    /// four of its windows and its sums held in registers, the comparisons
    /// made without branches, and a scalar path for the few values inside a
    /// window; power sums keep four lanes (value i of a batch goes to lane
    /// i mod 4), folded in a fixed order when the chunk is absorbed, so
    /// results do not depend on threads or shards. On x86-64 processors
    /// with AVX2 the same code is compiled a second time for AVX2 and
    /// chosen at run time (the operations and their order do not change;
    /// floating-point contraction is never enabled, so the results are the
    /// same bits).
    pub(crate) fn add_batch(&mut self, pass: &Pass, batch: &[f64], count: usize) {
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
        self.trials += count as u64;
        for (j, col) in batch.chunks_exact(count).enumerate() {
            self.add_column::<true>(pass, j, col);
        }
    }

    fn add_batch_portable(&mut self, pass: &Pass, batch: &[f64], count: usize) {
        self.trials += count as u64;
        for (j, col) in batch.chunks_exact(count).enumerate() {
            self.add_column::<false>(pass, j, col);
        }
    }

    /// Counts one slot's values: its power sums and range with its first
    /// group of windows, then each further group in a sweep of its own;
    /// with `AVX2`, by the sweep written in AVX2 instructions.
    #[inline(always)]
    fn add_column<const AVX2: bool>(&mut self, pass: &Pass, j: usize, col: &[f64]) {
        let groups = &pass.groups[pass.slot_groups[j]..pass.slot_groups[j + 1]];
        let first = groups.first().unwrap_or(&Group::EMPTY);
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY: `AVX2` is set only by `add_batch_avx2`, which runs
            // only where the processor has AVX2.
            unsafe {
                self.sweep_avx2::<true>(pass, j, col, first);
                for g in groups.iter().skip(1) {
                    self.sweep_avx2::<false>(pass, j, col, g);
                }
            }
        }
        if !AVX2 || cfg!(not(target_arch = "x86_64")) {
            self.sweep::<true>(pass, j, col, first);
            for g in groups.iter().skip(1) {
                self.sweep::<false>(pass, j, col, g);
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

    /// One sweep over slot `j`'s values: the windows of `g`, and with
    /// `STATS` the power sums, range and infinite values.
    #[inline(always)]
    fn sweep<const STATS: bool>(&mut self, pass: &Pass, j: usize, col: &[f64], g: &Group) {
        let r = pass.refs.get(j).copied();
        let Lanes {
            mut s1,
            mut s2,
            mut mn,
            mut mx,
            mut infinite,
            mut below,
        } = self.lanes(j);
        let (lo, hi) = (g.lo, g.hi);
        let mut pending = self.take_pending(col.len());
        let mut n = 0;
        let quads = col.chunks_exact(4);
        let tail = quads.remainder();
        for q in quads {
            let v: [f64; 4] = [q[0], q[1], q[2], q[3]];
            let mut inside = [0u64; 4];
            for l in 0..4 {
                if STATS {
                    mn[l] = if v[l] < mn[l] { v[l] } else { mn[l] };
                    mx[l] = if v[l] > mx[l] { v[l] } else { mx[l] };
                    infinite[l] += u64::from(v[l] == f64::INFINITY);
                    if let Some(r) = r {
                        let d = v[l] - r;
                        s1[l] += d;
                        s2[l] += d * d;
                    }
                }
                for i in 0..4 {
                    let under = u64::from(v[l] < lo[i]);
                    below[i][l] += under;
                    inside[l] |= (1 - under) & u64::from(v[l] < hi[i]);
                }
            }
            for l in 0..4 {
                pending[n] = v[l];
                n += inside[l] as usize;
            }
        }
        let lanes = Lanes {
            s1,
            s2,
            mn,
            mx,
            infinite,
            below,
        };
        self.finish_sweep::<STATS>(pass, j, g, tail, lanes, pending, n);
    }

    /// Four lanes of slot `j`'s power sums and range, and no counts yet.
    #[inline(always)]
    fn lanes(&self, j: usize) -> Lanes {
        Lanes {
            s1: self.s1[j],
            s2: self.s2[j],
            mn: [self.min[j]; 4],
            mx: [self.max[j]; 4],
            infinite: [0; 4],
            below: [[0; 4]; 4],
        }
    }

    /// Room for `len` values inside a window: they are gathered without a
    /// branch (each value is written, and the end moves past it only if it
    /// is inside) and counted after the sweep, as on a trace's atoms a
    /// tenth of the values can be inside, at random.
    #[inline(always)]
    fn take_pending(&mut self, len: usize) -> Vec<f64> {
        let mut pending = std::mem::take(&mut self.pending);
        if pending.len() < len {
            pending.resize(len, 0.0);
        }
        pending
    }

    /// The end of a sweep: the `tail` of the column (under four values),
    /// the `n` gathered values inside a window counted, and the lanes
    /// folded into the chunk's counts.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn finish_sweep<const STATS: bool>(
        &mut self,
        pass: &Pass,
        j: usize,
        g: &Group,
        tail: &[f64],
        lanes: Lanes,
        mut pending: Vec<f64>,
        mut n: usize,
    ) {
        let r = pass.refs.get(j).copied();
        let (lo, hi) = (g.lo, g.hi);
        let Lanes {
            mut s1,
            mut s2,
            mut mn,
            mut mx,
            mut infinite,
            mut below,
        } = lanes;
        for (l, &v) in tail.iter().enumerate() {
            if STATS {
                mn[l] = if v < mn[l] { v } else { mn[l] };
                mx[l] = if v > mx[l] { v } else { mx[l] };
                infinite[l] += u64::from(v == f64::INFINITY);
                if let Some(r) = r {
                    let d = v - r;
                    s1[l] += d;
                    s2[l] += d * d;
                }
            }
            for i in 0..4 {
                below[i][l] += u64::from(v < lo[i]);
            }
            pending[n] = v;
            n += usize::from((0..4).any(|i| v >= lo[i] && v < hi[i]));
        }
        for &v in &pending[..n] {
            self.hit_group(pass, g, v);
        }
        self.pending = pending;
        if STATS {
            (self.s1[j], self.s2[j]) = (s1, s2);
            self.infinite[j] += infinite.iter().sum::<u64>();
            self.min[j] = mn.into_iter().fold(f64::INFINITY, |a, b| if b < a { b } else { a });
            self.max[j] = mx.into_iter().fold(f64::NEG_INFINITY, |a, b| if b > a { b } else { a });
        }
        for (i, b) in below.iter().enumerate() {
            if g.watch[i] != usize::MAX {
                self.below[g.watch[i]] += b.iter().sum::<u64>();
            }
        }
    }

    /// Adds the values inside window `w` to its tally's bins (and bin ranges).
    fn tally_hits(&self, w: usize, t: &mut Tally) {
        if let Some(hits) = self.hits.get(w) {
            hits.iter().for_each(|&b| t.counts[b as usize] += 1);
            for &(b, c) in self.runs[w].iter().chain([&(self.run[w].bin, self.run[w].count)]) {
                t.counts[b as usize] += u64::from(c);
            }
        }
        if w < self.atoms.len() {
            self.atoms_of(w)
                .for_each(|a| t.add_many(a.bin as usize, a.value, u64::from(a.count)));
        }
    }

    /// A value inside at least one of the windows of `g`: counted in each,
    /// in window order. The windows that hold it are found without a
    /// branch (a mask of the four tests), so that which window it is, at
    /// random from value to value, is not a guess the processor can miss.
    #[inline]
    fn hit_group(&mut self, pass: &Pass, g: &Group, v: f64) {
        let mut inside = (0..4).fold(0u32, |m, i| m | (u32::from(v >= g.lo[i] && v < g.hi[i]) << i));
        while inside != 0 {
            let i = inside.trailing_zeros() as usize;
            self.hit::<false>(pass, g.watch[i], v, 1);
            inside &= inside - 1;
        }
    }
}

/// A sweep's four lanes: power sums, range, infinite values, and, per
/// window i of the group, `below[i][l]`, lane l's values under its lower
/// edge (value i of a column goes to lane i mod 4).
struct Lanes {
    s1: [f64; 4],
    s2: [f64; 4],
    mn: [f64; 4],
    mx: [f64; 4],
    infinite: [u64; 4],
    below: [[u64; 4]; 4],
}

/// The current run of hits of one value (by its bits) inside a window: its
/// bin and how many times it came in a row.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Run {
    bits: u64,
    bin: u32,
    count: u32,
}

impl Run {
    /// No value yet.
    const NONE: Run = Run {
        bits: 0,
        bin: 0,
        count: 0,
    };
}

mod atoms;
#[cfg(target_arch = "x86_64")]
mod avx2;
mod log_bins;
mod steps;
#[cfg(test)]
mod tests;
mod totals;
