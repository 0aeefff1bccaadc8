//! Order statistics where each configuration has a law of its own: additive
//! loads over exponential units (each whole load's Erlang quantile of the
//! standard exponentials) and exponential transfers on dedicated links (each
//! configuration's hypoexponential arrival law), against one draw per
//! unit or per worker and message (Kolmogorov–Smirnov), against the event
//! walk (bits), against the exact law, and where the path applies.

use gcsim::comm::{Comm, Link};
use gcsim::dist::Dist;
use gcsim::engine::{self, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Scheme, SchemeKind};
use gcsim::study::Study;

use super::samplers::{order_statistics_against_draws_in, walk_equals_fast_path};
use super::scheme;

/// Under Erlang loads (additive, exponential units, whole loads) the event
/// walk runs on the standard exponentials and applies each slot's load
/// after it: the fast path's bits, k-of-n rules in and below the top block.
#[test]
fn erlang_loads_event_path_equals_fast_path() {
    for (n, deep) in [(12, 5), (96, 70)] {
        let schemes = vec![
            scheme(SchemeKind::Uncoded, n, None, None, None),
            scheme(SchemeKind::Ignore, n, Some(3), None, None),
            scheme(SchemeKind::Crc, n, Some(2), None, None),
            scheme(SchemeKind::Mds, n, None, None, Some(4)),
            scheme(SchemeKind::Crc, n, Some(deep), None, None),
        ];
        let study = Study::new(n, Dist::exp(1.5).unwrap(), LoadModel::Additive, schemes, 3000, 5).unwrap();
        walk_equals_fast_path(&study, Sampling::OrderStatistics, &format!("n={n}"));
    }
}

/// Additive loads over exponential and shifted-exponential units, drawn as
/// each whole load's Erlang quantile of the standard exponential order
/// statistics, against one draw per unit: the KS check above for k-of-n
/// and frc rules, in the top block and below it (n = 100, crc s = 75).
#[test]
fn erlang_loads_and_draws_agree_in_distribution() {
    let small = 20;
    let large = 100;
    let cases = [
        (
            small,
            vec![
                scheme(SchemeKind::Uncoded, small, None, None, None),
                scheme(SchemeKind::Crc, small, Some(3), None, None),
                scheme(SchemeKind::Frc, small, Some(3), None, None),
                scheme(SchemeKind::Frc, small, Some(1), None, None),
                scheme(SchemeKind::Mds, small, None, None, Some(4)),
            ],
        ),
        (
            large,
            vec![
                scheme(SchemeKind::Crc, large, Some(10), None, None),
                scheme(SchemeKind::Crc, large, Some(75), None, None),
                scheme(SchemeKind::Mds, large, None, None, Some(2)),
                scheme(SchemeKind::Frc, large, Some(19), None, None),
                scheme(SchemeKind::Frc, large, Some(49), None, None),
            ],
        ),
    ];
    let mut checks = 0;
    for (i, (n, schemes)) in cases.into_iter().enumerate() {
        for (j, units) in [Dist::exp(2.0).unwrap(), Dist::shifted_exp(1.0, 1.0).unwrap()]
            .into_iter()
            .enumerate()
        {
            let seed = 300 + 10 * i as u64 + j as u64;
            let study = Study::new(n, units, LoadModel::Additive, schemes.clone(), 20_000, seed).unwrap();
            checks += order_statistics_against_draws_in(&study);
        }
    }
    assert_eq!(checks, 2 * 2 * 6);
}

