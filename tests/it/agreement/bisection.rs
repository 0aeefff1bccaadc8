//! Messages of a constant transfer time by the top order statistics and the
//! lower ones a shared link's queue cannot skip, drawn by bisection: the
//! skipping walk against the event walk on every rank (bits), against one
//! draw per worker (Kolmogorov–Smirnov), a configuration's values apart
//! from the rest of the study, and where the path applies.

use gcsim::comm::{Comm, Link};
use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Scheme, SchemeKind};
use gcsim::study::{Study, Workers};

use super::samplers::{columns, ks_statistic, walk_equals_fast_path};
use super::scheme;

/// Rules in the top block of n workers, with a deadline and split messages
/// (a transfer time of their own, so a queue of their own).
fn schemes(n: usize) -> Vec<Scheme> {
    vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Crc, n, Some(3), None, None),
        scheme(SchemeKind::Crc, n, Some(n / 2 - 1), None, None),
        scheme(SchemeKind::Mds, n, None, None, Some(n - 2)),
        scheme(SchemeKind::CommEfficient, n, Some(2), Some(3), None),
        crate::strategies::timeout(n, 3.0),
    ]
}

fn study(n: usize, workers: &Workers, model: LoadModel, tau: f64, link: Link, trials: u64, seed: u64) -> Study {
    let comm = Comm::new(Some(tau), None, link, 0.0).unwrap();
    Study::with_workers(n, workers.clone(), model, schemes(n), trials, seed)
        .unwrap()
        .with_comm(comm)
}

