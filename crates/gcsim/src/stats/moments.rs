//! Mean, standard error and confidence interval from shifted power sums.
//!
//! Each chunk of trials sums `v − r` and `(v − r)²` about a fixed reference
//! `r` (the pilot mean), which keeps the variance free of catastrophic
//! cancellation. Chunk sums are folded in chunk-index order, so the result is
//! the same floating-point computation whatever the number of threads.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Power sums of one slot over some trials, about a reference value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    count: u64,
    s1: f64,
    s2: f64,
    /// How many of the values were +∞ (a code that never decoded).
    infinite: u64,
}

impl Moments {
    /// No trials yet.
    pub const ZERO: Moments = Moments {
        count: 0,
        s1: 0.0,
        s2: 0.0,
        infinite: 0,
    };

    /// Adds one value `v` with reference `r`.
    #[inline]
    pub fn push(&mut self, v: f64, r: f64) {
        let d = v - r;
        self.count += 1;
        self.s1 += d;
        self.s2 += d * d;
        self.infinite += u64::from(v == f64::INFINITY);
    }

    /// Power sums `s1 = Σ(v − r)` and `s2 = Σ(v − r)²` over `count` values,
    /// `infinite` of which were +∞.
    pub(crate) fn from_sums(count: u64, s1: f64, s2: f64, infinite: u64) -> Self {
        Self {
            count,
            s1,
            s2,
            infinite,
        }
    }

    /// `(count, s1, s2)`.
    pub fn sums(&self) -> (u64, f64, f64) {
        (self.count, self.s1, self.s2)
    }

    /// Appends the trials of `later`, which must use the same reference.
    pub fn merge(&mut self, later: &Moments) {
        self.count += later.count;
        self.s1 += later.s1;
        self.s2 += later.s2;
        self.infinite += later.infinite;
    }

    /// How many values were +∞.
    pub fn infinite(&self) -> u64 {
        self.infinite
    }

    /// Number of trials.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean, standard error and 95% interval, given the reference `r`.
    ///
    /// The standard error and interval are `None` for a single trial or where
    /// the sample variance is not finite (an infinite draw).
    pub fn summarize(&self, r: f64) -> MeanEstimate {
        let n = self.count as f64;
        let mean = r + self.s1 / n;
        let var = (self.s2 - self.s1 * self.s1 / n) / (n - 1.0);
        let std_err = (self.count > 1 && var.is_finite()).then(|| (var.max(0.0) / n).sqrt());
        let half = std_err.map(|se| se * t975(self.count - 1));
        MeanEstimate {
            mean,
            std_err,
            ci95: half.map(|h| (mean - h, mean + h)),
        }
    }
}

/// The 97.5% quantile of Student's t with `dof` degrees of freedom.
fn t975(dof: u64) -> f64 {
    if dof > 1_000_000 {
        return super::Z95;
    }
    StudentsT::new(0.0, 1.0, dof as f64)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(super::Z95)
}

/// The sample mean with its uncertainty.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanEstimate {
    /// Sample mean; infinite if a draw was.
    pub mean: f64,
    /// Standard error of the mean.
    pub std_err: Option<f64>,
    /// 95% confidence interval of the mean (Student's t).
    pub ci95: Option<(f64, f64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_textbook_formulas() {
        let xs = [1e9 + 1.0, 1e9 + 2.0, 1e9 + 4.0, 1e9 + 7.0];
        let mut m = Moments::ZERO;
        for x in xs {
            m.push(x, 1e9);
        }
        let est = m.summarize(1e9);
        assert_eq!(est.mean, 1e9 + 3.5);
        // Sample variance of 1,2,4,7 is 7; se = sqrt(7/4).
        assert!((est.std_err.unwrap() - (7.0f64 / 4.0).sqrt()).abs() < 1e-12);
        let (lo, hi) = est.ci95.unwrap();
        // t_{0.975,3} = 3.182446305284263
        let t = (hi - lo) / 2.0 / est.std_err.unwrap();
        assert!((t - 3.182_446_305_284_263).abs() < 1e-6, "t = {t}");
    }

    #[test]
    fn merge_is_concatenation() {
        let (mut a, mut b, mut all) = (Moments::ZERO, Moments::ZERO, Moments::ZERO);
        for i in 0..10 {
            let v = (i * i) as f64;
            all.push(v, 3.0);
            if i < 4 { a.push(v, 3.0) } else { b.push(v, 3.0) }
        }
        a.merge(&b);
        assert_eq!(a, all);
        // Infinite values are counted across a merge too.
        let (mut a, mut b, mut all) = (Moments::ZERO, Moments::ZERO, Moments::ZERO);
        for v in [1.0, f64::INFINITY, 2.0, f64::INFINITY, 5.0] {
            all.push(v, 0.0);
        }
        [1.0, f64::INFINITY].into_iter().for_each(|v| a.push(v, 0.0));
        [2.0, f64::INFINITY, 5.0].into_iter().for_each(|v| b.push(v, 0.0));
        a.merge(&b);
        assert_eq!((a.infinite(), a.count()), (2, 5));
        assert_eq!(all.infinite(), 2);
    }

    #[test]
    fn undefined_spread_is_none() {
        let mut one = Moments::ZERO;
        one.push(2.0, 0.0);
        assert_eq!(one.summarize(0.0).std_err, None);
        let mut inf = Moments::ZERO;
        inf.push(1.0, 1.0);
        inf.push(3.0, 1.0);
        inf.push(f64::INFINITY, 1.0);
        let est = inf.summarize(1.0);
        assert_eq!(est.mean, f64::INFINITY);
        assert_eq!(est.std_err, None);
        assert_eq!(est.ci95, None);
        assert_eq!(inf.infinite(), 1);
    }
}
