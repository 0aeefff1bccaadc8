//! Monte Carlo against exact values, at fixed seeds, with tolerances in
//! standard errors.
//!
//! References are computed here, independently of the engine: the
//! iteration-time CDF as a binomial tail, P(X_(k) ≤ t) = P(Bin(n, G(t)) ≥ k)
//! (David & Nagaraja, Order Statistics, §2.1), frc's group formula
//! (1 − (1 − G)^r)^g, harmonic numbers, the Pareto Gamma ratio, and means by
//! integrating the survival function.
//!
//! The mean must lie within Z standard errors of the exact value; a percentile
//! estimate x̂ must satisfy |P(T ≤ x̂) − q| ≤ Z·√(q(1−q)/N). With Z = 4.5 and
//! about a hundred checks, a correct engine fails with probability < 10⁻³;
//! an engine off by one worker misses by tens of standard errors.

use gcsim::dist::Dist;
use gcsim::engine::{self, Outcome, RulePath, Sampling, Silent, Summary, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Rule, Scheme, SchemeKind};
use gcsim::stats::QUANTILES;
use gcsim::study::{Study, Workers};
use gcsim::trace::Trace;
use statrs::distribution::{Binomial, DiscreteCDF};
use statrs::function::gamma::{gamma_lr, ln_gamma};
use std::sync::Arc;

const Z: f64 = 4.5;
const TRIALS: u64 = 100_000;

fn scheme(kind: SchemeKind, n: usize, s: Option<usize>, m: Option<usize>, k: Option<usize>) -> Scheme {
    Scheme::new(kind, n, Params { s, m, k }).unwrap()
}

fn harmonic(n: usize) -> f64 {
    (1..=n).map(|j| 1.0 / j as f64).sum()
}

/// The CDF of one worker's time at load ℓ.
fn worker_cdf(dist: &Dist, model: LoadModel, load: f64) -> impl Fn(f64) -> f64 + '_ {
    move |t: f64| match model {
        LoadModel::Fixed => dist.cdf(t),
        LoadModel::Scaled => dist.cdf(t / load),
        LoadModel::Affine { unit_time } => dist.cdf(t - unit_time * load),
        LoadModel::Additive => {
            // Exponential units only: Gamma(ℓ, μ) for integer ℓ.
            let rate = 1.0 / dist.mean();
            assert_eq!(load.fract(), 0.0);
            if t <= 0.0 { 0.0 } else { gamma_lr(load, rate * t) }
        }
    }
}

/// The iteration-time CDF of `scheme`, from the worker CDF.
fn iteration_cdf(scheme: &Scheme, g: impl Fn(f64) -> f64) -> impl Fn(f64) -> f64 {
    let n = scheme.n();
    let rule = scheme.rule();
    move |t| {
        let p = g(t).clamp(0.0, 1.0);
        match rule {
            Rule::KOfN(k) => {
                // P(Bin(n, p) >= k)
                if k == 0 {
                    1.0
                } else {
                    Binomial::new(p, n as u64).unwrap().sf(k as u64 - 1)
                }
            }
            Rule::Groups { size } => (1.0 - (1.0 - p).powi(size as i32)).powi((n / size) as i32),
        }
    }
}

/// ∫ (1 − F(t)) dt by composite Simpson on [lo, hi], where F(hi) ≈ 1.
fn mean_from_cdf(f: &impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let steps = 20_000;
    let h = (hi - lo) / steps as f64;
    let sf = |t: f64| 1.0 - f(t);
    let mut sum = sf(lo) + sf(hi);
    for i in 1..steps {
        sum += if i % 2 == 1 { 4.0 } else { 2.0 } * sf(lo + i as f64 * h);
    }
    lo + sum * h / 3.0
}

fn simulate(n: usize, dist: Dist, model: LoadModel, schemes: Vec<Scheme>, trials: u64, seed: u64) -> (Study, Outcome) {
    let study = Study::new(n, dist, model, schemes, trials, seed).unwrap();
    let outcome = engine::simulate(&study, &Silent);
    (study, outcome)
}

fn check_mean(label: &str, s: &Summary, exact: f64) {
    let se = s.mean.std_err.unwrap();
    let z = (s.mean.mean - exact) / se;
    assert!(
        z.abs() < Z,
        "{label}: mean {} vs exact {exact}: z = {z:.2}",
        s.mean.mean
    );
}

