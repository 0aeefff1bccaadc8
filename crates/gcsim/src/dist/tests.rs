//! The laws' functions against each other, reference values and their samplers.

use super::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn laws() -> Vec<Dist> {
    vec![
        Dist::exp(2.0).unwrap(),
        Dist::shifted_exp(1.5, 0.5).unwrap(),
        Dist::pareto(1.0, 2.5).unwrap(),
        Dist::exp(1.0).unwrap().with_stragglers(0.05, 8.0).unwrap(),
        Dist::pareto(2.0, 1.5).unwrap().with_stragglers(0.3, 4.0).unwrap(),
        Dist::lognormal(0.3, 0.8).unwrap(),
        Dist::lognormal(-2.0, 2.5).unwrap(),
        Dist::weibull(1.5, 0.6).unwrap(),
        Dist::weibull(2.0, 3.5).unwrap(),
        Dist::lognormal(0.0, 0.5).unwrap().with_stragglers(0.05, 8.0).unwrap(),
        Dist::weibull(1.0, 1.7).unwrap().with_stragglers(0.1, 5.0).unwrap(),
    ]
}

#[test]
fn quantile_inverts_cdf() {
    for d in laws() {
        for p in [1e-6, 0.01, 0.3, 0.5, 0.9, 0.99, 0.999_999] {
            let x = d.quantile(p);
            assert!((d.cdf(x) - p).abs() < 1e-12, "{d}: F(Q({p})) = {}", d.cdf(x));
        }
    }
}

#[test]
fn pdf_is_derivative_of_cdf() {
    for d in laws() {
        for p in [0.1, 0.5, 0.93] {
            let x = d.quantile(p);
            let h = 1e-6 * x;
            let numeric = (d.cdf(x + h) - d.cdf(x - h)) / (2.0 * h);
            assert!((numeric - d.pdf(x)).abs() < 1e-5 * d.pdf(x).max(1.0), "{d} at {x}");
        }
    }
}

#[test]
fn means() {
    assert_eq!(Dist::exp(4.0).unwrap().mean(), 0.25);
    assert_eq!(Dist::shifted_exp(1.0, 2.0).unwrap().mean(), 1.5);
    assert_eq!(Dist::pareto(1.0, 3.0).unwrap().mean(), 1.5);
    assert_eq!(Dist::pareto(1.0, 1.0).unwrap().mean(), f64::INFINITY);
    let m = Dist::exp(1.0).unwrap().with_stragglers(0.05, 8.0).unwrap();
    assert!((m.mean() - 1.35).abs() < 1e-15);
    // exp(1 + 0.5²/2) and 2·Γ(1 + 1/2) = √π.
    assert!((Dist::lognormal(1.0, 0.5).unwrap().mean() - 1.125f64.exp()).abs() < 1e-14);
    let w = Dist::weibull(2.0, 2.0).unwrap().mean();
    assert!((w - std::f64::consts::PI.sqrt()).abs() < 1e-14, "{w}");
    // Shape 1 is the exponential with rate 1/scale.
    assert!((Dist::weibull(3.0, 1.0).unwrap().mean() - 3.0).abs() < 1e-14);
}

/// Reference values: the log-normal's quartiles are `exp(μ ± 0.6744897501960817σ)`
/// (Φ⁻¹(0.75) to 16 digits); Weibull shape 1 is the exponential.
#[test]
fn new_laws_against_reference_values() {
    let d = Dist::lognormal(0.5, 2.0).unwrap();
    let q3 = (0.5 + 2.0 * 0.674_489_750_196_081_7f64).exp();
    assert!((d.quantile(0.75) - q3).abs() < 1e-13 * q3, "{}", d.quantile(0.75));
    assert!((d.cdf(0.5f64.exp()) - 0.5).abs() < 1e-15);
    // Φ(1) = 0.8413447460685429 (Abramowitz & Stegun table 26.1).
    let x = (0.5f64 + 2.0).exp();
    assert!((d.cdf(x) - 0.841_344_746_068_542_9).abs() < 1e-15, "{}", d.cdf(x));
    let w = Dist::weibull(2.0, 1.0).unwrap();
    let e = Dist::exp(0.5).unwrap();
    for x in [0.01, 1.0, 7.0, 40.0] {
        assert!((w.sf(x) - e.sf(x)).abs() < 1e-15 * e.sf(x), "{x}");
        assert!((w.pdf(x) - e.pdf(x)).abs() < 1e-15 * e.pdf(x).max(1e-300), "{x}");
    }
    assert_eq!(Dist::weibull(1.0, 2.0).unwrap().support_min(), 0.0);
}

/// Kolmogorov–Smirnov test of every sampler against its own CDF
/// (rand_distr's `distr_test` pattern). With 20 000 draws the 0.1% critical
/// value of √N·D is 1.95; a wrong rate, shift or mixture weight of even a
/// few percent is far above it.
#[test]
fn samplers_match_their_cdf() {
    let n = 20_000;
    for (i, d) in laws().into_iter().enumerate() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(42 + i as u64);
        let mut xs: Vec<f64> = (0..n).map(|_| d.sample(&mut rng)).collect();
        xs.sort_by(f64::total_cmp);
        let mut dmax: f64 = 0.0;
        for (j, &x) in xs.iter().enumerate() {
            let f = d.cdf(x);
            dmax = dmax.max((f - j as f64 / n as f64).abs());
            dmax = dmax.max(((j + 1) as f64 / n as f64 - f).abs());
        }
        let stat = dmax * (n as f64).sqrt();
        assert!(stat < 1.95, "{d}: KS statistic {stat}");
    }
}

#[test]
fn scaling_scales_every_quantile() {
    for d in laws() {
        let s = d.scaled(2.5).unwrap();
        for p in [0.1, 0.5, 0.99] {
            assert!(
                (s.quantile(p) - 2.5 * d.quantile(p)).abs() < 1e-9 * d.quantile(p),
                "{d}"
            );
        }
    }
}

#[test]
fn invalid_parameters_name_the_key() {
    let err = Dist::exp(0.0).unwrap_err();
    assert!(err.to_string().contains("rate"), "{err}");
    assert!(Dist::shifted_exp(-1.0, 1.0).is_err());
    assert!(Dist::pareto(1.0, f64::NAN).is_err());
    assert!(Dist::pareto(f64::INFINITY, 1.0).is_err());
    assert!(Dist::lognormal(0.0, 0.0).unwrap_err().to_string().contains("sigma"));
    assert!(Dist::lognormal(f64::NAN, 1.0).unwrap_err().to_string().contains("mu"));
    assert!(Dist::weibull(1.0, -1.0).unwrap_err().to_string().contains("shape"));
    assert!(Dist::weibull(0.0, 1.0).unwrap_err().to_string().contains("scale"));
    let base = Dist::exp(1.0).unwrap();
    assert!(base.with_stragglers(1.5, 2.0).is_err());
    assert!(base.with_stragglers(0.1, 0.5).is_err());
}

#[test]
fn independent_drops_groups_and_persistence() {
    let d: Dist = "exp:rate=2,p_slow=0.1,slowdown=4,group=3,p_group=0.2,group_slowdown=2,persist=0.5"
        .parse()
        .unwrap();
    let i = d.independent();
    assert_eq!((i.groups(), i.persist()), (None, 0.0));
    assert_eq!(i.stragglers(), d.stragglers());
    assert_eq!(i.base(), d.base());
    assert!(d.is_stateful() && !i.is_stateful());
    // One worker's marginal law mixes over its group's state.
    assert!((d.mean() - i.mean() * (0.8 + 0.2 * 2.0)).abs() < 1e-15);
}
