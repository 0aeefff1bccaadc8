//! Binomial tail probabilities, which are the k-of-n order-statistic laws.
//!
//! With i.i.d. workers of CDF F, the k-th smallest of n times is ≤ t exactly
//! when at least k workers have finished, so (David & Nagaraja 2003, §2.1)
//! `P(T ≤ t) = P(Bin(n, F(t)) ≥ k) = I_{F(t)}(k, n−k+1)` and
//! `P(T > t) = P(Bin(n, F(t)) ≤ k−1) = I_{S(t)}(n−k+1, k)`.
//!
//! For integer parameters the regularized incomplete beta is this binomial
//! tail, which is evaluated here by summing probability masses outward from
//! `k` on the side away from the mode, where the terms fall geometrically.
//! Each mass uses Loader's saddle-point form (Loader 2000, "Fast and accurate
//! computation of binomial probabilities"), which is accurate to a few ulps
//! even for n = 10⁶, and takes both `p` and `q = 1 − p` so that a worker
//! survival S(t) of 10⁻¹² keeps all its digits. The continued fraction in
//! `statrs::function::beta::beta_reg` stops after 140 terms, which leaves
//! errors of order 10⁻³ at n = 10⁶, k = n/2; it is therefore used only where
//! the first parameter is not an integer (the Pareto tail, see `tail.rs`).

use std::f64::consts::PI;

/// `ln(n!) − ln(√(2πn)·(n/e)ⁿ)` for n = 0..=15 (n = 0 is unused).
#[allow(clippy::excessive_precision)] // the published digits, rounded by the compiler
const STIRLERR_SMALL: [f64; 16] = [
    0.0,
    0.081_061_466_795_327_26,
    0.041_340_695_955_409_29,
    0.027_677_925_684_998_34,
    0.020_790_672_103_765_09,
    0.016_644_691_189_821_19,
    0.013_876_128_823_070_75,
    0.011_896_709_945_891_77,
    0.010_411_265_261_972_1,
    0.009_255_462_182_712_733,
    0.008_330_563_433_362_871,
    0.007_573_675_487_951_841,
    0.006_942_840_107_209_53,
    0.006_408_994_188_004_207,
    0.005_951_370_112_758_848,
    0.005_554_733_551_962_801,
];

/// The error of Stirling's formula for `ln(n!)`, for integer `n ≥ 1`.
fn stirlerr(n: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        return STIRLERR_SMALL[n as usize];
    }
    let nn = n * n;
    if n > 500.0 {
        (S0 - S1 / nn) / n
    } else if n > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / n
    } else if n > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
    }
}

/// `x·ln(x/np) + np − x`, without the cancellation of the direct form when
/// `x ≈ np`.
fn bd0(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let mut v = (x - np) / (x + np);
        let mut s = (x - np) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        for j in 1..1000 {
            ej *= v;
            let s1 = s + ej / f64::from(2 * j + 1);
            if s1 == s {
                return s1;
            }
            s = s1;
        }
        s
    } else {
        x * (x / np).ln() + np - x
    }
}

/// `P(Bin(n, p) = x)` with `q = 1 − p` given separately, `0 ≤ x ≤ n` integers.
pub(crate) fn pmf(x: f64, n: f64, p: f64, q: f64) -> f64 {
    if p == 0.0 {
        return if x == 0.0 { 1.0 } else { 0.0 };
    }
    if q == 0.0 {
        return if x == n { 1.0 } else { 0.0 };
    }
    if x == 0.0 {
        let lc = if p < 0.1 { -bd0(n, n * q) - n * p } else { n * q.ln() };
        return lc.exp();
    }
    if x == n {
        let lc = if q < 0.1 { -bd0(n, n * p) - n * q } else { n * p.ln() };
        return lc.exp();
    }
    let lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, n * p) - bd0(n - x, n * q);
    // ln(2π·x·(n−x)/n); n − x is exact, where ln(1 − x/n) would lose the
    // digits of n − x for x close to n.
    let lf = (2.0 * PI * x * ((n - x) / n)).ln();
    (lc - 0.5 * lf).exp()
}

/// Relative size below which the rest of a geometric tail is dropped.
const TAIL_EPS: f64 = 1e-18;

/// `P(Bin(n,p) ≥ k)` (`upward`) or `P(Bin(n,p) ≤ k−1)` (downward), by summing
/// masses outward from the boundary. Once the ratio of successive terms is
/// below 1 it stays so, and the geometric bound on the rest decides when to
/// stop; before that (when the sum starts on the mode's side) it walks
/// through the mode.
fn tail_sum(n: f64, k: f64, p: f64, q: f64, upward: bool) -> f64 {
    let odds = p / q;
    let mut j = if upward { k } else { k - 1.0 };
    let mut term = pmf(j, n, p, q);
    let mut sum = 0.0;
    while term > 0.0 {
        sum += term;
        if (upward && j >= n) || (!upward && j <= 0.0) {
            break;
        }
        let ratio = if upward {
            (n - j) / (j + 1.0) * odds
        } else {
            j / (n - j + 1.0) / odds
        };
        term *= ratio;
        j += if upward { 1.0 } else { -1.0 };
        if ratio < 1.0 && term / (1.0 - ratio) < TAIL_EPS * sum {
            sum += term / (1.0 - ratio);
            break;
        }
    }
    sum.min(1.0)
}

