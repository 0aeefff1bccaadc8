//! The engine's per-trial and summary invariants on random small studies.
//!
//! Per trial, the worker times are recomputed from the trial's own random
//! stream (`trial_rng`, draws in the order `TrialPlan::run` documents: one per
//! worker, unit-major under `additive`), and every slot's iteration time must
//! equal the definition: the earliest worker finish time at which
//! `Rule::decodable` holds. That implies the bound between the fastest and
//! the slowest worker, which is checked on its own as well.

use proptest::prelude::*;
use rand::RngExt;
use rand_distr::Distribution;

use gcsim::dist::Dist;
use gcsim::engine::{RulePath, Sampling, Silent, TrialPlan, simulate_with};
use gcsim::load::LoadModel;
use gcsim::report::rows;
use gcsim::rng::trial_rng;
use gcsim::scheme::{Params, Rule, Scheme, SchemeKind};
use gcsim::study::Study;

use super::runner;

fn random_dist() -> impl Strategy<Value = Dist> {
    let base = prop_oneof![
        (0.1f64..10.0).prop_map(|r| Dist::exp(r).unwrap()),
        (0.0f64..3.0, 0.1f64..10.0).prop_map(|(s, r)| Dist::shifted_exp(s, r).unwrap()),
        // Shapes below 1 give infinite means: the summaries must cope.
        (0.1f64..3.0, 0.3f64..4.0).prop_map(|(x, a)| Dist::pareto(x, a).unwrap()),
    ];
    (base, prop::option::of((0.0f64..=1.0, 1.0f64..20.0))).prop_map(|(d, st)| match st {
        Some((p, f)) => d.with_stragglers(p, f).unwrap(),
        None => d,
    })
}

fn random_model() -> impl Strategy<Value = LoadModel> {
    prop_oneof![
        Just(LoadModel::Fixed),
        Just(LoadModel::Scaled),
        Just(LoadModel::Additive),
        (0.0f64..2.0).prop_map(|c| LoadModel::Affine { unit_time: c }),
    ]
}

/// A random small study. Slots 0, 1, 2 are frc, crc and ignore at the same
/// s (s+1 divides n), slot 3 is uncoded, then random admissible schemes.
#[derive(Debug, Clone)]
struct Case {
    study: Study,
}

fn random_case() -> impl Strategy<Value = Case> {
    let extra = prop::collection::vec(
        (0usize..6, any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        0..5,
    );
    (
        1usize..=30,
        any::<prop::sample::Index>(),
        extra,
        random_dist(),
        random_model(),
        200u64..600,
        any::<u64>(),
    )
        .prop_map(|(n, pick, extra, dist, model, trials, seed)| {
            let divisors: Vec<usize> = (1..=n).filter(|d| n % d == 0).collect();
            let s = pick.get(&divisors) - 1;
            let at = |kind, s| {
                Scheme::new(
                    kind,
                    n,
                    Params {
                        s: Some(s),
                        m: None,
                        k: None,
                        d: None,
                        ..Params::default()
                    },
                )
                .unwrap()
            };
            let mut schemes = vec![
                at(SchemeKind::Frc, s),
                at(SchemeKind::Crc, s),
                at(SchemeKind::Ignore, s),
                Scheme::new(SchemeKind::Uncoded, n, Params::default()).unwrap(),
            ];
            for (kind, a, b) in extra {
                let s = a.index(n);
                let params = match SchemeKind::ALL[kind] {
                    SchemeKind::Frc => Params {
                        s: Some(b.get(&divisors) - 1),
                        ..Params::default()
                    },
                    SchemeKind::CommEfficient => Params {
                        s: Some(s),
                        m: Some(1 + b.index(n - s)),
                        k: None,
                        d: None,
                        ..Params::default()
                    },
                    SchemeKind::Mds => Params {
                        k: Some(1 + b.index(n)),
                        ..Params::default()
                    },
                    SchemeKind::Uncoded => Params::default(),
                    _ => Params {
                        s: Some(s),
                        ..Params::default()
                    },
                };
                schemes.push(Scheme::new(SchemeKind::ALL[kind], n, params).unwrap());
            }
            Case {
                study: Study::new(n, dist, model, schemes, trials, seed).unwrap(),
            }
        })
}

/// Each worker's time at `load` in trial `trial`, from the trial's own stream.
fn worker_times(study: &Study, trial: u64, load: f64) -> Vec<f64> {
    let n = study.n();
    let units = (study.draws_per_trial() / n as u64) as usize;
    let mut rng = trial_rng(study.seed(), trial);
    let dist = study.dist().expect("the properties run on i.i.d. parametric workers");
    let draws: Vec<f64> = match dist.stragglers() {
        // As the engine draws them: each worker's slow state first (one
        // uniform each), then every draw of the worker in it.
        Some((p, f)) if p > 0.0 && f > 1.0 => {
            let slow: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < p).collect();
            let base = plain(dist.base());
            (0..n * units)
                .map(|j| base.sample(&mut rng) * if slow[j % n] { f } else { 1.0 })
                .collect()
        }
        _ => (0..n * units).map(|_| dist.sample(&mut rng)).collect(),
    };
    let model = *study.load_model();
    if model.is_monotone() {
        return draws[..n].iter().map(|&x| model.apply(load, x)).collect();
    }
    let whole = load.floor() as usize;
    let frac = load - whole as f64;
    (0..n)
        .map(|i| {
            let mut t = 0.0;
            for u in 0..whole {
                t += draws[u * n + i];
            }
            if frac > 0.0 { t + frac * draws[whole * n + i] } else { t }
        })
        .collect()
}