fn check_quantiles(label: &str, s: &Summary, cdf: &impl Fn(f64) -> f64) {
    for (q, &x) in QUANTILES.iter().zip(&s.quantiles) {
        let z = (cdf(x) - q) / (q * (1.0 - q) / s.trials as f64).sqrt();
        assert!(z.abs() < Z, "{label}: p{q} = {x}: F(x) = {}: z = {z:.2}", cdf(x));
    }
}

/// Checks every configuration of one study: quantiles always, the mean
/// against `exact_mean` where given or else against the integrated CDF.
fn check_all(n: usize, dist: Dist, model: LoadModel, schemes: Vec<Scheme>, exact_means: Vec<Option<f64>>, seed: u64) {
    let (study, outcome) = simulate(n, dist, model, schemes, TRIALS, seed);
    for ((scheme, summary), exact) in study.schemes().iter().zip(&outcome.configs).zip(exact_means) {
        let label = format!("{scheme} {dist} {model}");
        let cdf = iteration_cdf(scheme, worker_cdf(&dist, model, scheme.load()));
        check_quantiles(&label, summary, &cdf);
        let exact = exact.unwrap_or_else(|| {
            let hi = (1..).map(|i| i as f64).find(|&t| cdf(t) > 1.0 - 1e-13).unwrap();
            mean_from_cdf(&cdf, 0.0, hi)
        });
        check_mean(&label, summary, exact);
    }
}

#[test]
fn spec_worked_example_n100() {
    // SPEC §3: uncoded 5.187, s=20 1.590 (speedup 3.26), s=50 0.688 (speedup 7.54).
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
    // E[T] = H_g/(rμ) under fixed, H_g/μ under scaled (SPEC §3).
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
        assert_eq!(engine::order_statistics_apply(&study), i == 1, "{dist}");
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
    // Each worker's time is Gamma(ℓ, μ) for integer ℓ (SPEC §3).
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

/// The general discrete-event path and the closed-form fast path give the
/// same bits for every scheme and load model, on either sampling.
#[test]
fn event_path_equals_fast_path() {
    for (n, deep) in [(12, 5), (96, 70)] {
        event_path_equals_fast_path_at(n, deep);
    }
}

/// At n = 96 the order-statistic path draws the top 49 order statistics
/// and the rest on demand; `deep` tolerates enough stragglers to need them.
fn event_path_equals_fast_path_at(n: usize, deep: usize) {
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Ignore, n, Some(3), None, None),
        scheme(SchemeKind::Frc, n, Some(2), None, None),
        scheme(SchemeKind::Crc, n, Some(2), None, None),
        scheme(SchemeKind::CommEfficient, n, Some(2), Some(2), None),
        scheme(SchemeKind::Mds, n, None, None, Some(5)),
        scheme(SchemeKind::Crc, n, Some(deep), None, None),
    ];
    for model in [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Additive,
        LoadModel::Affine { unit_time: 1.0 },
    ] {
        let study = Study::new(n, Dist::pareto(1.0, 2.0).unwrap(), model, schemes.clone(), 3000, 5).unwrap();
        let mut samplings = vec![Sampling::Draws];
        if engine::order_statistics_apply(&study) {
            samplings.push(Sampling::OrderStatistics);
        }
        for sampling in samplings {
            let fast = engine::simulate_with(&TrialPlan::with(&study, RulePath::Fast, sampling), &study, &Silent);
            let events = engine::simulate_with(&TrialPlan::with(&study, RulePath::Events, sampling), &study, &Silent);
            assert_eq!(fast, events, "{model} {sampling:?}");
        }
    }
}

/// Percentiles from the bounded-memory estimator against the exact sample
/// quantiles of the same trials, recomputed by storing every value: within a
/// twentieth of a standard error. 300 000 trials (beyond the pilot) use
/// windows placed by the pilot; 600 000 (eight pilots and more) windows
/// placed by the exact law, also for a straggler mixture (whose law mixes
/// two exponentials). One pass each: the windows hold their ranks.
#[test]
fn percentiles_match_exact_sample_quantiles() {
    let exp = Dist::exp(1.0).unwrap();
    percentiles_match_at(300_000, exp);
    percentiles_match_at(600_000, exp);
    percentiles_match_at(600_000, exp.with_stragglers(0.1, 5.0).unwrap());
}

