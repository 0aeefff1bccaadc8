//! The table and the roots against independently written laws.

use super::*;
use statrs::function::beta::beta_reg;
use statrs::function::gamma::{gamma_lr, gamma_ur};

/// The laws of the tests: Erlang shapes and hypoexponential ratios,
/// each with its survival function written independently (statrs's
/// regularized incomplete gamma on the side where it keeps its digits;
/// the rates' symmetric form), as −ln S.
/// A law and its cumulative hazard written independently.
type Reference = (HazardQuantile, Box<dyn Fn(f64) -> f64>);

fn laws() -> Vec<Reference> {
    let mut laws: Vec<Reference> = Vec::new();
    for shape in [2u32, 3, 5, 10, 26, 51, 100, 400, 1024] {
        let l = f64::from(shape);
        let h = move |x: f64| {
            if x < l {
                -(-gamma_lr(l, x)).ln_1p()
            } else {
                -gamma_ur(l, x).ln()
            }
        };
        laws.push((HazardQuantile::erlang(shape), Box::new(h)));
    }
    laws.push((HazardQuantile::hypoexponential(1.0), Box::new(|x: f64| x - x.ln_1p())));
    for ratio in [1.5, 2.0, 10.0, 1000.0] {
        let h = move |x: f64| -((ratio * (-x).exp() - (-ratio * x).exp()) / (ratio - 1.0)).ln();
        laws.push((HazardQuantile::hypoexponential(ratio), Box::new(h)));
    }
    // E_(k) of n: below k of n uniforms, F = I_p(k, n − k + 1), the
    // regularized incomplete beta (David & Nagaraja 2003, §2.2), on the
    // side of its median where it keeps its digits.
    for (k, n) in ORDER_STATISTICS.into_iter().filter(|&(k, n)| k < n) {
        let (a, b) = (k as f64, (n - k + 1) as f64);
        let h = move |x: f64| {
            let (p, q) = (-(-x).exp_m1(), (-x).exp());
            if p < a / (a + b) {
                -(-beta_reg(a, b, p)).ln_1p()
            } else {
                -beta_reg(b, a, q).ln()
            }
        };
        laws.push((HazardQuantile::order_statistic(k, n), Box::new(h)));
    }
    // The largest of n: F = pⁿ, so H = −ln(1 − e^(n·ln p)), ln p and
    // ln(1 − F) each from the side of ½ where they keep their digits.
    for (_, n) in ORDER_STATISTICS.into_iter().filter(|&(k, n)| k == n) {
        let h = move |x: f64| {
            use std::f64::consts::LN_2;
            let ln_p = if x > LN_2 {
                (-(-x).exp()).ln_1p()
            } else {
                (-(-x).exp_m1()).ln()
            };
            let ln_f = n as f64 * ln_p;
            if ln_f < -LN_2 {
                -(-ln_f.exp()).ln_1p()
            } else {
                -(-ln_f.exp_m1()).ln()
            }
        };
        laws.push((HazardQuantile::order_statistic(n, n), Box::new(h)));
    }
    laws
}

/// (k, n) of the order statistics of the tests: the smallest k, the lowest
/// of the sampler's top block at n = 40, 100, 2000 and 10⁵, the median of
/// 7, and the largest of 12, 100 and 10⁵ (drawn alone where a study reads
/// only the largest time).
const ORDER_STATISTICS: [(u64, u64); 9] = [
    (2, 2),
    (9, 40),
    (50, 100),
    (1000, 2000),
    (4, 7),
    (98_977, 100_000),
    (12, 12),
    (100, 100),
    (100_000, 100_000),
];

/// The root solves H(x) = e: the error in x that the independent
/// H(root) − e implies, (H − e)/λ, is under 1e-12 of x, for e from 1e-9
/// to 500 (statrs's Q underflows beyond); from 1e-4 for the
/// hypoexponential, whose symmetric form loses the digits of a smaller
/// H to the cancellation in 1 − S.
#[test]
fn the_root_inverts_the_survival_function() {
    for (q, h) in laws() {
        let lowest = if matches!(q.law, Law::Hypoexponential { .. }) {
            1e-4
        } else {
            1e-9
        };
        for &e in &[
            1e-9, 1e-4, 0.01, 0.1, 0.5, 0.693, 1.0, 2.0, 5.0, 10.0, 40.0, 100.0, 500.0,
        ] {
            if e < lowest {
                continue;
            }
            let x = q.root(e);
            let (_, rate, _) = q.hazard(x);
            let implied = (h(x) - e) / rate;
            assert!(implied.abs() <= 1e-12 * x, "{:?} e {e}: x {x}, H {}", q.law, h(x));
        }
    }
}