/// The law `base` alone, which draws exactly what its straggler mixture's
/// base draw does.
fn plain(base: gcsim::dist::Base) -> Dist {
    use gcsim::dist::Base;
    match base {
        Base::Exp { rate } => Dist::exp(rate),
        Base::ShiftedExp { shift, rate } => Dist::shifted_exp(shift, rate),
        Base::Pareto { scale, shape } => Dist::pareto(scale, shape),
        Base::LogNormal { mu, sigma } => Dist::lognormal(mu, sigma),
        Base::Weibull { scale, shape } => Dist::weibull(scale, shape),
    }
    .unwrap()
}

/// The definition: the earliest finish time after which the master can decode.
fn by_definition(rule: Rule, times: &[f64]) -> f64 {
    times
        .iter()
        .copied()
        .filter(|&t| rule.decodable(&times.iter().map(|&x| x <= t).collect::<Vec<_>>()))
        .fold(f64::INFINITY, f64::min)
}

/// Runs every trial of `plan` and checks each slot against the definition
/// and the fastest/slowest bounds; returns every slot's values, trial-major.
fn check_trials(study: &Study, plan: &TrialPlan, rules: &[Rule]) -> Result<Vec<Vec<f64>>, String> {
    let mut scratch = plan.scratch();
    let mut out = vec![0.0; plan.slots()];
    let mut all = Vec::new();
    let schemes: Vec<Scheme> = study.schemes().iter().copied().chain([study.baseline()]).collect();
    for trial in 0..study.trials() {
        plan.run(study.seed(), trial, &mut scratch, &mut out);
        for (slot, scheme) in schemes.iter().enumerate() {
            let times = worker_times(study, trial, scheme.load());
            let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
            let slowest = times.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let t = out[slot];
            if !(fastest <= t && t <= slowest) {
                return Err(format!("trial {trial}, {scheme}: {t} outside [{fastest}, {slowest}]"));
            }
            let exact = by_definition(rules[slot], &times);
            if t != exact {
                return Err(format!("trial {trial}, {scheme}: {t}, by definition {exact}"));
            }
        }
        all.push(out.clone());
    }
    Ok(all)
}

fn rules_of(study: &Study) -> Vec<Rule> {
    study
        .schemes()
        .iter()
        .map(Scheme::rule)
        .chain([study.baseline().rule()])
        .collect()
}

/// The type-1 sample quantile at `permille`/1000: order statistic ⌈qN⌉ (1-based).
fn sample_quantile(sorted: &[f64], permille: usize) -> f64 {
    let rank = (permille * sorted.len()).div_ceil(1000).max(1);
    sorted[rank - 1]
}

