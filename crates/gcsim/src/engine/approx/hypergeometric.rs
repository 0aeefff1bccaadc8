//! Draws of the hypergeometric law: the number of marked items among
//! `draws` taken without replacement from `total`, `marked` of them marked.
//!
//! rand_distr's sampler (Kachitvichyanukul & Schmeiser 1985: H2PE, and
//! inversion, HIN, where the mode is below 10) starts HIN from P(X = x₀)
//! computed as a running product of factorials, which overflows once the
//! population passes a few thousand (K-async's staleness at n = 2000,
//! K = 100 refused with `PopulationTooLarge`). There this module runs the
//! same inversion from P(X = x₀) computed in logarithms, exact to rounding
//! for populations far past 10⁶.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Hypergeometric};
use statrs::function::gamma::ln_gamma;

/// One draw of Hypergeometric(`total`, `marked`, `draws`), for
/// `marked ≤ total` and `draws ≤ total`.
pub(super) fn sample(total: u64, marked: u64, draws: u64, rng: &mut impl Rng) -> u64 {
    assert!(
        marked <= total && draws <= total,
        "hypergeometric needs marked, draws ≤ total"
    );
    match Hypergeometric::new(total, marked, draws) {
        Ok(law) => law.sample(rng),
        Err(_) => inversion(total, marked, draws, rng),
    }
}

/// `ln C(n, j)`.
fn ln_choose(n: u64, j: u64) -> f64 {
    ln_gamma(n as f64 + 1.0) - ln_gamma(j as f64 + 1.0) - ln_gamma((n - j) as f64 + 1.0)
}

/// Inversion: the first x whose cumulative probability passes a uniform
/// draw, walking up from the least possible x by the ratio
/// P(x + 1)/P(x) = (K − x)(m − x) / ((x + 1)(N − K − m + x + 1)).
fn inversion(total: u64, marked: u64, draws: u64, rng: &mut impl Rng) -> u64 {
    let lo = (draws + marked).saturating_sub(total);
    let hi = marked.min(draws);
    let mut p = (ln_choose(marked, lo) + ln_choose(total - marked, draws - lo) - ln_choose(total, draws)).exp();
    let mut u: f64 = rng.random();
    let mut x = lo;
    while x < hi && u >= p {
        u -= p;
        let ratio =
            ((marked - x) as f64 * (draws - x) as f64) / ((x + 1) as f64 * (total - marked - draws + x + 1) as f64);
        p *= ratio;
        x += 1;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Where rand_distr's sampler accepts the parameters, the inversion
    /// agrees with it in mean and variance within 5 standard errors; where
    /// it refuses (n = 2000, r = K = 100, and n = 10⁶), the draws keep the
    /// law's mean mK/N and stay within [lo, hi].
    #[test]
    fn inversion_has_the_law_of_the_hypergeometric() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        for (total, marked, draws) in [
            (50u64, 12u64, 10u64),
            (2000, 100, 100),
            (1_000_000, 900, 1000),
            (30, 25, 20),
        ] {
            let reps = 20_000;
            let xs: Vec<f64> = (0..reps)
                .map(|_| inversion(total, marked, draws, &mut rng) as f64)
                .collect();
            let (n, m, k) = (total as f64, marked as f64, draws as f64);
            let mean = k * m / n;
            let var = k * m / n * (1.0 - m / n) * (n - k) / (n - 1.0);
            let got = xs.iter().sum::<f64>() / reps as f64;
            let got_var = xs.iter().map(|x| (x - got).powi(2)).sum::<f64>() / (reps - 1) as f64;
            assert!(
                (got - mean).abs() < 5.0 * (var / reps as f64).sqrt(),
                "{total} {marked} {draws}: mean {got} vs {mean}"
            );
            assert!(
                (got_var - var).abs() < 0.1 * var + 1e-9,
                "{total} {marked} {draws}: var {got_var} vs {var}"
            );
            let lo = (draws + marked).saturating_sub(total) as f64;
            assert!(xs.iter().all(|&x| x >= lo && x <= m.min(k)));
        }
        assert!(
            Hypergeometric::new(2000, 100, 100).is_err(),
            "rand_distr now takes it: the fallback may go"
        );
        let x = sample(2000, 100, 100, &mut rng);
        assert!(x <= 100);
    }
}