fn percentiles_match_at(trials: u64, dist: Dist) {
    let n = 50;
    let schemes = vec![
        scheme(SchemeKind::Crc, n, Some(5), None, None),
        scheme(SchemeKind::Frc, n, Some(4), None, None),
    ];
    let study = Study::new(n, dist, LoadModel::Affine { unit_time: 2.0 }, schemes, trials, 7).unwrap();
    let outcome = engine::simulate(&study, &Silent);
    assert_eq!(outcome.passes, 1, "{dist} {trials}");
    let plan = TrialPlan::new(&study);
    let mut scratch = plan.scratch();
    let mut out = vec![0.0; plan.slots()];
    let mut columns = vec![Vec::with_capacity(trials as usize); plan.slots()];
    for t in 0..trials {
        plan.run(study.seed(), t, &mut scratch, &mut out);
        for (c, v) in columns.iter_mut().zip(&out) {
            c.push(*v);
        }
    }
    let summaries: Vec<&Summary> = outcome
        .configs
        .iter()
        .chain(std::iter::once(&outcome.baseline))
        .collect();
    for (col, summary) in columns.iter_mut().zip(summaries) {
        col.sort_by(f64::total_cmp);
        let mean = col.iter().sum::<f64>() / trials as f64;
        assert!((summary.mean.mean - mean).abs() < 1e-9 * mean);
        for (q, &est) in QUANTILES.iter().zip(&summary.quantiles) {
            let exact = gcsim::stats::quantile::exact_quantile(col, *q);
            let j = gcsim::stats::quantile::target_index(*q, trials) as usize;
            let d = (q * (1.0 - q) * trials as f64).sqrt() as usize + 1;
            let se = (col[(j + d).min(col.len() - 1)] - col[j.saturating_sub(d)]) / 2.0;
            assert!(
                (est - exact).abs() <= 0.05 * se,
                "{dist} {trials} q={q}: {est} vs exact {exact}, se {se}"
            );
        }
    }
}

