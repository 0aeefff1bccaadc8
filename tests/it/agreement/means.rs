//! Means (and the percentiles of the same runs) against closed forms:
//! harmonic numbers, frc's group formula, the Pareto Gamma ratio, Gamma
//! units under the additive load model, and the integrated survival
//! function for every other law.

use gcsim::dist::Dist;
use gcsim::engine;
use gcsim::load::LoadModel;
use gcsim::scheme::{Scheme, SchemeKind};
use gcsim::stats::QUANTILES;
use gcsim::study::Study;

use super::{
    TRIALS, Z, check_all, check_mean, harmonic, iteration_cdf, pareto_order_mean, scheme, simulate, worker_cdf,
};

#[test]
fn worked_example_n100() {
    // The README's worked example: n = 100 exponential workers, μ = 1, fixed
    // load: uncoded 5.187, s=20 1.590 (speedup 3.26), s=50 0.688 (speedup 7.54).
    let n = 100;
    let schemes = vec![
        scheme(SchemeKind::Crc, n, Some(0), None, None),
        scheme(SchemeKind::Crc, n, Some(20), None, None),
        scheme(SchemeKind::Crc, n, Some(50), None, None),
    ];
    let (_, out) = simulate(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, TRIALS, 1);
    let exact = [
        harmonic(100),
        harmonic(100) - harmonic(20),
        harmonic(100) - harmonic(50),
    ];
    assert!((exact[0] - 5.187).abs() < 5e-4 && (exact[1] - 1.590).abs() < 5e-4 && (exact[2] - 0.688).abs() < 5e-4);
    for (s, e) in out.configs.iter().zip(exact) {
        check_mean("crc n=100", s, e);
    }
    // Speedup = baseline mean / mean; its standard error bounded by the sum of
    // relative errors (no credit taken for the positive pairing).
    let base = &out.baseline;
    for (s, e, printed) in [(&out.configs[1], exact[1], 3.26), (&out.configs[2], exact[2], 7.54)] {
        let r = base.mean.mean / s.mean.mean;
        let exact_r = exact[0] / e;
        assert!((exact_r - printed).abs() < 0.005);
        let se_r = r * (base.mean.std_err.unwrap() / base.mean.mean + s.mean.std_err.unwrap() / s.mean.mean);
        assert!(((r - exact_r) / se_r).abs() < Z, "speedup {r} vs {exact_r}");
    }
    // s = 0 is uncoded: the same draws give exactly the same numbers.
    assert_eq!(out.configs[0], out.baseline);
}

#[test]
fn k_of_n_exponential_every_monotone_load_model() {
    let n = 20;
    let rate = 2.0;
    let dist = Dist::exp(rate).unwrap();
    let schemes = || {
        vec![
            scheme(SchemeKind::Uncoded, n, None, None, None),
            scheme(SchemeKind::Ignore, n, Some(5), None, None),
            scheme(SchemeKind::Crc, n, Some(1), None, None),
            scheme(SchemeKind::Crc, n, Some(19), None, None),
            scheme(SchemeKind::CommEfficient, n, Some(4), Some(3), None),
            scheme(SchemeKind::Mds, n, None, None, Some(8)),
            scheme(SchemeKind::Mds, n, None, None, Some(1)),
        ]
    };
    for (i, model) in [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Affine { unit_time: 0.3 },
    ]
    .into_iter()
    .enumerate()
    {
        let means = schemes()
            .iter()
            .map(|s| {
                let base = (harmonic(n) - harmonic(n - s.k())) / rate;
                Some(match model {
                    LoadModel::Fixed => base,
                    LoadModel::Scaled => s.load() * base,
                    LoadModel::Affine { unit_time } => unit_time * s.load() + base,
                    LoadModel::Additive => unreachable!(),
                })
            })
            .collect();
        check_all(n, dist, model, schemes(), means, 10 + i as u64);
    }
}

