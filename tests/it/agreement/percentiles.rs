//! Percentiles, their intervals and survival curves: the bounded-memory
//! estimator against exact sample quantiles, interval coverage and the
//! empirical survival function against the exact one.

use gcsim::dist::Dist;
use gcsim::engine::{self, Silent, Summary, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::SchemeKind;
use gcsim::stats::QUANTILES;
use gcsim::study::Study;

use super::{Z, iteration_cdf, scheme, simulate, worker_cdf};

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
    let trials = 4000u64;
    let mut covered = [0usize; 2];
    // The interval's ends are the order statistics at the exact binomial
    // ranks l and u, so through the exact CDF they lie (u − l)/(N + 1) apart
    // in probability on average: a
    // check of the width that full coverage alone would not make (an
    // interval three times too wide covers every time).
    let mut width = [0.0f64; 2];
    for seed in 0..runs {
        let (_, out) = simulate(n, dist, LoadModel::Fixed, vec![s], trials, 10_000 + seed);
        let c = &out.configs[0];
        for (i, qi) in [0usize, 2].into_iter().enumerate() {
            let (lo, hi) = c.quantile_ci95[qi];
            assert!(lo <= c.quantiles[qi] && c.quantiles[qi] <= hi);
            covered[i] += usize::from(lo <= exact[i] && exact[i] <= hi);
            width[i] += (cdf(hi) - cdf(lo)) / runs as f64;
        }
    }
    for (i, q) in [0.5f64, 0.99].into_iter().enumerate() {
        // E[F(X₍ᵤ₎) − F(X₍ₗ₎)] = (u − l)/(N + 1) at the exact binomial ranks.
        let (l, u) = gcsim::engine::interval_ranks(q, trials);
        let expected = (u.unwrap() - l.unwrap()) as f64 / (trials + 1) as f64;
        assert!(
            (width[i] / expected - 1.0).abs() < 0.05,
            "quantile {q}: mean width {} in probability, expected {expected}",
            width[i]
        );
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