/// The walk that skips ranges of the queue gives the bits of the event
/// walk over every rank (the same order statistics, all drawn), on both
/// links, for every `Standard` law and monotone load model, with transfer
/// times from one that makes nearly every finish reset the queue (every
/// range drawn) to one that makes almost none: below the top block a single
/// leaf (n = 40), a split (n = 100) and a deeper tree (n = 300).
#[test]
fn skipping_walk_equals_the_event_walk() {
    let laws = super::standard_laws();
    let models = super::monotone_models();
    let mut cases = 0;
    for n in [40, 100, 300] {
        for (i, workers) in laws.iter().enumerate() {
            for (j, model) in models.iter().enumerate() {
                for tau in [0.001, 0.05, 0.3, 4.0] {
                    for link in [Link::Shared, Link::Dedicated] {
                        let study = study(n, workers, *model, tau, link, 300, (7 * i + j) as u64);
                        assert_eq!(TrialPlan::new(&study).sampling(), Sampling::Bisection, "{workers}");
                        let fast = columns(&study, RulePath::Fast, Sampling::Bisection);
                        let walk = columns(&study, RulePath::Events, Sampling::Bisection);
                        assert_eq!(fast, walk, "n={n} {workers} {model} tau={tau} {link}");
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 3 * 6 * 3 * 4 * 2);
    // And through the engine, every pass.
    let study = study(100, &laws[0], LoadModel::Scaled, 0.05, Link::Shared, 20_000, 3);
    walk_equals_fast_path(&study, Sampling::Bisection, "engine");
}

/// By bisection each configuration has the law of one draw per worker
/// (two-sample KS on 20 000 trials each, at the 0.1% level): n = 100, both
/// links, every `Standard` law, the monotone models, two transfer times.
#[test]
fn bisection_and_draws_agree_in_distribution() {
    let laws = super::standard_laws();
    let mut checks = 0;
    for (i, workers) in laws.iter().enumerate() {
        for model in super::monotone_models() {
            for (tau, link) in [(0.3, Link::Shared), (0.02, Link::Shared), (0.3, Link::Dedicated)] {
                let study = study(100, workers, model, tau, link, 20_000, 40 + i as u64);
                let a = columns(&study, RulePath::Fast, Sampling::Bisection);
                let b = columns(&study, RulePath::Fast, Sampling::Draws);
                for (slot, (mut x, mut y)) in a.into_iter().zip(b).enumerate() {
                    x.sort_by(f64::total_cmp);
                    y.sort_by(f64::total_cmp);
                    let stat = ks_statistic(&x, &y);
                    assert!(
                        stat < 1.95,
                        "{workers} {model} tau={tau} {link} slot {slot}: KS {stat:.3}"
                    );
                    checks += 1;
                }
            }
        }
    }
    assert_eq!(checks, 6 * 3 * 3 * 7);
}

/// A node's draws come from a stream keyed by its rank, so a configuration
/// has the same values whatever else the study walks first: crc s = 10
/// alone, and among configurations of other loads and messages (queues of
/// their own that draw other ranges first).
#[test]
fn a_configurations_values_do_not_depend_on_the_rest_of_the_study() {
    let n = 100;
    let comm = Comm::new(Some(0.02), None, Link::Shared, 0.0).unwrap();
    let run = |schemes: Vec<Scheme>| {
        let study = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Scaled, schemes, 3000, 11)
            .unwrap()
            .with_comm(comm);
        assert_eq!(TrialPlan::new(&study).sampling(), Sampling::Bisection);
        engine::simulate(&study, &Silent)
    };
    let crc = scheme(SchemeKind::Crc, n, Some(10), None, None);
    let alone = run(vec![crc]);
    let among = run(vec![
        scheme(SchemeKind::Crc, n, Some(40), None, None),
        scheme(SchemeKind::CommEfficient, n, Some(30), Some(5), None),
        crc,
    ]);
    assert_eq!(alone.configs[0], among.configs[2]);
    assert_eq!(alone.baseline, among.baseline);
}

/// A trial's values depend on its index alone, not on the trials its
/// thread ran before (the drawn ranges are remembered per trial). Weibull
/// workers of shape 10 have a long lower tail: the finishes there lie far
/// apart and the queue empties often, above it they crowd and the queue
/// builds, so every rule's value depends on the ranges drawn below the
/// top block.
#[test]
fn a_trials_values_do_not_depend_on_the_trials_before_it() {
    let workers = Workers::Iid(Dist::weibull(1.0, 10.0).unwrap());
    let study = study(300, &workers, LoadModel::Fixed, 0.004, Link::Shared, 200, 5);
    let plan = TrialPlan::new(&study);
    let in_turn = columns(&study, RulePath::Fast, Sampling::Bisection);
    for t in [0, 77, 199] {
        let mut out = vec![0.0; plan.slots()];
        plan.run(study.seed(), t, &mut plan.scratch(), &mut out);
        let expected: Vec<f64> = in_turn.iter().map(|c| c[t as usize]).collect();
        assert_eq!(out, expected, "trial {t}");
    }
}

/// Bisection takes messages of a constant transfer time whose every rule
/// reads the top block, where the top block is not every worker; rules
/// below it, small clusters and random transfer times keep their paths.
#[test]
fn where_bisection_applies() {
    let exp = Workers::Iid(Dist::exp(1.0).unwrap());
    let sampling = |n: usize, s: usize, comm: Comm| {
        let schemes = vec![scheme(SchemeKind::Crc, n, Some(s), None, None)];
        let study = Study::with_workers(n, exp.clone(), LoadModel::Fixed, schemes, 10, 1)
            .unwrap()
            .with_comm(comm);
        TrialPlan::new(&study).sampling()
    };
    let constant = |link| Comm::new(Some(0.3), None, link, 0.0).unwrap();
    for link in [Link::Shared, Link::Dedicated] {
        assert_eq!(sampling(100, 50, constant(link)), Sampling::Bisection);
        // s = 51 reads E_(49), below the top 51.
        assert_eq!(sampling(100, 51, constant(link)), Sampling::Spacings);
        // Up to 32 workers the top block is every worker.
        assert_eq!(sampling(32, 3, constant(link)), Sampling::Spacings);
        assert_eq!(sampling(33, 3, constant(link)), Sampling::Bisection);
    }
    let random = Comm::new(None, Some(Dist::exp(2.0).unwrap()), Link::Shared, 0.0).unwrap();
    assert_eq!(sampling(100, 10, random), Sampling::Draws);
}