#[test]
fn frc_group_formula() {
    // g groups of r workers each: E[T] = H_g/(rμ) under fixed, H_g/μ under
    // scaled (the maximum over groups of the group minimum, Exp(rμ)).
    let (n, rate) = (24, 1.5);
    let dist = Dist::exp(rate).unwrap();
    let sizes = [1usize, 2, 3, 4, 6, 12, 24];
    for (model, scale) in [(LoadModel::Fixed, false), (LoadModel::Scaled, true)] {
        let schemes: Vec<Scheme> = sizes
            .iter()
            .map(|&r| scheme(SchemeKind::Frc, n, Some(r - 1), None, None))
            .collect();
        let means = sizes
            .iter()
            .map(|&r| {
                let g = n / r;
                Some(if scale {
                    harmonic(g) / rate
                } else {
                    harmonic(g) / (r as f64 * rate)
                })
            })
            .collect();
        check_all(n, dist, model, schemes, means, 20);
    }
}

#[test]
fn shifted_exponential_and_pareto() {
    let n = 30;
    let shifted = Dist::shifted_exp(1.0, 0.5).unwrap();
    let schemes = vec![
        scheme(SchemeKind::Mds, n, None, None, Some(10)),
        scheme(SchemeKind::Mds, n, None, None, Some(30)),
        scheme(SchemeKind::Crc, n, Some(3), None, None),
    ];
    let means = schemes
        .iter()
        .map(|s| Some(s.load() * (1.0 + (harmonic(n) - harmonic(n - s.k())) / 0.5)))
        .collect();
    check_all(n, shifted, LoadModel::Scaled, schemes, means, 30);

    // Pareto: E[X_(k:n)] = x_m Γ(n+1)Γ(n−k+1−1/α) / (Γ(n−k+1)Γ(n+1−1/α)).
    let (xm, alpha) = (2.0, 3.5);
    let pareto = Dist::pareto(xm, alpha).unwrap();
    let ks = [1usize, 15, 28, 30];
    let schemes: Vec<Scheme> = ks
        .iter()
        .map(|&k| scheme(SchemeKind::Mds, n, None, None, Some(k)))
        .collect();
    let means = ks.iter().map(|&k| Some(pareto_order_mean(xm, alpha, n, k))).collect();
    check_all(n, pareto, LoadModel::Fixed, schemes, means, 31);
}

#[test]
fn straggler_mixtures_by_integration() {
    let n = 40;
    let dist = Dist::exp(1.0).unwrap().with_stragglers(0.05, 8.0).unwrap();
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Ignore, n, Some(2), None, None),
        scheme(SchemeKind::Frc, n, Some(3), None, None),
        scheme(SchemeKind::Crc, n, Some(3), None, None),
    ];
    check_all(n, dist, LoadModel::Fixed, schemes.clone(), vec![None; 4], 40);
    check_all(n, dist, LoadModel::Scaled, schemes, vec![None; 4], 41);
}

/// Log-normal workers and straggler mixtures take the draw path (neither is
/// the engine's transform of one standard exponential); Weibull workers,
/// λ·E^(1/k), take the order-statistic path. The engine against the
/// binomial-tail CDF and its integrated mean.
#[test]
fn lognormal_and_weibull_by_integration() {
    let n = 40;
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Frc, n, Some(3), None, None),
        scheme(SchemeKind::Crc, n, Some(3), None, None),
    ];
    for (i, dist) in [
        Dist::lognormal(0.0, 0.75).unwrap(),
        Dist::weibull(1.0, 0.8).unwrap(),
        Dist::weibull(2.0, 2.5).unwrap().with_stragglers(0.05, 6.0).unwrap(),
    ]
    .into_iter()
    .enumerate()
    {
        let study = Study::new(n, dist, LoadModel::Fixed, schemes.clone(), 10, 0).unwrap();
        // Log-normal by order statistics (Φ⁻¹ of the exponential ones), the
        // mixture by draws.
        assert_eq!(engine::order_statistics_apply(&study), i <= 1, "{dist}");
        check_all(
            n,
            dist,
            LoadModel::Scaled,
            schemes.clone(),
            vec![None; 3],
            45 + i as u64,
        );
    }
}

#[test]
fn additive_loads_are_gamma() {
    // Under the additive model a worker runs ℓ units of independent Exp(μ)
    // time, so its time is Gamma(ℓ, μ) for integer ℓ.
    let n = 12;
    let dist = Dist::exp(1.0).unwrap();
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Crc, n, Some(2), None, None),
        scheme(SchemeKind::Frc, n, Some(3), None, None),
        scheme(SchemeKind::CommEfficient, n, Some(2), Some(3), None),
        scheme(SchemeKind::Mds, n, None, None, Some(4)),
    ];
    check_all(n, dist, LoadModel::Additive, schemes, vec![None; 5], 50);
}

