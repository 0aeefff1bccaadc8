//! Deadlines (the `timeout` scheme) by order statistics: the rule's order
//! statistic from the top block and the fastest worker's time drawn below
//! it from a stream of its own, against one draw per worker
//! (Kolmogorov–Smirnov), against the event walk (bits), against the exact
//! E_(1), and where the path applies.

use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::SchemeKind;
use gcsim::study::{Study, Workers};

use super::samplers::{columns, ks_statistic, order_statistics_against_draws_in, walk_equals_fast_path};
use super::scheme;
use crate::strategies::timeout;

/// Deadlines where the first arrival, the deadline and the last arrival
/// each decide (n = 20, every order statistic in the block; n = 100, the
/// fastest drawn below the block), beside crc, for the laws drawn by order
/// statistics and every monotone load model: KS against the draws.
#[test]
fn deadlines_and_draws_agree_in_distribution() {
    let mut checks = 0;
    for (i, n) in [20usize, 100].into_iter().enumerate() {
        let schemes = vec![
            timeout(n, 0.005),
            timeout(n, 0.3),
            timeout(n, 3.0),
            scheme(SchemeKind::Crc, n, Some(3), None, None),
        ];
        for (j, workers) in super::standard_laws().into_iter().enumerate() {
            for (k, model) in [
                LoadModel::Fixed,
                LoadModel::Scaled,
                LoadModel::Affine { unit_time: 0.2 },
            ]
            .into_iter()
            .enumerate()
            {
                let seed = 500 + 100 * i as u64 + 10 * j as u64 + k as u64;
                let study = Study::with_workers(n, workers.clone(), model, schemes.clone(), 20_000, seed).unwrap();
                checks += order_statistics_against_draws_in(&study);
            }
        }
    }
    assert_eq!(checks, 2 * 6 * 3 * 5);
}

/// Deadlines just above the fastest worker's time, where it decides often
/// and the lowest time of the top block lies close above: the fast path
/// skips the fastest's draw only where the lowest drawn time is before the
/// deadline, which the constant of the law and of an affine load move, and
/// then takes the rule's time where it is first (n = 40 and 100, the
/// fastest below the top block; KS against the draws).
#[test]
fn deadlines_near_the_fastest_worker_agree_with_the_draws() {
    let mut checks = 0;
    for n in [40usize, 100] {
        let workers = Workers::Iid(Dist::shifted_exp(1.0, 5.0).unwrap());
        for (model, shift) in [(LoadModel::Fixed, 1.0), (LoadModel::Affine { unit_time: 0.5 }, 1.5)] {
            // A study's fastest is drawn unless every deadline is clear of
            // it: the near deadlines, then one after every arrival in about
            // half the trials, alone.
            for after in [&[0.002, 0.01, 0.05][..], &[1.0]] {
                let schemes = after.iter().map(|d| timeout(n, shift + d)).collect();
                let study = Study::with_workers(n, workers.clone(), model, schemes, 20_000, n as u64).unwrap();
                checks += order_statistics_against_draws_in(&study);
            }
        }
    }
    assert_eq!(checks, 2 * 2 * (4 + 2));
}

/// A study whose every slot reads only the largest time (deadlines, frc's
/// groups, s = 0, the uncoded baseline) draws that alone by its quantile,
/// and the fastest given it. Each slot, and each deadline's and s = 0's
/// difference from the uncoded time (which the pairing of the largest with
/// the fastest decides; frc is paired through the largest by design, not
/// as by draws), against one draw per worker (KS), for the laws drawn by order
/// statistics, at n = 20 and 100, with deadlines where the fastest decides
/// often (0.3 under exp(2), below the shifted laws' least time) and where
/// it rarely does.
#[test]
fn studies_reading_only_the_largest_agree_with_the_draws() {
    let mut checks = 0;
    for n in [20usize, 100] {
        let schemes = vec![
            timeout(n, 0.3),
            timeout(n, 4.0),
            scheme(SchemeKind::Frc, n, Some(1), None, None),
            scheme(SchemeKind::Crc, n, Some(0), None, None),
        ];
        for (j, workers) in super::standard_laws().into_iter().enumerate() {
            for model in [LoadModel::Fixed, LoadModel::Affine { unit_time: 0.2 }] {
                let seed = 900 + 10 * j as u64 + n as u64;
                let study = Study::with_workers(n, workers.clone(), model, schemes.clone(), 20_000, seed).unwrap();
                checks += order_statistics_against_draws_in(&study);
                let differences = |sampling| {
                    let cols = columns(&study, RulePath::Fast, sampling);
                    let uncoded = cols.last().expect("the baseline's slot");
                    let mut diffs: Vec<Vec<f64>> = [0, 1, 3]
                        .into_iter()
                        .map(|slot| cols[slot].iter().zip(uncoded).map(|(x, u)| u - x).collect())
                        .collect();
                    diffs.iter_mut().for_each(|d| d.sort_by(f64::total_cmp));
                    diffs
                };
                let (a, b) = (differences(Sampling::OrderStatistics), differences(Sampling::Draws));
                for (slot, (x, y)) in [0, 1, 3].into_iter().zip(a.iter().zip(&b)) {
                    let stat = ks_statistic(x, y);
                    assert!(
                        stat < 1.95,
                        "{workers} {model} n={n}: uncoded − slot {slot}, KS {stat:.3}"
                    );
                    checks += 1;
                }
            }
        }
    }
    assert_eq!(checks, 2 * 6 * 2 * (5 + 3));
}

