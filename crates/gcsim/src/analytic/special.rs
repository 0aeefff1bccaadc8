//! Harmonic-number differences and log-gamma ratios, computed without the
//! cancellation of subtracting two large values (n can be 10⁶).
//!
//! `H_n − H_j` is the exponential order-statistic mean (Rényi's
//! representation, David & Nagaraja 2003, §6.7); `ln Γ(x) − ln Γ(x − β)` is
//! the Pareto order-statistic mean (David & Nagaraja 2003, §3.1).

use statrs::function::gamma::ln_gamma;

/// Euler–Mascheroni constant.
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// `H_m − ln m − γ` by its asymptotic series; accurate to 1e-20 for m ≥ 1000.
fn harmonic_remainder(m: f64) -> f64 {
    let r = 1.0 / (m * m);
    1.0 / (2.0 * m) - r * (1.0 / 12.0 - r * (1.0 / 120.0 - r / 252.0))
}

/// `H_j = Σ_{i=1}^{j} 1/i` summed smallest term first.
fn harmonic_direct(from: u64, to: u64) -> f64 {
    (from + 1..=to).rev().map(|i| 1.0 / i as f64).sum()
}

/// `H_n − H_j = Σ_{i=j+1}^{n} 1/i` for `j ≤ n`, to a few ulps, in at most
/// 10⁴ operations.
pub(crate) fn harmonic_diff(n: u64, j: u64) -> f64 {
    assert!(j <= n, "harmonic_diff needs j ≤ n");
    if n - j <= 10_000 {
        return harmonic_direct(j, n);
    }
    let nf = n as f64;
    if j < 1000 {
        // n > 10⁴: the series for H_n is exact to rounding.
        return nf.ln() + EULER_GAMMA + harmonic_remainder(nf) - harmonic_direct(0, j);
    }
    let jf = j as f64;
    ((nf - jf) / jf).ln_1p() + harmonic_remainder(nf) - harmonic_remainder(jf)
}

/// `ω(z) = ln Γ(z) − (z − ½)ln z + z − ½ln 2π`, the Stirling remainder, for z ≥ 30.
fn stirling_remainder(z: f64) -> f64 {
    let r = 1.0 / (z * z);
    (1.0 / 12.0 - r * (1.0 / 360.0 - r * (1.0 / 1260.0 - r / 1680.0))) / z
}

/// `ln Γ(x) − ln Γ(x − β)` for `x − β > 0`, accurate in relative terms even
/// when both log-gammas are of order 10⁷.
pub(crate) fn ln_gamma_ratio(x: f64, beta: f64) -> f64 {
    let y = x - beta;
    assert!(y > 0.0, "ln_gamma_ratio needs x > β");
    if y < 30.0 {
        return ln_gamma(x) - ln_gamma(y);
    }
    beta * x.ln() - (y - 0.5) * (-beta / x).ln_1p() - beta + stirling_remainder(x) - stirling_remainder(y)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference values keep the digits they were computed to
mod tests {
    use super::*;

    #[test]
    fn harmonic_diff_matches_direct_sums() {
        for &(n, j) in &[
            (0u64, 0u64),
            (1, 0),
            (100, 0),
            (100, 80),
            (20_000, 3),
            (20_000, 999),
            (20_000, 1000),
            (50_000, 5000),
        ] {
            let direct = harmonic_direct(j, n);
            let fast = harmonic_diff(n, j);
            assert!(
                (fast - direct).abs() <= 1e-14 * direct.max(1e-300),
                "H_{n} − H_{j}: {fast} vs {direct}"
            );
        }
    }

    #[test]
    fn harmonic_diff_large_n() {
        // H_{10⁶} from 50-digit arithmetic (mpmath harmonic(10**6)).
        let h = 14.392_726_722_865_723_631_381_127_493;
        assert!((harmonic_diff(1_000_000, 0) - h).abs() < 1e-14 * h);
        let d = harmonic_diff(1_000_000, 999_000);
        let direct = harmonic_direct(999_000, 1_000_000);
        assert!((d - direct).abs() < 1e-13 * d);
    }

    /// Against 40-digit values (mpmath), to 1e-14 relative.
    #[test]
    fn ln_gamma_ratio_matches_reference_values() {
        let cases = [
            (5.0, 0.5, 0.724_317_259_505_503_399_14),
            (31.0, 0.9, 3.062_584_284_228_922_824_2),
            (40.0, 2.5, 9.109_985_037_755_254_928_7),
            (200.0, 0.01, 0.052_957_902_201_969_798_762),
            (1e4, 1.0 / 3.0, 3.070_091_234_485_871_441),
            (1e6 + 1.0, 0.5, 6.907_755_403_982_137_052),
        ];
        for (x, b, want) in cases {
            let got = ln_gamma_ratio(x, b);
            assert!((got - want).abs() < 1e-14 * want, "x={x} β={b}: {got} vs {want}");
        }
    }
}