#[test]
fn engine_invariants_on_random_studies() {
    runner(48)
        .run(&random_case(), |Case { study }| {
            let rules = rules_of(&study);
            let fast = check_trials(
                &study,
                &TrialPlan::with(&study, RulePath::Fast, Sampling::Draws),
                &rules,
            )
            .map_err(TestCaseError::fail)?;
            let events = check_trials(
                &study,
                &TrialPlan::with(&study, RulePath::Events, Sampling::Draws),
                &rules,
            )
            .map_err(TestCaseError::fail)?;
            prop_assert_eq!(&fast, &events);

            // frc (slot 0) decodes no later than crc (slot 1) at the same s on
            // the same draws: once n−s workers are in, each group of s+1 has
            // one. ignore (slot 2) has crc's rule with load 1 <= s+1. Both
            // hold under every load model, `fixed` included.
            for (trial, row) in fast.iter().enumerate() {
                prop_assert!(row[0] <= row[1], "trial {}: frc {} > crc {}", trial, row[0], row[1]);
                prop_assert!(row[2] <= row[1], "trial {}: ignore {} > crc {}", trial, row[2], row[1]);
                if *study.load_model() == LoadModel::Fixed {
                    prop_assert_eq!(row[2], row[1], "trial {}: same rule, same times", trial);
                }
            }

            let draws = TrialPlan::with(&study, RulePath::Fast, Sampling::Draws);
            let outcome = simulate_with(&draws, &study, &Silent);
            let summaries: Vec<_> = outcome.configs.iter().chain([&outcome.baseline]).collect();
            for (slot, summary) in summaries.iter().enumerate() {
                let mut values: Vec<f64> = fast.iter().map(|row| row[slot]).collect();
                values.sort_by(f64::total_cmp);
                let (lo, hi) = (values[0], values[values.len() - 1]);
                let mean = summary.mean.mean;
                let naive = values.iter().sum::<f64>() / values.len() as f64;
                prop_assert_eq!(summary.trials, study.trials());
                prop_assert!(
                    lo <= mean && mean <= hi,
                    "slot {}: mean {} outside [{}, {}]",
                    slot,
                    mean,
                    lo,
                    hi
                );
                prop_assert!(
                    (mean - naive).abs() <= 1e-12 * hi.abs().max(1.0),
                    "slot {}: {} vs {}",
                    slot,
                    mean,
                    naive
                );
                let q = summary.quantiles;
                prop_assert!(q[0] <= q[1] && q[1] <= q[2] && q[2] <= q[3], "slot {}: {:?}", slot, q);
                for (i, permille) in [500, 900, 990, 999].into_iter().enumerate() {
                    prop_assert_eq!(q[i], sample_quantile(&values, permille), "slot {} q{}", slot, permille);
                    let (a, b) = summary.quantile_ci95[i];
                    prop_assert!(a <= q[i] && q[i] <= b, "slot {}: {:?} around {}", slot, (a, b), q[i]);
                }
            }

            let rows = rows(&study, &outcome);
            let uncoded = &rows[3];
            prop_assert_eq!(uncoded.scheme, SchemeKind::Uncoded);
            prop_assert_eq!(uncoded.p99_speedup, Some(1.0));
            if study.mean_is_infinite(&study.baseline()) {
                // ∞/∞: no number, rather than 1 or NaN.
                prop_assert_eq!(uncoded.speedup, None);
            } else {
                prop_assert_eq!(uncoded.speedup, Some(1.0));
            }
            Ok(())
        })
        .unwrap();
}

/// The per-trial check catches a wrong rule: crc waiting for one worker too
/// many, or frc decoding on fewer groups than it has.
#[test]
fn per_trial_check_catches_a_wrong_rule() {
    let n = 12;
    let at = |kind, s| {
        Scheme::new(
            kind,
            n,
            Params {
                s: Some(s),
                m: None,
                k: None,
                d: None,
                ..Params::default()
            },
        )
        .unwrap()
    };
    let dist = Dist::exp(1.0).unwrap();
    let study = Study::new(
        n,
        dist,
        LoadModel::Fixed,
        vec![at(SchemeKind::Frc, 2), at(SchemeKind::Crc, 3)],
        200,
        1,
    )
    .unwrap();
    let rules = rules_of(&study);
    assert!(
        check_trials(
            &study,
            &TrialPlan::with(&study, RulePath::Fast, Sampling::Draws),
            &rules
        )
        .is_ok()
    );
    let late = TrialPlan::with(&study, RulePath::Fast, Sampling::Draws).map_rules(|_, r| match r {
        Rule::KOfN(k) if k < n => Rule::KOfN(k + 1),
        r => r,
    });
    assert!(check_trials(&study, &late, &rules).unwrap_err().contains("crc s=3"));
    let early = TrialPlan::with(&study, RulePath::Events, Sampling::Draws).map_rules(|_, r| match r {
        Rule::Groups { size } => Rule::Groups { size: 2 * size },
        r => r,
    });
    assert!(check_trials(&study, &early, &rules).unwrap_err().contains("frc s=2"));
}