/// Whole additive loads over exponential units are drawn as each load's
/// Erlang quantile of the standard exponential order statistics: at n = 100
/// the top block holds E_(50) and above, so crc with s ≥ 51 and frc's
/// groups read values drawn on demand below it or from the maximum. Loads
/// up to 99 units; quantiles against the Gamma binomial tail, means by
/// integration.
#[test]
fn additive_loads_by_order_statistics_below_the_top_block() {
    let n = 100;
    let dist = Dist::exp(2.0).unwrap();
    let mut schemes: Vec<Scheme> = [0, 1, 49, 50, 51, 75, 98]
        .into_iter()
        .map(|s| scheme(SchemeKind::Crc, n, Some(s), None, None))
        .collect();
    schemes.extend([1, 4, 24, 49].map(|s| scheme(SchemeKind::Frc, n, Some(s), None, None)));
    schemes.push(scheme(SchemeKind::Mds, n, None, None, Some(10)));
    let study = Study::new(n, dist, LoadModel::Additive, schemes.clone(), 10, 1).unwrap();
    assert_eq!(
        engine::TrialPlan::new(&study).sampling(),
        engine::Sampling::OrderStatistics
    );
    let count = schemes.len();
    check_all(n, dist, LoadModel::Additive, schemes, vec![None; count], 52);
}

/// Non-integer additive loads (mds with k ∤ n) against a brute-force
/// simulation written another way: rand_distr's Gamma for the whole units.
#[test]
fn additive_fractional_load_against_brute_force() {
    use rand::SeedableRng;
    use rand_distr::{Distribution, Exp1, Gamma};
    let n = 10;
    let k = 4; // load 2.5
    let (_, out) = simulate(
        n,
        Dist::exp(1.0).unwrap(),
        LoadModel::Additive,
        vec![scheme(SchemeKind::Mds, n, None, None, Some(k))],
        TRIALS,
        60,
    );
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(99);
    let gamma = Gamma::new(2.0, 1.0).unwrap();
    let (mut sum, mut sum2) = (0.0, 0.0);
    let reps = 200_000;
    for _ in 0..reps {
        let mut t: Vec<f64> = (0..n)
            .map(|_| gamma.sample(&mut rng) + 0.5 * <Exp1 as Distribution<f64>>::sample(&Exp1, &mut rng))
            .collect();
        t.sort_by(f64::total_cmp);
        sum += t[k - 1];
        sum2 += t[k - 1] * t[k - 1];
    }
    let m = sum / reps as f64;
    let se_ref = ((sum2 / reps as f64 - m * m) / reps as f64).sqrt();
    let s = &out.configs[0];
    let z = (s.mean.mean - m) / (s.mean.std_err.unwrap().powi(2) + se_ref * se_ref).sqrt();
    assert!(z.abs() < Z, "engine {} vs brute force {m}: z = {z:.2}", s.mean.mean);
}

/// ∫ (1 − F(t)) dt from `lo`, on segments of doubling width, each by
/// Simpson's rule, until the survival function is below 1e-14: accurate for
/// the polynomial tails of Pareto order statistics too.
fn mean_by_segments(f: &impl Fn(f64) -> f64, lo: f64) -> f64 {
    let sf = |t: f64| 1.0 - f(t);
    let (mut a, mut width, mut total) = (lo, 0.01_f64.max(lo * 0.01), lo);
    for _ in 0..200 {
        let b = a + width;
        let steps = 400;
        let h = width / steps as f64;
        let mut sum = sf(a) + sf(b);
        for i in 1..steps {
            sum += if i % 2 == 1 { 4.0 } else { 2.0 } * sf(a + i as f64 * h);
        }
        total += sum * h / 3.0;
        if sf(b) < 1e-14 {
            return total;
        }
        a = b;
        width *= 2.0;
    }
    panic!("the survival function did not vanish");
}

