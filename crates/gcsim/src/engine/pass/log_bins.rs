//! Log-spaced bins for an empirical survival function.

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
    pub(super) fn index(&self, v: f64) -> usize {
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
    pub(crate) fn upper_edge(&self, i: usize) -> f64 {
        self.lo * (self.hi / self.lo).powf(i as f64 / self.bins as f64)
    }
}