/// `(P(Bin(n,p) ≤ k−1), P(Bin(n,p) ≥ k))` for `1 ≤ k ≤ n`, with `q = 1 − p`.
///
/// The smaller of the two is summed and the other is its complement, so each
/// value is accurate where it is small. The tail on the far side of the mean
/// is tried first; it is the smaller one except within a few terms of the
/// mean, where the other side is summed as well. Cost: about `10·√(n·p·q)`
/// terms at worst, far fewer in the tails.
pub(crate) fn tails(n: u64, k: u64, p: f64, q: f64) -> (f64, f64) {
    debug_assert!(1 <= k && k <= n);
    if p <= 0.0 {
        return (1.0, 0.0);
    }
    if q <= 0.0 {
        return (0.0, 1.0);
    }
    let (nf, kf) = (n as f64, k as f64);
    let upward = kf > nf * p;
    let mut small = tail_sum(nf, kf, p, q, upward);
    let mut small_is_upper = upward;
    if small > 0.5 {
        small = tail_sum(nf, kf, p, q, !upward);
        small_is_upper = !upward;
    }
    if small_is_upper {
        (1.0 - small, small)
    } else {
        (small, 1.0 - small)
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference values keep the digits they were computed to
mod tests {
    use super::*;

    fn ln_choose(n: u64, j: u64) -> f64 {
        (1..=j).map(|i| ((n - j + i) as f64 / i as f64).ln()).sum()
    }

    /// Naive `Σ_{j=k}^{n} C(n,j) p^j q^(n−j)` for small n.
    fn naive_upper(n: u64, k: u64, p: f64) -> f64 {
        (k..=n)
            .map(|j| (ln_choose(n, j) + j as f64 * p.ln() + (n - j) as f64 * (1.0 - p).ln()).exp())
            .sum()
    }

    #[test]
    fn pmf_matches_direct_product() {
        for &(n, p) in &[(10u64, 0.3f64), (40, 0.01), (25, 0.97)] {
            for x in 0..=n {
                let direct = (ln_choose(n, x) + x as f64 * p.ln() + (n - x) as f64 * (1.0 - p).ln()).exp();
                let fast = pmf(x as f64, n as f64, p, 1.0 - p);
                assert!(
                    (fast - direct).abs() <= 1e-12 * direct,
                    "n={n} x={x} p={p}: {fast} vs {direct}"
                );
            }
        }
    }

    /// Against 40-digit values (mpmath) on both sides of every series switch;
    /// the error enters the log of a probability, so it is bounded absolutely.
    #[test]
    fn stirlerr_matches_reference_values() {
        let cases = [
            (16.0, 0.005_207_655_919_609_640_440_7),
            (35.0, 0.002_380_887_608_234_111_985_7),
            (36.0, 0.002_314_755_290_514_683_866_8),
            (80.0, 0.001_041_661_241_561_619_068_5),
            (81.0, 0.001_028_801_357_710_777_509_4),
            (500.0, 0.000_166_666_644_444_469_841_19),
            (501.0, 0.000_166_333_976_579_932_705_18),
            (1e6, 8.333_333_333_333_055_555_6e-8),
        ];
        for (n, want) in cases {
            assert!((stirlerr(n) - want).abs() < 2e-16, "n={n}: {} vs {want}", stirlerr(n));
        }
    }

    /// The summed tails against naive summation and against statrs' beta form
    /// (accurate for these small parameters), to 1e-12.
    #[test]
    fn tails_match_naive_and_beta_forms() {
        for &n in &[1u64, 2, 5, 17, 60] {
            for k in 1..=n {
                for &p in &[1e-3, 0.05, 0.3, 0.5, 0.77, 0.999] {
                    let (lo, up) = tails(n, k, p, 1.0 - p);
                    let naive = naive_upper(n, k, p);
                    let beta = statrs::function::beta::beta_reg(k as f64, (n - k + 1) as f64, p);
                    assert!((up - naive).abs() < 1e-12, "n={n} k={k} p={p}: {up} vs {naive}");
                    assert!((up - beta).abs() < 1e-12, "n={n} k={k} p={p}: {up} vs beta {beta}");
                    assert!((lo + up - 1.0).abs() < 1e-15);
                }
            }
        }
    }

    /// Reference values from 40-digit summation (mpmath) at n = 10⁶, to 1e-12, where the
    /// 140-term continued fraction of statrs is off by up to 1e-3.
    #[test]
    fn large_n_reference_values() {
        let n = 1_000_000u64;
        // p is the f64 value exactly and q = 1 − p as f64 computes it.
        let cases = [
            (n - 1000, 0.999, 0.508_409_368_220_764_598),
            (n - 1000, 0.998_95, 0.062_334_597_131_321_491_3),
            (n / 2, 0.5, 0.500_398_942_180_665_875),
            (n / 2, 0.5005, 0.841_586_716_672_080_343),
            (n, 0.999_999_9, 0.904_837_413_559_398_844),
            (1, 1e-6, 0.632_120_742_768_354_889),
            (n - 10, 0.999_99, 0.583_039_750_199_721_92),
        ];
        for (k, p, want) in cases {
            let (lo, up) = tails(n, k, p, 1.0 - p);
            assert!((up - want).abs() < 1e-12 * want, "k={k} p={p}: {up} vs {want}");
            assert!((lo - (1.0 - want)).abs() < 1e-11, "k={k} p={p}: {lo}");
        }
        // The lower tail keeps its relative accuracy when it is tiny. The
        // tolerance is the conditioning of the value itself: a rounding of p
        // by 1e-16 moves it by about n·1e-16.
        let (lo, _) = tails(n, n - 1000, 1.0 - 0.0008, 0.0008);
        let want = 4.291_153_964_057_263_5e-12;
        assert!((lo - want).abs() < 1e-9 * want, "{lo}");
    }
}