/// Every scheme × load model × distribution. Where the worker law is known
/// in closed form (every monotone load model; additive with exponential
/// units) the percentiles are checked against the exact CDF and the mean
/// against its integral; additive loads with other laws are checked against a
/// brute-force simulation written another way (a loop over units, no sorting
/// trick, another seed). Z = 5 here: about 500 checks.
#[test]
fn every_scheme_load_model_and_distribution() {
    use rand::SeedableRng;
    use rand_distr::Distribution;
    const Z_GRID: f64 = 5.0;
    let n = 12;
    let dists = [
        Dist::exp(1.0).unwrap(),
        Dist::shifted_exp(0.5, 2.0).unwrap(),
        Dist::pareto(1.0, 4.0).unwrap(),
        Dist::exp(1.0).unwrap().with_stragglers(0.1, 5.0).unwrap(),
    ];
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Ignore, n, Some(3), None, None),
        scheme(SchemeKind::Frc, n, Some(2), None, None),
        scheme(SchemeKind::Crc, n, Some(2), None, None),
        scheme(SchemeKind::CommEfficient, n, Some(2), Some(2), None),
        scheme(SchemeKind::Mds, n, None, None, Some(6)),
    ];
    let models = [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Additive,
        LoadModel::Affine { unit_time: 0.7 },
    ];
    for (di, dist) in dists.iter().enumerate() {
        for (mi, &model) in models.iter().enumerate() {
            let seed = 1000 + 10 * di as u64 + mi as u64;
            let (study, out) = simulate(n, *dist, model, schemes.clone(), TRIALS, seed);
            let exponential_units = matches!(dist.base(), gcsim::dist::Base::Exp { .. }) && dist.stragglers().is_none();
            for (s, summary) in study.schemes().iter().zip(&out.configs) {
                let label = format!("{s} {dist} {model}");
                if model != LoadModel::Additive || exponential_units {
                    let cdf = iteration_cdf(s, worker_cdf(dist, model, s.load()));
                    for (q, &x) in QUANTILES.iter().zip(&summary.quantiles) {
                        let z = (cdf(x) - q) / (q * (1.0 - q) / TRIALS as f64).sqrt();
                        assert!(z.abs() < Z_GRID, "{label}: p{q} = {x}: z = {z:.2}");
                    }
                    let exact = mean_by_segments(&cdf, 0.0);
                    let z = (summary.mean.mean - exact) / summary.mean.std_err.unwrap();
                    assert!(
                        z.abs() < Z_GRID,
                        "{label}: mean {} vs {exact}: z = {z:.2}",
                        summary.mean.mean
                    );
                } else {
                    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed + 7);
                    let reps = 100_000;
                    let (whole, frac) = (s.load().floor() as usize, s.load().fract());
                    // A worker's straggler state holds for all its units.
                    let (p_slow, slowdown) = dist.stragglers().unwrap_or((0.0, 1.0));
                    let base = dist.with_stragglers(0.0, 1.0).unwrap();
                    let mut values: Vec<f64> = (0..reps)
                        .map(|_| {
                            let times: Vec<f64> = (0..n)
                                .map(|_| {
                                    let slow = rand::RngExt::random::<f64>(&mut rng) < p_slow;
                                    let mut t: f64 = (0..whole).map(|_| base.sample(&mut rng)).sum();
                                    if frac > 0.0 {
                                        t += frac * base.sample(&mut rng);
                                    }
                                    if slow { slowdown * t } else { t }
                                })
                                .collect();
                            let finished = |t: f64| times.iter().map(|&x| x <= t).collect::<Vec<_>>();
                            times
                                .iter()
                                .copied()
                                .filter(|&t| s.rule().decodable(&finished(t)))
                                .fold(f64::INFINITY, f64::min)
                        })
                        .collect();
                    let m = values.iter().sum::<f64>() / reps as f64;
                    let var = values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (reps - 1) as f64;
                    let se = (var / reps as f64 + summary.mean.std_err.unwrap().powi(2)).sqrt();
                    let z = (summary.mean.mean - m) / se;
                    assert!(
                        z.abs() < Z_GRID,
                        "{label}: mean {} vs brute force {m}: z = {z:.2}",
                        summary.mean.mean
                    );
                    // The median against the brute force's: both estimate the same
                    // quantile; the engine's must sit near rank N/2 of the reference.
                    values.sort_by(f64::total_cmp);
                    let rank = values.partition_point(|&v| v <= summary.quantiles[0]) as f64 / reps as f64;
                    let z = (rank - 0.5) / (0.25 / reps as f64 + 0.25 / TRIALS as f64).sqrt();
                    assert!(
                        z.abs() < Z_GRID,
                        "{label}: median {} at reference rank {rank}: z = {z:.2}",
                        summary.quantiles[0]
                    );
                }
            }
        }
    }
}
