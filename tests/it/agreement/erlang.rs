//! Additive loads over exponential units by order statistics: each whole
//! load's Erlang quantile of the standard exponentials, against one draw
//! per unit (Kolmogorov–Smirnov), against the event walk (bits), and where
//! the path applies.

use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Scheme, SchemeKind};
use gcsim::study::Study;

use super::samplers::order_statistics_against_draws_in;
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
        let plan = |path| TrialPlan::with(&study, path, Sampling::OrderStatistics);
        let fast = engine::simulate_with(&plan(RulePath::Fast), &study, &Silent);
        let events = engine::simulate_with(&plan(RulePath::Events), &study, &Silent);
        assert_eq!(fast, events, "n={n}");
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
