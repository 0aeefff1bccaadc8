//! The engine's sampling paths against each other and the exact law: the
//! event path against the fast path, thread counts, order statistics
//! against one draw per worker (Kolmogorov–Smirnov), the on-demand lower
//! order statistics, and a configuration's values independent of the rest
//! of the study and of the reporting options.

use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Rule, Scheme, SchemeKind};
use gcsim::study::{Study, Workers};
use gcsim::trace::Trace;
use std::sync::Arc;

use super::{check_all, harmonic, pareto_order_mean, scheme};

/// The general discrete-event path and the closed-form fast path give the
/// same bits for every scheme and load model, on either sampling (frc's
/// groups on the draws only: by order statistics the fast path draws the
/// group rule's time from the maximum's quantile, not from the workers the
/// walk sees; its law is checked against the draws and the exact law below).
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
            let study = match sampling {
                Sampling::OrderStatistics => {
                    let ranked = schemes.iter().filter(|s| matches!(s.rule(), Rule::KOfN(_)));
                    Study::new(
                        n,
                        Dist::pareto(1.0, 2.0).unwrap(),
                        model,
                        ranked.cloned().collect(),
                        3000,
                        5,
                    )
                    .unwrap()
                }
                _ => study.clone(),
            };
            let fast = engine::simulate_with(&TrialPlan::with(&study, RulePath::Fast, sampling), &study, &Silent);
            let events = engine::simulate_with(&TrialPlan::with(&study, RulePath::Events, sampling), &study, &Silent);
            assert_eq!(fast, events, "{model} {sampling:?}");
        }
    }
}

/// Where messages take time, the closed forms on the arrivals (the k-th
/// smallest arrival; a shared link's queue ordered once per trial and its
/// departures read in order) give the event walk's bits: dedicated and
/// shared links, constant and random transfer times, every load model, a
/// deadline, and a trace whose repeated times tie. Under affine with
/// c = 10¹⁶ the load rounds distinct draws to the same finish time, which
/// the queue must serve in worker order as the walk does.
#[test]
fn event_path_equals_fast_path_with_transfers() {
    use gcsim::comm::{Comm, Link};
    let trace = Arc::new(Trace::parse("t.csv", &trace_text(24, 7)).unwrap());
    for n in [12, 96] {
        let schemes = vec![
            scheme(SchemeKind::Uncoded, n, None, None, None),
            scheme(SchemeKind::Frc, n, Some(2), None, None),
            scheme(SchemeKind::Crc, n, Some(2), None, None),
            scheme(SchemeKind::Crc, n, Some(5), None, None),
            scheme(SchemeKind::CommEfficient, n, Some(2), Some(2), None),
            Scheme::new(
                SchemeKind::Timeout,
                n,
                gcsim::scheme::Params {
                    timeout: Some(1.5),
                    ..Default::default()
                },
            )
            .unwrap(),
        ];
        for workers in [
            Workers::Iid(Dist::pareto(1.0, 2.0).unwrap()),
            Workers::Trace(trace.clone()),
        ] {
            for model in [
                LoadModel::Fixed,
                LoadModel::Scaled,
                LoadModel::Additive,
                LoadModel::Affine { unit_time: 1.0 },
                LoadModel::Affine { unit_time: 1e16 },
            ] {
                for (time, dist) in [(Some(0.3), None), (None, Some(Dist::exp(2.0).unwrap()))] {
                    for link in [Link::Dedicated, Link::Shared] {
                        let comm = Comm::new(time, dist, link, 0.0).unwrap();
                        let study = Study::with_workers(n, workers.clone(), model, schemes.clone(), 2000, 9)
                            .unwrap()
                            .with_comm(comm);
                        let label = format!("n={n} {workers} {model} {comm}");
                        walk_equals_fast_path(&study, Sampling::Draws, &label);
                    }
                }
            }
        }
    }
}

/// A replay at n = the trace's workers reads each step's times sorted once
/// for the run: the same bits as the event walk on the step, for k-of-n,
/// group and deadline rules, over one iteration and several.
#[test]
fn replayed_steps_sorted_once_equal_the_walk() {
    let trace = Arc::new(Trace::parse("t.csv", &trace_text(40, 11)).unwrap());
    let n = 8;
    let schemes = vec![
        scheme(SchemeKind::Crc, n, Some(1), None, None),
        scheme(SchemeKind::Crc, n, Some(3), None, None),
        scheme(SchemeKind::Frc, n, Some(1), None, None),
        scheme(SchemeKind::Ignore, n, Some(2), None, None),
    ];
    for model in [LoadModel::Fixed, LoadModel::Scaled] {
        for iterations in [1, 4] {
            let study = Study::with_workers(n, Workers::Replay(trace.clone()), model, schemes.clone(), 3000, 4)
                .unwrap()
                .with_iterations(iterations)
                .unwrap();
            walk_equals_fast_path(&study, Sampling::Draws, &format!("{model} iterations={iterations}"));
        }
    }
}