/// The hazard's slope is the derivative of the hazard: against a
/// central difference of step 1e-7·x, to 1e-6 relative.
#[test]
fn the_hazard_slope_is_its_derivative() {
    for (q, _) in laws() {
        for x in [0.05, 0.7, 3.0, 30.0, 300.0] {
            let (_, rate, slope) = q.hazard(x);
            let step = 1e-7 * x;
            let numeric = (q.hazard(x + step).1 - q.hazard(x - step).1) / (2.0 * step);
            let scale = slope.abs().max(rate / x).max(1e-300);
            assert!(
                (slope - numeric).abs() <= 1e-6 * scale,
                "{:?} x {x}: {slope} vs {numeric}",
                q.law
            );
        }
    }
}

/// The table agrees with the root to 1e-12 relative everywhere in it:
/// 40 points per cell edge to edge in three binades, and a spread of
/// points over every binade.
#[test]
fn the_table_agrees_with_the_root() {
    let log_normals = log_normal_sigmas().map(HazardQuantile::log_normal);
    let powers = POWERS.map(HazardQuantile::power);
    for q in laws().into_iter().map(|(q, _)| q).chain(log_normals).chain(powers) {
        let worst = worst_table_error(&q);
        assert!(worst < 1e-12, "{:?}: worst relative error {worst:e}", q.law);
    }
}

/// The table serves every binade of the Erlang, hypoexponential and
/// order-statistic laws and of the powers of the tests, none of e^10, and of the log-normal at σ = 1 those below e = 16 (the largest
/// of a million workers is about 13.8 + a Gumbel variate); at σ = 2,
/// those below e = 4.
#[test]
fn where_the_table_serves() {
    let binades = |q: &HazardQuantile| (DEEP_LOW..HIGH).filter(|&b| q.tabulates(2f64.powi(b) * 1.5)).count();
    for (q, _) in laws() {
        // An order statistic's table reaches deeper (its exponential
        // falls below 2⁻⁸ in one trial of 250).
        let low = if matches!(q.law, Law::OrderStatistic { .. }) {
            DEEP_LOW
        } else {
            LOW
        };
        assert_eq!(binades(&q), (HIGH - low) as usize, "{:?}", q.law);
    }
    assert_eq!(binades(&HazardQuantile::log_normal(1.0)), (4 - LOW) as usize);
    assert_eq!(binades(&HazardQuantile::log_normal(2.0)), (2 - LOW) as usize);
    for p in POWERS {
        assert_eq!(binades(&HazardQuantile::power(p)), (HIGH - LOW) as usize, "power {p}");
    }
    // Weibull shape 0.1: e^10 bends too much for 32 cells a binade.
    assert_eq!(binades(&HazardQuantile::power(10.0)), 0);
    assert!(!HazardQuantile::erlang(1).tabulates(1.0));
    assert!(!HazardQuantile::erlang(3).tabulates(2f64.powi(HIGH)));
}

/// Powers of the tests: Weibull shapes 5, 2, 1 (the identity), 2/3
/// and 1/2 (a square, which the quintic holds exactly).
const POWERS: [f64; 5] = [0.2, 0.5, 1.0, 1.5, 2.0];

/// The power's knots: its value and derivatives against central
/// differences (step 1e-5·e, to 1e-6 of the larger of x' and x/e for
/// x', 1e-4 of the larger of x'' and x/e² for x'').
#[test]
fn the_power_and_its_derivatives() {
    for p in POWERS {
        let q = HazardQuantile::power(p);
        for e in [0.01f64, 0.3, 1.0, 7.0, 100.0] {
            let (x, d1, d2) = q.knot(e, 0.0);
            assert_eq!(x, e.powf(p));
            let h = 1e-5 * e;
            let (up, down) = (q.root(e + h), q.root(e - h));
            let numeric1 = (up - down) / (2.0 * h);
            let numeric2 = (up - 2.0 * x + down) / (h * h);
            assert!(
                (d1 - numeric1).abs() <= 1e-6 * d1.abs().max(x / e),
                "p {p} e {e}: {d1} vs {numeric1}"
            );
            let scale = d2.abs().max(x / (e * e));
            assert!((d2 - numeric2).abs() <= 1e-4 * scale, "p {p} e {e}: {d2} vs {numeric2}");
        }
    }
}

/// The log-normal σ of the tests, up to the table's largest.
fn log_normal_sigmas() -> impl Iterator<Item = f64> {
    [0.05, 0.3, 1.0, 1.5, MAX_TABLE_SIGMA].into_iter()
}

/// The largest relative difference of the table from the root (or the
/// closed form): 40 points per cell edge to edge in three binades, and
/// a spread of points over every binade.
fn worst_table_error(q: &HazardQuantile) -> f64 {
    let mut worst: f64 = 0.0;
    let mut check = |e: f64| {
        let (a, b) = (q.at(e), q.root(e));
        worst = worst.max((a - b).abs() / b);
    };
    for binade in [q.low, LOW, 0, HIGH - 1] {
        let base = 2f64.powi(binade);
        for i in 0..CELLS * 40 {
            check(base * (1.0 + i as f64 / (CELLS * 40) as f64));
        }
    }
    let mut e = 2f64.powi(q.low);
    while e < 2f64.powi(HIGH) {
        check(e);
        e *= 1.0 + 1.0 / 997.0;
    }
    worst
}

