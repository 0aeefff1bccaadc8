//! Fits against samples drawn with `Dist`'s own sampler at fixed seeds.
//! Tolerances are in asymptotic standard errors of the MLE (Johnson, Kotz &
//! Balakrishnan 1994: ch. 19 exponential, ch. 20 Pareto, ch. 14 log-normal,
//! ch. 21 Weibull, where Var k̂ ≈ 0.6079·k²/n and Var λ̂ ≈ 1.1087·λ²/(n·k²)).
//! With 4 standard errors a correct fit fails one check with probability
//! about 6·10⁻⁵; a wrong formula (divisor, a missing 1/k) misses by many.

use rand::SeedableRng;
use rand_distr::Distribution;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::dist::Base;

const Z: f64 = 4.0;

fn sample(d: &Dist, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n).map(|_| d.sample(&mut rng)).collect()
}

fn within(label: &str, got: f64, want: f64, se: f64) {
    assert!(
        (got - want).abs() < Z * se,
        "{label}: {got} vs {want} (se {se}, z {:.2})",
        (got - want) / se
    );
}

#[test]
fn recovers_known_parameters() {
    let n = 20_000;
    let rn = (n as f64).sqrt();
    let base = |family, d: &Dist, seed| fit(family, &sample(d, n, seed)).unwrap().law.base();

    let Base::Exp { rate } = base(Family::Exp, &Dist::exp(2.5).unwrap(), 1) else {
        panic!()
    };
    within("exp rate", rate, 2.5, 2.5 / rn);

    let Base::ShiftedExp { shift, rate } = base(Family::ShiftedExp, &Dist::shifted_exp(1.5, 0.5).unwrap(), 2) else {
        panic!()
    };
    within("shifted-exp rate", rate, 0.5, 0.5 / rn);
    // x₍₁₎ − shift is exponential with rate nμ; 10/(nμ) is exceeded with probability e⁻¹⁰.
    assert!(
        shift >= 1.5 - 1e-5 && shift - 1.5 < 10.0 / (n as f64 * 0.5),
        "shift {shift}"
    );

    let Base::Pareto { scale, shape } = base(Family::Pareto, &Dist::pareto(2.0, 3.0).unwrap(), 3) else {
        panic!()
    };
    within("pareto shape", shape, 3.0, 3.0 / rn);
    assert!(
        scale >= 2.0 - 1e-5 && scale - 2.0 < 10.0 * 2.0 / (n as f64 * 3.0),
        "scale {scale}"
    );

    let Base::LogNormal { mu, sigma } = base(Family::LogNormal, &Dist::lognormal(-0.7, 0.4).unwrap(), 4) else {
        panic!()
    };
    within("lognormal mu", mu, -0.7, 0.4 / rn);
    within("lognormal sigma", sigma, 0.4, 0.4 / (2.0f64.sqrt() * rn));

    for (i, (l, k)) in [(1.5, 0.7), (5.0, 3.5)].into_iter().enumerate() {
        let Base::Weibull { scale, shape } = base(Family::Weibull, &Dist::weibull(l, k).unwrap(), 5 + i as u64) else {
            panic!()
        };
        within("weibull shape", shape, k, 0.6079f64.sqrt() * k / rn);
        within("weibull scale", scale, l, 1.1087f64.sqrt() * l / (k * rn));
    }
}