/// Same seed, one thread or two: identical results.
#[test]
fn thread_count_does_not_change_results() {
    let n = 30;
    let schemes = vec![
        scheme(SchemeKind::Crc, n, Some(4), None, None),
        scheme(SchemeKind::Frc, n, Some(4), None, None),
    ];
    let study = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, 150_000, 3).unwrap();
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| engine::simulate(&study, &Silent))
    };
    assert_eq!(run(1), run(2));
    assert_eq!(run(1), run(3));
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
                    let mut values: Vec<f64> = (0..reps)
                        .map(|_| {
                            let times: Vec<f64> = (0..n)
                                .map(|_| {
                                    let mut t: f64 = (0..whole).map(|_| dist.sample(&mut rng)).sum();
                                    if frac > 0.0 {
                                        t += frac * dist.sample(&mut rng);
                                    }
                                    t
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

/// The exact q-quantile of an iteration-time CDF, by bisection.
fn invert(cdf: &impl Fn(f64) -> f64, q: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    while cdf(hi) < q {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < q { lo = mid } else { hi = mid }
    }
    hi
}

/// The 95% percentile intervals cover the exact quantile about 95% of the
/// time, over 300 independent runs (p50 and p99 each): the coverage must lie
/// within 4.5 binomial standard errors of 0.95.
#[test]
fn quantile_intervals_cover_the_exact_quantile() {
    let n = 10;
    let s = scheme(SchemeKind::Crc, n, Some(2), None, None);
    let dist = Dist::exp(1.0).unwrap();
    let cdf = iteration_cdf(&s, worker_cdf(&dist, LoadModel::Fixed, s.load()));
    let exact = [invert(&cdf, 0.5), invert(&cdf, 0.99)];
    let runs = 300;
    let mut covered = [0usize; 2];
    for seed in 0..runs {
        let (_, out) = simulate(n, dist, LoadModel::Fixed, vec![s], 4000, 10_000 + seed);
        let c = &out.configs[0];
        for (i, qi) in [0usize, 2].into_iter().enumerate() {
            let (lo, hi) = c.quantile_ci95[qi];
            assert!(lo <= c.quantiles[qi] && c.quantiles[qi] <= hi);
            covered[i] += usize::from(lo <= exact[i] && exact[i] <= hi);
        }
    }
    let se = (0.95f64 * 0.05 / runs as f64).sqrt();
    for (i, c) in covered.iter().enumerate() {
        let coverage = *c as f64 / runs as f64;
        assert!((coverage - 0.95).abs() < Z * se, "quantile {i}: coverage {coverage}");
    }
}

/// The empirical survival function against the exact one, at every point,
/// within Z binomial standard errors, on both the exact (short) and the
/// windowed (long) path.
#[test]
fn survival_curve_matches_the_exact_survival_function() {
    let n = 16;
    let dist = Dist::pareto(1.0, 3.0).unwrap();
    let s = scheme(SchemeKind::Frc, n, Some(3), None, None);
    let cdf = iteration_cdf(&s, worker_cdf(&dist, LoadModel::Scaled, s.load()));
    for trials in [20_000, 150_000] {
        let study = Study::new(n, dist, LoadModel::Scaled, vec![s], trials, 4).unwrap();
        let plan = TrialPlan::new(&study);
        let options = engine::Options {
            survival_points: 60,
            ..Default::default()
        };
        let out = engine::simulate_full(&plan, &study, &Silent, &options);
        let curve = &out.configs[0].survival;
        assert_eq!(curve.len(), 61);
        assert!(
            curve.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 >= w[1].1),
            "monotone"
        );
        for &(t, sf) in curve {
            let exact = 1.0 - cdf(t);
            let se = (exact * (1.0 - exact) / trials as f64).sqrt().max(1.0 / trials as f64);
            assert!((sf - exact).abs() < Z * se, "t={t}: {sf} vs {exact}");
        }
        assert_eq!(out.baseline.survival.len(), 61);
    }
}

/// Order-statistic sampling and one-draw-per-worker sampling give the same
/// distribution of every configuration's iteration time: two-sample
/// Kolmogorov–Smirnov on 20 000 trials each, at the 0.1% level
/// (√(n/2)·D < 1.95), for exponential, shifted-exponential, Pareto and
/// Weibull laws, the bootstrap from a trace (where the test is
/// conservative: the law has atoms) and heterogeneous clusters in order and
/// shuffled, under fixed, scaled and affine loads, with k-of-n and frc
/// rules.
#[test]
fn order_statistics_and_draws_agree_in_distribution() {
    let n = 20;
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Crc, n, Some(3), None, None),
        scheme(SchemeKind::Frc, n, Some(3), None, None),
        scheme(SchemeKind::Frc, n, Some(1), None, None),
        scheme(SchemeKind::Mds, n, None, None, Some(2)),
    ];
    assert_eq!(order_statistics_against_draws(n, schemes, 100), 7 * 3 * 6);
    // Past the top block (n = 100 draws the top 51 and the rest on demand).
    let n = 100;
    let schemes = vec![
        scheme(SchemeKind::Crc, n, Some(10), None, None),
        scheme(SchemeKind::Crc, n, Some(75), None, None),
        scheme(SchemeKind::Mds, n, None, None, Some(2)),
        scheme(SchemeKind::Frc, n, Some(19), None, None),
        scheme(SchemeKind::Frc, n, Some(49), None, None),
    ];
    assert_eq!(order_statistics_against_draws(n, schemes, 200), 7 * 3 * 6);
}

/// The KS checks of [`order_statistics_and_draws_agree_in_distribution`]
/// for one worker count; returns how many were made.
fn order_statistics_against_draws(n: usize, schemes: Vec<Scheme>, seed: u64) -> usize {
    let trace = Trace::from_file(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/trace-llm-64w.csv"));
    let laws = [
        Workers::Iid(Dist::exp(2.0).unwrap()),
        Workers::Iid(Dist::shifted_exp(1.0, 1.0).unwrap()),
        Workers::Iid(Dist::pareto(1.0, 2.5).unwrap()),
        Workers::Iid(Dist::weibull(1.0, 1.5).unwrap()),
        Workers::Trace(Arc::new(trace.unwrap())),
        // Heterogeneous clusters: each class by order statistics, merged.
        Workers::Classes {
            classes: vec![
                (n / 2, Dist::exp(1.0).unwrap()),
                (n / 2, Dist::pareto(0.5, 2.0).unwrap()),
            ],
            shuffle: false,
        },
        Workers::Classes {
            classes: vec![
                (n / 4, Dist::shifted_exp(0.5, 2.0).unwrap()),
                (n / 4, Dist::weibull(1.0, 0.7).unwrap()),
                (n / 2, Dist::exp(0.5).unwrap()),
            ],
            shuffle: true,
        },
    ];
    let models = [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Affine { unit_time: 0.5 },
    ];
    let trials = 20_000u64;
    let mut checks = 0;
    for (i, workers) in laws.iter().enumerate() {
        for model in models {
            let study =
                Study::with_workers(n, workers.clone(), model, schemes.clone(), trials, seed + i as u64).unwrap();
            assert!(engine::order_statistics_apply(&study), "{workers}");
            let columns = |sampling| {
                let plan = TrialPlan::with(&study, RulePath::Fast, sampling);
                let mut scratch = plan.scratch();
                let mut out = vec![0.0; plan.slots()];
                let mut cols = vec![Vec::with_capacity(trials as usize); plan.slots()];
                for t in 0..trials {
                    plan.run(study.seed(), t, &mut scratch, &mut out);
                    cols.iter_mut().zip(&out).for_each(|(c, v)| c.push(*v));
                }
                cols.iter_mut().for_each(|c| c.sort_by(f64::total_cmp));
                cols
            };
            let (a, b) = (columns(Sampling::OrderStatistics), columns(Sampling::Draws));
            for (slot, (x, y)) in a.iter().zip(&b).enumerate() {
                // D = sup |F_x − F_y| over the pooled sample.
                let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
                while i < x.len() && j < y.len() {
                    let t = x[i].min(y[j]);
                    while i < x.len() && x[i] <= t {
                        i += 1;
                    }
                    while j < y.len() && y[j] <= t {
                        j += 1;
                    }
                    d = d.max((i as f64 - j as f64).abs() / trials as f64);
                }
                let stat = d * (trials as f64 / 2.0).sqrt();
                assert!(stat < 1.95, "{workers} {model} slot {slot}: KS {stat:.3}");
                checks += 1;
            }
        }
    }
    checks
}

/// Above 32 workers, order-statistic sampling draws the top
/// `top_block(n)` order statistics in every trial and the lower ones on
/// demand, top down. Configurations on both sides of the split, at the
/// split itself and at the very bottom (k = 1, frc's large groups) against
/// the exact law: harmonic means for k-of-n, the group formula for frc, and
/// binomial-tail quantiles for both.
#[test]
fn order_statistics_below_the_top_block_match_the_exact_law() {
    for (n, seed) in [(100usize, 31u64), (3000, 32)] {
        let top = engine::trial::top_block(n);
        let split = n - top + 1; // the lowest order statistic of the top block
        let mut schemes: Vec<Scheme> = [0, 1, n - split - 1, n - split, n - split + 1, n - 2, n - 1]
            .into_iter()
            .map(|s| scheme(SchemeKind::Crc, n, Some(s), None, None))
            .collect();
        schemes.extend([1, 2, split - 1, split].map(|k| scheme(SchemeKind::Mds, n, None, None, Some(k))));
        let sizes: Vec<usize> = (1..=n)
            .filter(|r| n % r == 0 && [1, 2, 4, 25, 50, 100, 1000].contains(r))
            .collect();
        schemes.extend(
            sizes
                .iter()
                .map(|&r| scheme(SchemeKind::Frc, n, Some(r - 1), None, None)),
        );
        let means = schemes
            .iter()
            .map(|s| {
                Some(match s.rule() {
                    Rule::KOfN(k) => harmonic(n) - harmonic(n - k),
                    Rule::Groups { size } => harmonic(n / size) / size as f64,
                })
            })
            .collect();
        let study = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes.clone(), 10, seed).unwrap();
        assert_eq!(TrialPlan::new(&study).sampling(), Sampling::OrderStatistics);
        check_all(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, means, seed);
    }
}

/// E[X_(k:n)] of Pareto(x_m, α): x_m Γ(n+1)Γ(n−k+1−1/α) / (Γ(n−k+1)Γ(n+1−1/α)).
fn pareto_order_mean(xm: f64, alpha: f64, n: usize, k: usize) -> f64 {
    let (nf, kf) = (n as f64, k as f64);
    xm * (ln_gamma(nf + 1.0) + ln_gamma(nf - kf + 1.0 - 1.0 / alpha)
        - ln_gamma(nf - kf + 1.0)
        - ln_gamma(nf + 1.0 - 1.0 / alpha))
    .exp()
}

/// The same split under Pareto and shifted-exponential laws and the scaled
/// and affine load models, where the law's transform of the standard
/// exponential and the load apply after the draw. Exact means: the Pareto
/// Gamma ratio (frc: a group's minimum is Pareto(x_m, rα), and T the
/// largest of g of them), harmonic numbers for the shifted exponential.
#[test]
fn order_statistics_below_the_top_block_other_laws_and_loads() {
    let n = 100;
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Crc, n, Some(30), None, None),
        scheme(SchemeKind::Crc, n, Some(80), None, None),
        scheme(SchemeKind::Mds, n, None, None, Some(3)),
        scheme(SchemeKind::Frc, n, Some(24), None, None),
    ];
    let (xm, alpha) = (1.0, 3.0);
    let means = schemes
        .iter()
        .map(|s| {
            Some(
                s.load()
                    * match s.rule() {
                        Rule::KOfN(k) => pareto_order_mean(xm, alpha, n, k),
                        Rule::Groups { size } => {
                            let g = n / size;
                            pareto_order_mean(xm, alpha * size as f64, g, g)
                        }
                    },
            )
        })
        .collect();
    check_all(
        n,
        Dist::pareto(xm, alpha).unwrap(),
        LoadModel::Scaled,
        schemes.clone(),
        means,
        40,
    );
    let (shift, rate, unit) = (0.5, 2.0, 0.01);
    let means = schemes
        .iter()
        .map(|s| {
            let e = match s.rule() {
                Rule::KOfN(k) => harmonic(n) - harmonic(n - k),
                Rule::Groups { size } => harmonic(n / size) / size as f64,
            };
            Some(unit * s.load() + shift + e / rate)
        })
        .collect();
    let model = LoadModel::Affine { unit_time: unit };
    check_all(n, Dist::shifted_exp(shift, rate).unwrap(), model, schemes, means, 41);
}