/// The fastest of n exponential(1) workers is Exp(n): a deadline far below
/// every arrival reads it alone, so the mean is 1/n and P(T ≤ t) =
/// 1 − e^(−nt), within 4.5 standard errors, at n = 100 and 3000 (a study
/// that reads only the largest time: the fastest lies n − 1 values below
/// it).
#[test]
fn the_fastest_worker_below_the_block_is_exact() {
    for (n, seed) in [(100usize, 71u64), (3000, 72)] {
        let study = Study::new(
            n,
            Dist::exp(1.0).unwrap(),
            LoadModel::Fixed,
            vec![timeout(n, 1e-12)],
            200_000,
            seed,
        )
        .unwrap();
        assert_eq!(TrialPlan::new(&study).sampling(), Sampling::OrderStatistics);
        let summary = &engine::simulate(&study, &Silent).configs[0];
        let z = (summary.mean.mean - 1.0 / n as f64) / summary.mean.std_err.unwrap();
        assert!(
            z.abs() < super::Z,
            "n={n}: mean {} vs {}: z = {z:.2}",
            summary.mean.mean,
            1.0 / n as f64
        );
        let cdf = |t: f64| -(-(n as f64) * t).exp_m1();
        super::check_quantiles(&format!("fastest of {n}"), summary, &cdf);
    }
}

/// The event walk on the order statistics, with the same fastest worker's
/// draw, gives the fast path's bits.
#[test]
fn deadlines_event_path_equals_fast_path() {
    for n in [12, 96] {
        let schemes = vec![
            timeout(n, 0.05),
            timeout(n, 2.0),
            scheme(SchemeKind::Crc, n, Some(2), None, None),
        ];
        let study = Study::new(n, Dist::pareto(1.0, 2.0).unwrap(), LoadModel::Scaled, schemes, 3000, 5).unwrap();
        walk_equals_fast_path(&study, Sampling::OrderStatistics, &format!("n={n}"));
    }
}

/// A deadline takes order statistics only with one law for every worker
/// and slot: not with worker classes, transfer times or additive loads.
#[test]
fn deadlines_take_order_statistics_only_where_they_apply() {
    use gcsim::comm::{Comm, Link};
    let n = 12;
    let schemes = vec![timeout(n, 1.0)];
    let exp = Dist::exp(1.0).unwrap();
    let sampling = |study: Study| TrialPlan::new(&study).sampling();
    let study = |workers: Workers, model| Study::with_workers(n, workers, model, schemes.clone(), 10, 1).unwrap();
    assert_eq!(
        sampling(study(Workers::Iid(exp), LoadModel::Scaled)),
        Sampling::OrderStatistics
    );
    let classes = Workers::Classes {
        classes: vec![(6, exp), (6, Dist::exp(0.5).unwrap())],
        shuffle: false,
    };
    assert_eq!(sampling(study(classes, LoadModel::Fixed)), Sampling::Draws);
    assert_eq!(sampling(study(Workers::Iid(exp), LoadModel::Additive)), Sampling::Draws);
    let comm = Comm::new(None, Some(Dist::exp(2.0).unwrap()), Link::Dedicated, 0.0).unwrap();
    assert_eq!(
        sampling(study(Workers::Iid(exp), LoadModel::Fixed).with_comm(comm)),
        Sampling::Draws
    );
}