/// The log-normal closed form is the law's quantile: against
/// e^(σz) with z from statrs's erfc⁻¹ fed the tail probability that
/// keeps its digits (z = √2·erfc⁻¹(2t) for t = e^(−e) ≤ 1/2, else
/// −√2·erfc⁻¹(2(1 − t))), to 1e-12 relative; and its knots' derivatives
/// against central differences of it (step 1e-5·e; x' to 1e-6 relative,
/// x'' to 1e-4 of the larger of x'' and x'/e).
#[test]
fn the_log_normal_closed_form_and_its_derivatives() {
    use statrs::function::erf::erfc_inv;
    use std::f64::consts::SQRT_2;
    for sigma in log_normal_sigmas() {
        let q = HazardQuantile::log_normal(sigma);
        for e in [0.01f64, 0.1, 0.5, 0.693, 1.0, 2.0, 5.0, 10.0, 20.0] {
            let t = (-e).exp();
            let z = if t <= 0.5 {
                SQRT_2 * erfc_inv(2.0 * t)
            } else {
                -SQRT_2 * erfc_inv(-2.0 * (-e).exp_m1())
            };
            let expected = (sigma * z).exp();
            let x = q.root(e);
            assert!(
                (x / expected - 1.0).abs() < 1e-12,
                "sigma {sigma} e {e}: {x} vs {expected}"
            );
            let (value, d1, d2) = q.knot(e, 0.0);
            assert_eq!(value, x);
            let h = 1e-5 * e;
            let (up, down) = (q.root(e + h), q.root(e - h));
            let numeric1 = (up - down) / (2.0 * h);
            let numeric2 = (up - 2.0 * x + down) / (h * h);
            assert!(
                (d1 - numeric1).abs() <= 1e-6 * d1.abs(),
                "sigma {sigma} e {e}: x' {d1} vs {numeric1}"
            );
            let scale = d2.abs().max(d1.abs() / e);
            assert!(
                (d2 - numeric2).abs() <= 1e-4 * scale,
                "sigma {sigma} e {e}: x'' {d2} vs {numeric2}"
            );
        }
    }
}

/// One unit is the exponential itself, bit for bit; outside the table
/// (tiny and huge e) the root answers.
#[test]
fn edges_of_the_table() {
    let one = HazardQuantile::erlang(1);
    for e in [0.0, 1e-300, 0.3, 1.0, 700.0] {
        assert_eq!(one.at(e).to_bits(), e.to_bits());
    }
    let q = HazardQuantile::erlang(4);
    for e in [1e-12, 2f64.powi(LOW) * 0.999, 2f64.powi(HIGH), 300.0] {
        assert_eq!(q.at(e), q.root(e));
    }
    assert_eq!(q.at(0.0), 0.0);
    // The left tail: Q ≈ 1 − x^ℓ/ℓ!, so x ≈ (e·ℓ!)^(1/ℓ).
    let x = q.at(1e-12);
    assert!((x / (24e-12f64).powf(0.25) - 1.0).abs() < 1e-3, "{x}");
    // Exp(1) + Exp(r): S ≈ 1 − r·x²/2 near 0.
    let x = HazardQuantile::hypoexponential(3.0).at(1e-12);
    assert!((x / (2e-12f64 / 3.0).sqrt() - 1.0).abs() < 1e-3, "{x}");
}

/// Four tables read side by side give each table's own values, bit for
/// bit: at E inside the tables, where a lane falls back to its root (zero,
/// far past the last binade, NaN), for the exponential law (no table), and
/// with the same table in two lanes.
#[test]
fn four_tables_at_once_are_each_tables_values() {
    let tables = [
        HazardQuantile::erlang(5),
        HazardQuantile::hypoexponential(2.0),
        HazardQuantile::log_normal(0.7),
        HazardQuantile::order_statistic(50, 100),
        HazardQuantile::power(0.5),
        // The exponential law itself: e, with no table.
        HazardQuantile::erlang(1),
    ];
    let e: Vec<f64> = (0..4000)
        .map(|i| match i % 97 {
            0 => 0.0,
            1 => 1e6,
            2 => f64::NAN,
            _ => 1e-3 * (1.0 + i as f64).powf(1.4),
        })
        .collect();
    for (q, window) in e.windows(4).enumerate() {
        let laws: [&HazardQuantile; 4] = std::array::from_fn(|l| &tables[(q + l * (1 + q % 2)) % tables.len()]);
        let es: [f64; 4] = window.try_into().unwrap();
        let got = HazardQuantile::at4(laws, es);
        for l in 0..4 {
            let want = laws[l].at(es[l]);
            assert!(
                got[l].to_bits() == want.to_bits(),
                "lane {l}, e {}: {} against {want}",
                es[l],
                got[l]
            );
        }
    }
}
