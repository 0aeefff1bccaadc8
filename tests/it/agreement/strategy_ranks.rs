//! Strategies on the trial's order statistics: speculative copies from one
//! law and memoryless K-async against the event walk on one draw per
//! worker (Kolmogorov–Smirnov), a speculative configuration's values apart
//! from the rest of the study, and where each applies.

use gcsim::comm::{Comm, Link};
use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::{Study, Workers};

use super::samplers::{columns, order_statistics_against_draws_in, walk_equals_fast_path};
use super::scheme;

fn speculative(n: usize, after: f64, factor: f64) -> Scheme {
    let params = Params {
        speculate_after: Some(after),
        speculate_factor: Some(factor),
        ..Params::default()
    };
    Scheme::new(SchemeKind::Speculative, n, params).unwrap()
}

fn asynchronous(kind: SchemeKind, n: usize, k: usize) -> Scheme {
    let params = Params {
        k: Some(k),
        ..Params::default()
    };
    Scheme::new(kind, n, params).unwrap()
}

/// Speculative copies by rank have the law of the event walk on one draw
/// per worker: every `Standard` law (the bootstrap from a trace too, and
/// from one of two times, which tie) and monotone load model; copies for every late task (Q = 0.75, F = 1), for
/// a random subset of them (Q = 0.3: fewer idle workers than late tasks),
/// a relaunch after more results are in (F = 1.7), and none at all (F so
/// large that every task is done by then); n = 20 (the whole sample drawn)
/// and n = 100 (Q = 0.3 below the top block, drawn on demand).
#[test]
fn speculative_copies_by_rank_have_the_walks_law() {
    let mut checks = 0;
    for n in [20, 100] {
        let schemes: Vec<Scheme> = [(0.75, 1.0), (0.3, 1.0), (0.5, 1.7), (0.9, 1e6)]
            .map(|(q, f)| speculative(n, q, f))
            .into();
        // A trace of two times, 1 (58 of 64) and 10: ties at the relaunch,
        // which count as done (their workers idle, enough to copy every
        // late task at Q = 0.3), and copies from 1 that beat 10.
        let time = |i: usize| if i % 11 == 3 { 10 } else { 1 };
        let text: String = (0..64).map(|i| format!("{},{},{}\n", i / 8, i % 8, time(i))).collect();
        let tied = gcsim::trace::Trace::parse("t.csv", &format!("step,worker,time\n{text}")).unwrap();
        let mut laws = super::standard_laws();
        laws.push(Workers::Trace(std::sync::Arc::new(tied)));
        for (i, workers) in laws.into_iter().enumerate() {
            for (j, model) in super::monotone_models().into_iter().enumerate() {
                let seed = (10 * i + j) as u64;
                let study = Study::with_workers(n, workers.clone(), model, schemes.clone(), 3000, seed).unwrap();
                assert_eq!(
                    TrialPlan::new(&study).sampling(),
                    Sampling::OrderStatistics,
                    "{workers}"
                );
                checks += order_statistics_against_draws_in(&study);
            }
        }
    }
    assert_eq!(checks, 2 * 7 * 3 * 5);
}

/// K-async on exponential workers is the K-th order statistic of n fresh
/// times (memorylessness): its law on the order statistics is the event
/// walk's, for one law and for classes of rates, under every load model
/// with no constant part, K from 1 to n.
#[test]
fn memoryless_k_async_has_the_walks_law() {
    let mut checks = 0;
    for n in [20, 100] {
        let schemes: Vec<Scheme> = [1, 2, n / 2, n - 1, n]
            .map(|k| asynchronous(SchemeKind::KAsync, n, k))
            .into();
        let classes = Workers::Classes {
            classes: vec![(n / 4, Dist::exp(0.25).unwrap()), (n - n / 4, Dist::exp(2.0).unwrap())],
            shuffle: true,
        };
        for workers in [Workers::Iid(Dist::exp(2.0).unwrap()), classes] {
            for model in [
                LoadModel::Fixed,
                LoadModel::Scaled,
                LoadModel::Affine { unit_time: 0.0 },
            ] {
                let study = Study::with_workers(n, workers.clone(), model, schemes.clone(), 3000, n as u64).unwrap();
                assert!(schemes.iter().all(|s| engine::async_reads_order_statistics(&study, s)));
                assert_eq!(
                    TrialPlan::new(&study).sampling(),
                    Sampling::OrderStatistics,
                    "{workers}"
                );
                checks += order_statistics_against_draws_in(&study);
            }
        }
    }
    assert_eq!(checks, 2 * 2 * 3 * 6);
}

