//! The ends of the values in a window's bins, where a tally tracks them
//! (see [`super::Tally::bin_range`]).

/// The [`BinRange`] of each bin of a window that tracks them, held only
/// for the bins a value came in: a trace's values inside a window of
/// thousands of bins are a few atoms, so a dense table would be nearly all
/// empty bins, written and merged block after block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BinRanges {
    /// Bins tracked: the window's, or 0 where the tally tracks none.
    bins: usize,
    /// The bins that hold a value, in ascending order, with their ranges.
    held: Vec<(u32, BinRange)>,
}

impl BinRanges {
    /// Every one of `bins` bins tracked, none holding a value yet.
    pub(crate) fn tracking(bins: usize) -> Self {
        assert!(bins <= u32::MAX as usize, "a window has at most 2^32 - 1 bins");
        Self { bins, held: Vec::new() }
    }

    /// Bins tracked (0 where none are).
    pub fn bins(&self) -> usize {
        self.bins
    }

    /// Bin `b`'s range, [`BinRange::EMPTY`] for a tracked bin without a
    /// value; `None` for a bin not tracked.
    pub fn get(&self, b: usize) -> Option<BinRange> {
        if b >= self.bins {
            return None;
        }
        Some(match self.held.binary_search_by_key(&(b as u32), |h| h.0) {
            Ok(i) => self.held[i].1,
            Err(_) => BinRange::EMPTY,
        })
    }

    /// `count` copies of `v` added to bin `b`, if it is tracked.
    #[inline]
    pub(super) fn add(&mut self, b: usize, v: f64, count: u64) {
        if b >= self.bins {
            return;
        }
        match self.held.binary_search_by_key(&(b as u32), |h| h.0) {
            Ok(i) => self.held[i].1.add(v, count),
            Err(i) => {
                let mut r = BinRange::EMPTY;
                r.add(v, count);
                self.held.insert(i, (b as u32, r));
            }
        }
    }

    /// Adds `other`'s ranges bin by bin; tracks the bins of either.
    pub fn merge(&mut self, other: &BinRanges) {
        self.bins = self.bins.max(other.bins);
        if other.held.is_empty() {
            return;
        }
        // A stable sort keeps this side's range before the other's in a bin
        // both hold: the merge keeps this side's value of an equal end (its
        // sign of zero), as bin by bin.
        self.held.extend_from_slice(&other.held);
        self.held.sort_by_key(|h| h.0);
        self.held.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1.merge(&later.1);
            }
            same
        });
    }

    /// Every tracked bin's range in bin order, empty ones included (the
    /// shard file's layout).
    pub fn dense(&self) -> Vec<BinRange> {
        let mut all = vec![BinRange::EMPTY; self.bins];
        for &(b, r) in &self.held {
            all[b as usize] = r;
        }
        all
    }

    /// From every tracked bin's range in bin order (the shard file's layout).
    pub(crate) fn from_dense(all: &[BinRange]) -> Self {
        let mut ranges = Self::tracking(all.len());
        ranges.held = (0..)
            .zip(all)
            .filter(|(_, r)| **r != BinRange::EMPTY)
            .map(|(b, &r)| (b, r))
            .collect();
        ranges
    }
}

/// The ends of a bin's values and their counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinRange {
    /// The smallest value (+∞ for an empty bin).
    pub lo: f64,
    /// How many times it came.
    pub lo_count: u64,
    /// The largest value (−∞ for an empty bin).
    pub hi: f64,
    /// How many times it came.
    pub hi_count: u64,
}

impl BinRange {
    /// No value yet.
    pub const EMPTY: BinRange = BinRange {
        lo: f64::INFINITY,
        lo_count: 0,
        hi: f64::NEG_INFINITY,
        hi_count: 0,
    };

    /// `count` copies of `v` added.
    #[inline]
    fn add(&mut self, v: f64, count: u64) {
        self.merge(&BinRange {
            lo: v,
            lo_count: count,
            hi: v,
            hi_count: count,
        });
    }

    /// The ends of both bins' values, each end's count summed over the
    /// bins it is the end of.
    fn merge(&mut self, other: &BinRange) {
        let end = |a: f64, na: u64, b: f64, nb: u64, lower: bool| {
            if a == b {
                (a, na + nb)
            } else if (b < a) == lower {
                (b, nb)
            } else {
                (a, na)
            }
        };
        (self.lo, self.lo_count) = end(self.lo, self.lo_count, other.lo, other.lo_count, true);
        (self.hi, self.hi_count) = end(self.hi, self.hi_count, other.hi, other.hi_count, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Sparse bin ranges are the dense table's: values added bin by bin to
    /// two tallies, merged either way, give the table that adding every
    /// value to every bin's own range gives, and the shard file's layout
    /// reads back as the same ranges.
    #[test]
    fn sparse_bin_ranges_are_the_dense_table() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let bins = 50;
        let atoms = [0.5, 1.25, 1.25f64.next_up(), 2.0, -0.0, 0.0, 7.0];
        let mut sides = [BinRanges::tracking(bins), BinRanges::tracking(bins)];
        let mut dense = vec![BinRange::EMPTY; bins];
        for i in 0..2000 {
            // Clustered in a few bins, as a trace's atoms are.
            let b = [3, 4, 17, 49, 0][rng.random_range(0..5usize)];
            let v = atoms[rng.random_range(0..atoms.len())];
            let count = rng.random_range(1..4u64);
            sides[i % 2].add(b, v, count);
            dense[b].add(v, count);
        }
        sides[0].add(bins, 1.0, 1);
        let mut ab = sides[0].clone();
        ab.merge(&sides[1]);
        let mut ba = sides[1].clone();
        ba.merge(&sides[0]);
        assert_eq!(ab, ba);
        assert_eq!(ab.dense(), dense);
        assert_eq!(BinRanges::from_dense(&dense), ab);
        for (b, r) in dense.iter().enumerate() {
            assert_eq!(ab.get(b), Some(*r), "bin {b}");
        }
        assert_eq!(ab.get(bins), None);
        let mut untracked = BinRanges::default();
        untracked.add(0, 1.0, 1);
        assert_eq!(untracked.get(0), None);
        untracked.merge(&ab);
        assert_eq!(untracked, ab);
    }
}