/// The MLE maximises the likelihood: no other point (the true parameters, or
/// small moves of each fitted parameter) does better, beyond the rounding of
/// the parameters to six digits.
#[test]
fn fitted_likelihood_is_a_maximum() {
    let n = 2_000;
    let truths = [
        Dist::exp(1.0).unwrap(),
        Dist::shifted_exp(0.5, 2.0).unwrap(),
        Dist::pareto(1.0, 2.0).unwrap(),
        Dist::lognormal(0.0, 1.0).unwrap(),
        Dist::weibull(2.0, 1.7).unwrap(),
    ];
    for (family, truth) in Family::ALL.into_iter().zip(truths) {
        let xs = sample(&truth, n, 77);
        let f = fit(family, &xs).unwrap();
        let ll = |d: &Dist| xs.iter().map(|&x| mle::ln_pdf(d.base(), x)).sum::<f64>();
        let direct: f64 = xs.iter().map(|&x| f.law.pdf(x).ln()).sum();
        assert!((f.log_likelihood - direct).abs() < 1e-9 * direct.abs(), "{family:?}");
        let slack = 1e-6 * n as f64;
        assert!(
            f.log_likelihood >= ll(&truth) - slack,
            "{family:?}: {} < {}",
            f.log_likelihood,
            ll(&truth)
        );
        let moved: Vec<Dist> = match f.law.base() {
            Base::Exp { rate } => vec![Dist::exp(rate * 1.01).unwrap(), Dist::exp(rate * 0.99).unwrap()],
            Base::ShiftedExp { shift, rate } => vec![
                Dist::shifted_exp(shift * 0.99, rate).unwrap(),
                Dist::shifted_exp(shift, rate * 1.01).unwrap(),
                Dist::shifted_exp(shift, rate * 0.99).unwrap(),
            ],
            Base::Pareto { scale, shape } => vec![
                Dist::pareto(scale * 0.99, shape).unwrap(),
                Dist::pareto(scale, shape * 1.01).unwrap(),
                Dist::pareto(scale, shape * 0.99).unwrap(),
            ],
            Base::LogNormal { mu, sigma } => vec![
                Dist::lognormal(mu + 0.01, sigma).unwrap(),
                Dist::lognormal(mu - 0.01, sigma).unwrap(),
                Dist::lognormal(mu, sigma * 1.01).unwrap(),
                Dist::lognormal(mu, sigma * 0.99).unwrap(),
            ],
            Base::Weibull { scale, shape } => vec![
                Dist::weibull(scale * 1.01, shape).unwrap(),
                Dist::weibull(scale * 0.99, shape).unwrap(),
                Dist::weibull(scale, shape * 1.01).unwrap(),
                Dist::weibull(scale, shape * 0.99).unwrap(),
            ],
        };
        for d in moved {
            assert!(f.log_likelihood > ll(&d), "{family:?}: {d} has a higher likelihood");
        }
    }
}

/// The best fit by KS distance is the family the sample came from, or a
/// family that contains its law: the exponential is the Weibull with shape 1
/// and the shifted exponential with shift 0, and either may come out ahead
/// on an exponential sample. The best law must then be the sample's law to
/// within sampling error: sup |F_best − F_true| below 1.63/√n ([`ks_critical_1pct`]), the 1%
/// critical value of D for the empirical CDF itself (the fit is closer).
#[test]
fn picks_the_family_of_the_sample() {
    let n = 5_000;
    let cases = [
        (
            vec![Family::Exp, Family::Weibull, Family::ShiftedExp],
            Dist::exp(2.0).unwrap(),
        ),
        (vec![Family::ShiftedExp], Dist::shifted_exp(1.0, 2.0).unwrap()),
        (vec![Family::Pareto], Dist::pareto(1.0, 3.0).unwrap()),
        (vec![Family::LogNormal], Dist::lognormal(0.0, 0.5).unwrap()),
        (vec![Family::Weibull], Dist::weibull(1.0, 2.5).unwrap()),
        (vec![Family::Weibull], Dist::weibull(1.0, 0.6).unwrap()),
    ];
    for (i, (families, d)) in cases.into_iter().enumerate() {
        let xs = sample(&d, n, 100 + i as u64);
        let fits = fit_all(&xs).unwrap();
        let summary: Vec<String> = fits
            .iter()
            .map(|f| format!("{} D={:.4}", f.family.name(), f.ks_distance))
            .collect();
        assert!(families.contains(&fits[0].family), "{d}: {summary:?}");
        let gap = xs
            .iter()
            .map(|&x| (fits[0].law.cdf(x) - d.cdf(x)).abs())
            .fold(0.0, f64::max);
        assert!(
            gap < 1.63 / (n as f64).sqrt(),
            "{d}: best {} is {gap} away",
            fits[0].dist
        );
        assert!(fits.windows(2).all(|w| w[0].ks_distance <= w[1].ks_distance));
        // Every family but one whose estimate is out of its range (Pareto's
        // shape below 0.1 on the Weibull of shape 0.6).
        assert!(fits.len() >= 4, "{d}: {summary:?}");
        assert_eq!(
            fits.iter().map(|f| f.rank).collect::<Vec<_>>(),
            (1..=fits.len()).collect::<Vec<_>>()
        );
        // The printed string is the fitted law.
        assert_eq!(fits[0].dist.parse::<Dist>().unwrap(), fits[0].law);
    }
}