/// Order statistics serve additive loads only where each worker's time is
/// an increasing function of one standard exponential: exponential or
/// shifted-exponential units without stragglers, and every load a whole
/// number of units up to the Erlang table's largest.
#[test]
fn erlang_loads_take_order_statistics_only_where_they_apply() {
    use gcsim::dist::MAX_ERLANG_SHAPE;
    let sampling = |n: usize, dist: Dist, schemes: Vec<Scheme>| {
        let study = Study::new(n, dist, LoadModel::Additive, schemes, 10, 1).unwrap();
        TrialPlan::new(&study).sampling()
    };
    let exp = Dist::exp(1.0).unwrap();
    let whole = vec![
        scheme(SchemeKind::Crc, 12, Some(2), None, None),
        scheme(SchemeKind::Mds, 12, None, None, Some(4)),
    ];
    assert_eq!(sampling(12, exp, whole.clone()), Sampling::OrderStatistics);
    let shifted = Dist::shifted_exp(0.5, 1.0).unwrap();
    assert_eq!(sampling(12, shifted, whole.clone()), Sampling::OrderStatistics);
    // Load 12/5 = 2.4 units: its fraction of a unit is not Erlang.
    let fractional = vec![scheme(SchemeKind::Mds, 12, None, None, Some(5))];
    assert_eq!(sampling(12, exp, fractional), Sampling::Draws);
    for other in [
        Dist::pareto(1.0, 2.0).unwrap(),
        Dist::weibull(1.0, 1.5).unwrap(),
        exp.with_stragglers(0.1, 5.0).unwrap(),
    ] {
        assert_eq!(sampling(12, other, whole.clone()), Sampling::Draws, "{other}");
    }
    let n = 2 * MAX_ERLANG_SHAPE as usize;
    let at = |s: usize| vec![scheme(SchemeKind::Crc, n, Some(s), None, None)];
    let largest = MAX_ERLANG_SHAPE as usize - 1;
    assert_eq!(sampling(n, exp, at(largest)), Sampling::OrderStatistics);
    assert_eq!(sampling(n, exp, at(largest + 1)), Sampling::Draws);
}

/// Exponential transfers on dedicated links from exponential workers: the
/// KS check against one draw per worker and per message, for every monotone
/// load model, k-of-n and frc rules in and below the top block, and
/// comm-efficient's smaller messages.
#[test]
fn hypoexponential_arrivals_and_draws_agree_in_distribution() {
    let mut checks = 0;
    for (i, n) in [20usize, 100].into_iter().enumerate() {
        let schemes = vec![
            scheme(SchemeKind::Uncoded, n, None, None, None),
            scheme(SchemeKind::Crc, n, Some(3), None, None),
            scheme(SchemeKind::Crc, n, Some(3 * n / 4), None, None),
            scheme(SchemeKind::Frc, n, Some(3), None, None),
            scheme(SchemeKind::CommEfficient, n, Some(2), Some(3), None),
        ];
        let models = super::monotone_models();
        for (j, model) in models.into_iter().enumerate() {
            for (k, (workers, transfer)) in [
                (Dist::exp(1.0).unwrap(), Dist::exp(2.0).unwrap()),
                (
                    Dist::shifted_exp(0.5, 2.0).unwrap(),
                    Dist::shifted_exp(0.2, 0.7).unwrap(),
                ),
            ]
            .into_iter()
            .enumerate()
            {
                let comm = Comm::new(None, Some(transfer), Link::Dedicated, 0.1).unwrap();
                let seed = 400 + 100 * i as u64 + 10 * j as u64 + k as u64;
                let study = Study::new(n, workers, model, schemes.clone(), 20_000, seed)
                    .unwrap()
                    .with_comm(comm);
                checks += order_statistics_against_draws_in(&study);
            }
        }
    }
    assert_eq!(checks, 2 * 3 * 2 * 6);
}

/// With hypoexponential arrivals the event walk on the standard
/// exponentials, each slot's arrival law applied after it, gives the fast
/// path's bits.
#[test]
fn hypoexponential_arrivals_event_path_equals_fast_path() {
    for (n, deep) in [(12, 5), (96, 70)] {
        let schemes = vec![
            scheme(SchemeKind::Uncoded, n, None, None, None),
            scheme(SchemeKind::Crc, n, Some(2), None, None),
            scheme(SchemeKind::CommEfficient, n, Some(2), Some(2), None),
            scheme(SchemeKind::Crc, n, Some(deep), None, None),
        ];
        let comm = Comm::new(None, Some(Dist::exp(2.0).unwrap()), Link::Dedicated, 0.0).unwrap();
        let study = Study::new(n, Dist::exp(1.5).unwrap(), LoadModel::Scaled, schemes, 3000, 5)
            .unwrap()
            .with_comm(comm);
        walk_equals_fast_path(&study, Sampling::OrderStatistics, &format!("n={n}"));
    }
}