/// K-async without transfer times, update by update (the fast path),
/// K-batch-async replacing each handled tick in the queue, and speculative
/// copies without messages give the event walk's bits and counts: every K from 1 to n, i.i.d. and per-class laws, a
/// trace whose repeated times tie, and affine loads with c = 10¹⁶ that
/// round distinct restarts to one finish time (served in worker order);
/// over several iterations with persistent stragglers too.
#[test]
fn strategy_fast_paths_equal_the_walk() {
    let trace = Arc::new(Trace::parse("t.csv", &trace_text(24, 7)).unwrap());
    for n in [1, 7, 40] {
        let schemes: Vec<Scheme> = [1, 2, n / 2, n - 1, n]
            .into_iter()
            .filter(|&k| (1..=n).contains(&k))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .flat_map(|k| {
                let params = gcsim::scheme::Params {
                    k: Some(k),
                    ..Default::default()
                };
                [SchemeKind::KAsync, SchemeKind::KBatchAsync].map(|kind| Scheme::new(kind, n, params).unwrap())
            })
            .chain(
                [(0.75, 1.0), (0.3, 1.0), (1.0, 1.0), (0.5, 1.7)].map(|(after, factor)| {
                    let params = gcsim::scheme::Params {
                        speculate_after: Some(after),
                        speculate_factor: Some(factor),
                        ..Default::default()
                    };
                    Scheme::new(SchemeKind::Speculative, n, params).unwrap()
                }),
            )
            .collect();
        let classes = Workers::Classes {
            classes: vec![
                (n.div_ceil(2), Dist::exp(1.0).unwrap()),
                (n / 2, Dist::pareto(0.5, 1.5).unwrap()),
            ]
            .into_iter()
            .filter(|c| c.0 > 0)
            .collect(),
            shuffle: true,
        };
        let persistent: Dist = "exp:rate=1,p_slow=0.2,slowdown=5,persist=0.9".parse().unwrap();
        for workers in [
            Workers::Iid(Dist::exp(1.0).unwrap()),
            Workers::Iid(persistent),
            classes,
            Workers::Trace(trace.clone()),
        ] {
            for model in [LoadModel::Fixed, LoadModel::Affine { unit_time: 1e16 }] {
                for iterations in [1, 3] {
                    let Ok(study) = Study::with_workers(n, workers.clone(), model, schemes.clone(), 1500, 3)
                        .unwrap()
                        .with_iterations(iterations)
                    else {
                        continue;
                    };
                    let plan = |path| TrialPlan::with(&study, path, Sampling::Draws);
                    let fast = engine::simulate_with(&plan(RulePath::Fast), &study, &Silent);
                    let events = engine::simulate_with(&plan(RulePath::Events), &study, &Silent);
                    assert_eq!(fast, events, "n={n} {workers} {model} iterations={iterations}");
                    // The staleness counted on the way, trial by trial.
                    let (fast, events) = (plan(RulePath::Fast), plan(RulePath::Events));
                    let (mut a, mut b) = (fast.scratch(), events.scratch());
                    let (mut x, mut y) = (vec![0.0; fast.slots()], vec![0.0; events.slots()]);
                    for trial in 0..50 {
                        fast.run(3, trial, &mut a, &mut x);
                        events.run(3, trial, &mut b, &mut y);
                        assert_eq!(
                            (&x, a.tally()),
                            (&y, b.tally()),
                            "n={n} {workers} {model} trial {trial}"
                        );
                    }
                }
            }
        }
    }
}