/// D from the formula against a direct evaluation of sup |F_n − F| from its
/// definition: F_n at and just below every sample point by counting, on a
/// sample with ties.
#[test]
fn ks_distance_matches_direct_computation() {
    let d = Dist::lognormal(0.0, 1.0).unwrap();
    let mut xs: Vec<f64> = sample(&d, 300, 9)
        .iter()
        .map(|x| (x * 20.0).round() / 20.0 + 0.05)
        .collect();
    xs.sort_by(f64::total_cmp);
    assert!(xs.windows(2).any(|w| w[0] == w[1]), "the sample should have ties");
    let n = xs.len() as f64;
    let mut direct: f64 = 0.0;
    for &x in &xs {
        let at = xs.iter().filter(|&&y| y <= x).count() as f64 / n;
        let below = xs.iter().filter(|&&y| y < x).count() as f64 / n;
        direct = direct.max((at - d.cdf(x)).abs()).max((below - d.cdf(x)).abs());
    }
    let got = ks_distance(&xs, &d);
    assert!((got - direct).abs() < 1e-15, "{got} vs {direct}");
    // A known case: one point at the median gives D = 1/2.
    assert_eq!(ks_distance(&[1.0], &d), 0.5);
}

#[test]
fn bad_samples_are_errors() {
    assert_eq!(fit_all(&[1.0]).unwrap_err(), FitError::TooFew(1));
    assert_eq!(fit_all(&[2.0, 2.0, 2.0]).unwrap_err(), FitError::Constant(2.0));
    let e = fit_all(&[1.0, -3.0]).unwrap_err();
    assert_eq!(e, FitError::NotPositive { index: 2, value: -3.0 });
    assert!(e.to_string().contains("time number 2 is -3"), "{e}");
    assert!(fit_all(&[1.0, f64::NAN]).is_err());
}

/// Two distinct values are enough for every family.
#[test]
fn smallest_samples_fit() {
    let fits = fit_all(&[1.0, 2.0]).unwrap();
    assert_eq!(fits.len(), 5);
    for f in fits {
        assert!(f.log_likelihood.is_finite() && f.ks_distance <= 1.0, "{f:?}");
    }
}

/// The parallel fits are the serial ones, bit for bit, in the same order:
/// samples past one chunk of the parallel passes, ties included.
#[test]
fn fit_all_parallel_has_the_bits_of_fit_all() {
    let laws = [
        Dist::exp(2.5).unwrap(),
        Dist::weibull(1.5, 0.8).unwrap(),
        Dist::lognormal(0.1, 0.6).unwrap(),
        Dist::pareto(0.5, 2.5).unwrap(),
    ];
    for (seed, law) in laws.iter().enumerate() {
        let mut xs = sample(law, 70_001, seed as u64);
        xs.extend_from_within(..1000);
        let bits = |fits: Vec<Fit>| -> Vec<(String, u64, u64, u64)> {
            (fits.into_iter())
                .map(|f| {
                    (
                        f.dist,
                        f.log_likelihood.to_bits(),
                        f.aic.to_bits(),
                        f.ks_distance.to_bits(),
                    )
                })
                .collect()
        };
        assert_eq!(
            bits(fit_all_parallel(&xs).unwrap()),
            bits(fit_all(&xs).unwrap()),
            "{law}"
        );
    }
    // Small samples and extreme ranges, where a family fails or the
    // bisection's guesses meet infinite or NaN values of g.
    for xs in [
        &[1.0, 1.0][..],
        &[1.0, 2.0],
        &[0.5, 0.5, 0.5, 0.6],
        &[1e-200, 1.0, 1e200],
        &[1e-300, 1e-300, 1e300],
        &[3.0, 1e6, 2.5, 7.0],
    ] {
        assert_eq!(fit_all_parallel(xs), fit_all(xs), "{xs:?}");
    }
}