/// Against the exact law: a worker's arrival under `scaled` is ℓX + mC with
/// X ~ Exp(μ), C ~ Exp(ν), whose CDF is 1 − (a e^(−t/a) − b e^(−t/b))/(a − b)
/// for the means a = ℓ/μ and b = m/ν (1 − (1 + t/a) e^(−t/a) where they are
/// equal); the iteration's is the binomial tail of it (frc: the group
/// formula). Quantiles and means at n = 100, in and below the top block,
/// with one configuration whose two means are equal.
#[test]
fn hypoexponential_arrivals_match_the_exact_law() {
    let n = 100;
    let (rate, transfer_rate) = (1.0, 0.5);
    let mut schemes: Vec<Scheme> = [0, 1, 10, 50, 75]
        .into_iter()
        .map(|s| scheme(SchemeKind::Crc, n, Some(s), None, None))
        .collect();
    schemes.push(scheme(SchemeKind::Frc, n, Some(4), None, None));
    // Load 2 and message 1: both means 2.
    schemes.push(scheme(SchemeKind::Crc, n, Some(1), None, None));
    let comm = Comm::new(None, Some(Dist::exp(transfer_rate).unwrap()), Link::Dedicated, 0.0).unwrap();
    let study = Study::new(
        n,
        Dist::exp(rate).unwrap(),
        LoadModel::Scaled,
        schemes,
        super::TRIALS,
        61,
    )
    .unwrap()
    .with_comm(comm);
    assert_eq!(TrialPlan::new(&study).sampling(), Sampling::OrderStatistics);
    let outcome = engine::simulate(&study, &Silent);
    for (s, summary) in study.schemes().iter().zip(&outcome.configs) {
        let (a, b) = (s.load() / rate, s.message() / transfer_rate);
        let worker = move |t: f64| {
            if t <= 0.0 {
                0.0
            } else if a == b {
                1.0 - (1.0 + t / a) * (-t / a).exp()
            } else {
                1.0 - (a * (-t / a).exp() - b * (-t / b).exp()) / (a - b)
            }
        };
        let cdf = super::iteration_cdf(s, worker);
        let label = format!("{s} comm-dist=exp:rate={transfer_rate}");
        super::check_quantiles(&label, summary, &cdf);
        let hi = (1..).map(|i| i as f64).find(|&t| cdf(t) > 1.0 - 1e-13).unwrap();
        super::check_mean(&label, summary, super::mean_from_cdf(&cdf, 0.0, hi));
    }
}

/// Transfers take order statistics only where each arrival is a
/// hypoexponential: dedicated links, exponential transfers and workers
/// without stragglers, a monotone load. Constant transfers keep the sorted
/// spacings, and the rest the draws.
#[test]
fn hypoexponential_arrivals_take_order_statistics_only_where_they_apply() {
    let n = 12;
    let schemes = vec![
        scheme(SchemeKind::Crc, n, Some(2), None, None),
        scheme(SchemeKind::Frc, n, Some(2), None, None),
    ];
    let exp = Dist::exp(1.0).unwrap();
    let sampling = |workers: Dist, model: LoadModel, comm: Comm| {
        let study = Study::new(n, workers, model, schemes.clone(), 10, 1)
            .unwrap()
            .with_comm(comm);
        TrialPlan::new(&study).sampling()
    };
    let random = |d: Dist, link| Comm::new(None, Some(d), link, 0.0).unwrap();
    let dedicated = random(Dist::exp(2.0).unwrap(), Link::Dedicated);
    assert_eq!(sampling(exp, LoadModel::Scaled, dedicated), Sampling::OrderStatistics);
    let shifted = Dist::shifted_exp(0.5, 2.0).unwrap();
    assert_eq!(
        sampling(shifted, LoadModel::Fixed, random(shifted, Link::Dedicated)),
        Sampling::OrderStatistics
    );
    let draws = [
        (exp, LoadModel::Scaled, random(Dist::exp(2.0).unwrap(), Link::Shared)),
        (
            exp,
            LoadModel::Scaled,
            random(Dist::pareto(1.0, 3.0).unwrap(), Link::Dedicated),
        ),
        (
            exp,
            LoadModel::Scaled,
            random(exp.with_stragglers(0.1, 4.0).unwrap(), Link::Dedicated),
        ),
        (exp.with_stragglers(0.1, 4.0).unwrap(), LoadModel::Scaled, dedicated),
        (Dist::weibull(1.0, 2.0).unwrap(), LoadModel::Scaled, dedicated),
        (exp, LoadModel::Additive, dedicated),
    ];
    for (workers, model, comm) in draws {
        assert_eq!(
            sampling(workers, model, comm),
            Sampling::Draws,
            "{workers} {model} {comm}"
        );
    }
    let constant = Comm::new(Some(0.3), None, Link::Dedicated, 0.0).unwrap();
    let crc = vec![scheme(SchemeKind::Crc, n, Some(2), None, None)];
    let study = Study::new(n, exp, LoadModel::Scaled, crc, 10, 1)
        .unwrap()
        .with_comm(constant);
    assert_eq!(TrialPlan::new(&study).sampling(), Sampling::Spacings);
}