/// A trace of `steps` steps of 8 workers whose times repeat (every time is
/// one of 7 values), so that draws from it tie.
fn trace_text(steps: usize, values: usize) -> String {
    let mut text = String::from("step,worker,time\n");
    for step in 0..steps {
        for w in 0..8 {
            text += &format!("{step},{w},{}\n", 1.0 + ((step * 8 + w) * 5 % values) as f64 * 0.25);
        }
    }
    text
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

/// Order-statistic sampling and one-draw-per-worker sampling give the same
/// distribution of every configuration's iteration time: two-sample
/// Kolmogorov–Smirnov on 20 000 trials each, at the 0.1% level
/// (√(n/2)·D < 1.95), for exponential, shifted-exponential, Pareto,
/// Weibull and log-normal laws, the bootstrap from a trace (where the test is
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
    assert_eq!(order_statistics_against_draws(n, schemes, 100), 8 * 3 * 6);
    // Past the top block (n = 100 draws the top 51 and the rest on demand).
    let n = 100;
    let schemes = vec![
        scheme(SchemeKind::Crc, n, Some(10), None, None),
        scheme(SchemeKind::Crc, n, Some(75), None, None),
        scheme(SchemeKind::Mds, n, None, None, Some(2)),
        scheme(SchemeKind::Frc, n, Some(19), None, None),
        scheme(SchemeKind::Frc, n, Some(49), None, None),
    ];
    assert_eq!(order_statistics_against_draws(n, schemes, 200), 8 * 3 * 6);
}

/// The KS checks of [`order_statistics_and_draws_agree_in_distribution`]
/// for one worker count; returns how many were made.
fn order_statistics_against_draws(n: usize, schemes: Vec<Scheme>, seed: u64) -> usize {
    let mut laws = super::standard_laws();
    laws.extend([
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
    ]);
    let models = super::monotone_models();
    let mut checks = 0;
    for (i, workers) in laws.iter().enumerate() {
        for model in models {
            let study =
                Study::with_workers(n, workers.clone(), model, schemes.clone(), 20_000, seed + i as u64).unwrap();
            checks += order_statistics_against_draws_in(&study);
        }
    }
    checks
}

/// The event walk and the closed-form fast path give the same bits on
/// `study` with `sampling`; `label` names the case in the failure.
pub(super) fn walk_equals_fast_path(study: &Study, sampling: Sampling, label: &str) {
    let plan = |path| TrialPlan::with(study, path, sampling);
    let fast = engine::simulate_with(&plan(RulePath::Fast), study, &Silent);
    let events = engine::simulate_with(&plan(RulePath::Events), study, &Silent);
    assert_eq!(fast, events, "{label}");
}

/// Each slot's values of `study`'s trials, in trial order, on one rule
/// path and sampling.
pub(super) fn columns(study: &Study, path: RulePath, sampling: Sampling) -> Vec<Vec<f64>> {
    let plan = TrialPlan::with(study, path, sampling);
    let mut scratch = plan.scratch();
    let mut out = vec![0.0; plan.slots()];
    let mut cols = vec![Vec::with_capacity(study.trials() as usize); plan.slots()];
    for t in 0..study.trials() {
        plan.run(study.seed(), t, &mut scratch, &mut out);
        cols.iter_mut().zip(&out).for_each(|(c, v)| c.push(*v));
    }
    cols
}

/// Two-sample KS of every slot of `study`, its trials by order statistics
/// against as many by one draw per worker; returns how many were made.
pub(super) fn order_statistics_against_draws_in(study: &Study) -> usize {
    assert!(engine::order_statistics_apply(study), "{}", study.workers());
    let columns = |sampling| {
        let mut cols = columns(study, RulePath::Fast, sampling);
        cols.iter_mut().for_each(|c| c.sort_by(f64::total_cmp));
        cols
    };
    let (a, b) = (columns(Sampling::OrderStatistics), columns(Sampling::Draws));
    for (slot, (x, y)) in a.iter().zip(&b).enumerate() {
        let stat = ks_statistic(x, y);
        let (workers, model) = (study.workers(), study.load_model());
        assert!(stat < 1.95, "{workers} {model} slot {slot}: KS {stat:.3}");
    }
    a.len()
}

/// √(N/2)·D, D = sup |F_x − F_y| over the pooled sample, of two sorted
/// samples of N values each: below 1.95 at the 0.1% level.
pub(super) fn ks_statistic(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len());
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < x.len() && j < y.len() {
        let t = x[i].min(y[j]);
        while i < x.len() && x[i] <= t {
            i += 1;
        }
        while j < y.len() && y[j] <= t {
            j += 1;
        }
        d = d.max((i as f64 - j as f64).abs() / x.len() as f64);
    }
    d * (x.len() as f64 / 2.0).sqrt()
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
