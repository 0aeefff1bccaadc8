//! The order statistics a run reports, named: for each reported quantile q,
//! the q-quantile and the ends of its distribution-free 95% interval, the
//! order statistics at levels q ∓ 1.96·√(q(1−q)/N).

use crate::stats::QUANTILES;

/// One number per order statistic a run reports: for each of the four
/// [`QUANTILES`] q, the q-quantile itself and the two ends of its 95%
/// interval. Holds the levels (fractions of the trials) or the values at them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Targets([f64; Targets::LEN]);

impl Targets {
    /// Targets in all: three per reported quantile.
    pub(crate) const LEN: usize = 3 * QUANTILES.len();

    /// Every target not yet known.
    pub(crate) const UNKNOWN: Targets = Targets([f64::NAN; Targets::LEN]);

    /// The levels for a run of `trials`: each q, then q ∓ 1.96·√(q(1−q)/N)
    /// (the binomial normal approximation), clamped to [0, 1].
    pub(crate) fn levels(trials: u64) -> Self {
        let mut levels = [0.0; Self::LEN];
        for (i, q) in QUANTILES.into_iter().enumerate() {
            let half = crate::stats::Z95 * (q * (1.0 - q) / trials as f64).sqrt();
            let [at, low, high] = Self::of_quantile(i);
            levels[at] = q;
            levels[low] = (q - half).max(0.0);
            levels[high] = (q + half).min(1.0);
        }
        Self(levels)
    }

    /// The targets of quantile `i`: the quantile, its interval's low and high end.
    pub(crate) fn of_quantile(i: usize) -> [usize; 3] {
        [3 * i, 3 * i + 1, 3 * i + 2]
    }

    /// From one number per target, in order.
    pub(crate) fn from_fn(f: impl FnMut(usize) -> f64) -> Self {
        Self(std::array::from_fn(f))
    }

    /// The value of quantile `i`.
    pub fn quantile(&self, i: usize) -> f64 {
        self.0[Self::of_quantile(i)[0]]
    }

    /// The 95% interval of quantile `i`.
    pub fn interval(&self, i: usize) -> (f64, f64) {
        let [_, low, high] = Self::of_quantile(i);
        (self.0[low], self.0[high])
    }

    /// Every target, in order.
    pub fn iter(&self) -> impl Iterator<Item = &f64> {
        self.0.iter()
    }
}

impl std::ops::Index<usize> for Targets {
    type Output = f64;

    fn index(&self, t: usize) -> &f64 {
        &self.0[t]
    }
}

impl std::ops::IndexMut<usize> for Targets {
    fn index_mut(&mut self, t: usize) -> &mut f64 {
        &mut self.0[t]
    }
}