/// A configuration's values do not depend on what else the study contains:
/// every trial draws the top block, then goes as deep as its deepest rule
/// needs, and ranks come from a stream of their own.
#[test]
fn a_configurations_draws_do_not_depend_on_the_rest_of_the_study() {
    let n = 100;
    let alone = vec![
        scheme(SchemeKind::Crc, n, Some(20), None, None),
        scheme(SchemeKind::Crc, n, Some(70), None, None),
    ];
    let mut crowded = vec![
        scheme(SchemeKind::Frc, n, Some(49), None, None),
        scheme(SchemeKind::Mds, n, None, None, Some(1)),
    ];
    crowded.extend(alone.iter().cloned());
    let dist = Dist::exp(1.0).unwrap();
    let a = Study::new(n, dist, LoadModel::Fixed, alone, 10, 7).unwrap();
    let b = Study::new(n, dist, LoadModel::Fixed, crowded, 10, 7).unwrap();
    let (pa, pb) = (TrialPlan::new(&a), TrialPlan::new(&b));
    let (mut sa, mut sb) = (pa.scratch(), pb.scratch());
    let (mut oa, mut ob) = (vec![0.0; pa.slots()], vec![0.0; pb.slots()]);
    for t in 0..2000 {
        pa.run(7, t, &mut sa, &mut oa);
        pb.run(7, t, &mut sb, &mut ob);
        assert_eq!(oa[..2], ob[2..4], "trial {t}");
        assert_eq!(oa[2], ob[4], "baseline, trial {t}");
    }
}

/// Asking for a survival curve or a deadline count (which keep a pilot)
/// changes no statistic: the same bits as a run without them, also where
/// the exact law places the windows.
#[test]
fn options_do_not_change_the_statistics() {
    let n = 100;
    let schemes = vec![scheme(SchemeKind::Crc, n, Some(20), None, None)];
    for trials in [300_000, 600_000] {
        let study = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes.clone(), trials, 1).unwrap();
        let plan = TrialPlan::new(&study);
        let plain = engine::simulate(&study, &Silent);
        let options = engine::Options {
            survival_points: 20,
            deadline: Some(1.6),
        };
        let full = engine::simulate_full(&plan, &study, &Silent, &options);
        for (a, b) in plain
            .configs
            .iter()
            .zip(&full.configs)
            .chain([(&plain.baseline, &full.baseline)])
        {
            assert_eq!(
                (a.mean, a.quantiles, a.quantile_ci95),
                (b.mean, b.quantiles, b.quantile_ci95),
                "{trials}"
            );
            assert!(!b.survival.is_empty() && b.within_deadline.is_some());
        }
    }
}
