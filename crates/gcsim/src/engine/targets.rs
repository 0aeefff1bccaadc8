//! The order statistics a run reports, named: for each reported quantile q,
//! the q-quantile and the ends of its distribution-free 95% interval: the
//! order statistics X₍ₗ₎ and X₍ᵤ₎ whose ranks hold the quantile with
//! probability at least 95% by the exact binomial law of the number of
//! values below it (David & Nagaraja 2003, §7.1), equal-tailed; where
//! N·q(1−q) > 10⁴ the normal approximation q ∓ 1.96·√(q(1−q)/N), which is
//! then exact to a rank.

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

    /// The levels for a run of `trials`: each q, then the levels r/N of
    /// the ranks of its interval ([`interval_ranks`]; an end the sample
    /// cannot bound at the smallest or largest value, which
    /// [`interval_bounded`] reports).
    pub(crate) fn levels(trials: u64) -> Self {
        let mut levels = [0.0; Self::LEN];
        let n = trials as f64;
        for (i, q) in QUANTILES.into_iter().enumerate() {
            let [at, low, high] = Self::of_quantile(i);
            let (l, u) = interval_ranks(q, trials);
            levels[at] = q;
            levels[low] = l.map_or(0.0, |l| l as f64 / n);
            levels[high] = u.map_or(1.0, |u| u as f64 / n);
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

/// Each tail of an equal-tailed 95% interval.
const TAIL: f64 = 0.025;

/// The 1-based ranks `(l, u)` of the order statistics of `n` values that
/// bound the q-quantile ξ with probability at least 95%: with B ~ Bin(n, q)
/// the number of values below ξ, P(X₍ₗ₎ > ξ) = P(B ≤ l − 1) and
/// P(X₍ᵤ₎ < ξ) = P(B ≥ u), so l is the largest rank with P(B ≤ l − 1) ≤
/// 2.5% and u the smallest with P(B ≥ u) ≤ 2.5%. `None` at an end no rank
/// reaches (at 10 trials, p99's upper end: P(B ≥ 10) = 0.99¹⁰ = 90%).
pub fn interval_ranks(q: f64, n: u64) -> (Option<u64>, Option<u64>) {
    let (nf, var) = (n as f64, q * (1.0 - q) * n as f64);
    if var > 1e4 {
        let half = crate::stats::Z95 * var.sqrt();
        let rank = |x: f64| (x.ceil() as u64).clamp(1, n);
        return (Some(rank(nf * q - half)), Some(rank(nf * q + half)));
    }
    let tails = |k: u64| crate::analytic::binomial::tails(n, k, q, 1.0 - q);
    // P(B ≤ k − 1) rises with k: the largest k with it ≤ TAIL, by bisection.
    let (mut lo, mut hi) = (0u64, n + 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if tails(mid).0 <= TAIL { lo = mid } else { hi = mid }
    }
    let l = (lo >= 1).then_some(lo);
    // P(B ≥ k) falls with k: the smallest k with it ≤ TAIL.
    let (mut lo, mut hi) = (0u64, n + 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if tails(mid).1 <= TAIL { hi = mid } else { lo = mid }
    }
    let u = (hi <= n).then_some(hi);
    (l, u)
}

/// Whether `n` values bound the q-quantile at 95% on both sides (see
/// [`interval_ranks`]); where not, its interval is left empty.
pub fn interval_bounded(q: f64, n: u64) -> bool {
    matches!(interval_ranks(q, n), (Some(_), Some(_)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// The exact ranks against the binomial law summed by hand, and the
    /// ends that no rank reaches.
    #[test]
    fn ranks_are_the_exact_binomial_ones() {
        // n = 10, q = 0.5: P(B ≤ 1) = 11/1024 ≤ 2.5% < P(B ≤ 2) = 56/1024.
        assert_eq!(interval_ranks(0.5, 10), (Some(2), Some(9)));
        // p99 at 10 trials: P(B ≥ 10) = 0.99^10 > 2.5%, no upper rank.
        assert_eq!(interval_ranks(0.99, 10), (Some(9), None));
        assert!(!interval_bounded(0.99, 100));
        assert!(!interval_bounded(0.99, 367));
        assert!(interval_bounded(0.99, 368));
        // Large samples: the normal ranks, within one of q·N ∓ 1.96·√(Nq(1−q)).
        let (l, u) = interval_ranks(0.5, 1_000_000);
        assert!((l.unwrap() as f64 - 499_020.0).abs() <= 1.0 && (u.unwrap() as f64 - 500_980.0).abs() <= 1.0);
    }

    /// Coverage over many seeds: the interval of the median and of p99 of
    /// exponential samples holds the exact quantile −ln(1 − q) in at least
    /// 95% of 4000 samples, less 3 standard errors of the count; the mean
    /// interval is never below 0.
    #[test]
    fn intervals_cover_at_small_samples() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let reps = 4000;
        for (q, n) in [(0.5, 10u64), (0.5, 25), (0.99, 400), (0.99, 1000), (0.9, 50)] {
            let exact = -(1.0f64 - q).ln();
            let (l, u) = interval_ranks(q, n);
            let (l, u) = (l.unwrap() as usize - 1, u.unwrap() as usize - 1);
            let mut hits = 0;
            for _ in 0..reps {
                let mut xs: Vec<f64> = (0..n).map(|_| -(1.0 - rng.random::<f64>()).ln()).collect();
                xs.sort_by(f64::total_cmp);
                hits += usize::from(xs[l] <= exact && exact <= xs[u]);
            }
            let floor = 0.95 - 3.0 * (0.95 * 0.05 / reps as f64).sqrt();
            assert!(
                hits as f64 / reps as f64 >= floor,
                "q={q} n={n}: coverage {hits}/{reps}"
            );
        }
    }
}