/// Where memorylessness or one law does not hold, the strategies keep the
/// event walk on the draws: a shifted or Pareto law, a constant part of the
/// load (affine), transfer times, a straggler mixture, K-batch-async (for
/// K-async); worker classes, additive loads, transfer times (for copies).
#[test]
fn strategies_read_order_statistics_only_where_exact() {
    let n = 30;
    let k_async = asynchronous(SchemeKind::KAsync, n, 10);
    let copies = speculative(n, 0.75, 1.0);
    let exp = Workers::Iid(Dist::exp(1.0).unwrap());
    let study = |workers: &Workers, model, scheme: &Scheme| {
        Study::with_workers(n, workers.clone(), model, vec![*scheme], 100, 1).unwrap()
    };
    let reads = |study: &Study| TrialPlan::new(study).sampling() == Sampling::OrderStatistics;
    assert!(reads(&study(&exp, LoadModel::Fixed, &k_async)));
    assert!(reads(&study(&exp, LoadModel::Fixed, &copies)));
    let transfers = Comm::new(Some(0.1), None, Link::Dedicated, 0.0).unwrap();
    let mixture = Workers::Iid("exp:rate=1,p_slow=0.1,slowdown=4".parse().unwrap());
    for (workers, model) in [
        (Workers::Iid(Dist::shifted_exp(0.5, 1.0).unwrap()), LoadModel::Fixed),
        (Workers::Iid(Dist::pareto(1.0, 2.5).unwrap()), LoadModel::Fixed),
        (exp.clone(), LoadModel::Affine { unit_time: 0.5 }),
        (mixture.clone(), LoadModel::Fixed),
    ] {
        let s = study(&workers, model, &k_async);
        assert!(!engine::async_reads_order_statistics(&s, &k_async), "{workers} {model}");
        assert!(!reads(&s), "{workers} {model}");
    }
    let batch = asynchronous(SchemeKind::KBatchAsync, n, 10);
    assert!(!reads(&study(&exp, LoadModel::Fixed, &batch)));
    let with_transfers = study(&exp, LoadModel::Fixed, &k_async).with_comm(transfers);
    assert!(!reads(&with_transfers));
    let classes = Workers::Classes {
        classes: vec![(10, Dist::exp(1.0).unwrap()), (20, Dist::exp(2.0).unwrap())],
        shuffle: false,
    };
    for (workers, model) in [
        (classes, LoadModel::Fixed),
        (exp.clone(), LoadModel::Additive),
        (mixture, LoadModel::Fixed),
    ] {
        assert!(!reads(&study(&workers, model, &copies)), "{workers} {model}");
    }
    assert!(!reads(&study(&exp, LoadModel::Fixed, &copies).with_comm(transfers)));
}

/// A speculative configuration's values do not depend on the rest of the
/// study: its copies draw from the start of the trial's extra stream, and
/// the order statistics below the top block are drawn in the same order
/// whichever configuration reaches them first (a deep tolerance, or
/// Q = 0.3).
#[test]
fn speculative_values_are_the_configurations_own() {
    let n = 100;
    let workers = Workers::Iid(Dist::weibull(1.0, 1.5).unwrap());
    let alone = vec![speculative(n, 0.75, 1.0), speculative(n, 0.3, 1.0)];
    let crowded = vec![
        scheme(SchemeKind::Crc, n, Some(80), None, None),
        speculative(n, 0.3, 1.0),
        speculative(n, 0.5, 1.7),
        speculative(n, 0.75, 1.0),
    ];
    let study =
        |schemes: Vec<Scheme>| Study::with_workers(n, workers.clone(), LoadModel::Scaled, schemes, 500, 9).unwrap();
    let (alone, crowded) = (study(alone), study(crowded));
    let of = |study: &Study| columns(study, RulePath::Fast, Sampling::OrderStatistics);
    let (a, b) = (of(&alone), of(&crowded));
    assert_eq!(a[0], b[3], "Q = 0.75");
    assert_eq!(a[1], b[1], "Q = 0.3");
    // The uncoded baseline, the last slot, reads the same trial.
    assert_eq!(a[2], b[4]);
    // The event path (every order statistic drawn, the rules walked) takes
    // the copies by rank too: the same bits.
    walk_equals_fast_path(&crowded, Sampling::OrderStatistics, "speculative by rank");
}
