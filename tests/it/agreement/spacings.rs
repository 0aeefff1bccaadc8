//! The whole sorted sample by Rényi's spacings, for messages of a constant
//! transfer time: against one draw per worker (Kolmogorov–Smirnov), the
//! closed forms against the event walk, and where it applies.

use gcsim::dist::Dist;
use gcsim::engine::{self, RulePath, Sampling, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Scheme, SchemeKind};
use gcsim::study::{Study, Workers};

use super::samplers::{columns, ks_statistic};
use super::scheme;

/// Where messages take a constant time and every rule is k-of-n, the whole
/// sorted sample drawn by spacings gives the same law as one draw per
/// worker (two-sample Kolmogorov–Smirnov on 20 000 trials each, at the 0.1%
/// level), on dedicated and shared links, for every `Standard` law and the
/// monotone load models, with a deadline and a split message among the
/// rules; and the closed forms on its sorted arrivals give the event walk's
/// bits.
#[test]
fn spacings_and_draws_agree_in_distribution() {
    use gcsim::comm::{Comm, Link};
    let n = 24;
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Crc, n, Some(3), None, None),
        scheme(SchemeKind::Mds, n, None, None, Some(2)),
        scheme(SchemeKind::CommEfficient, n, Some(2), Some(3), None),
        Scheme::new(
            SchemeKind::Timeout,
            n,
            gcsim::scheme::Params {
                timeout: Some(4.0),
                ..Default::default()
            },
        )
        .unwrap(),
    ];
    let laws = super::standard_laws();
    let trials = 20_000u64;
    let mut checks = 0;
    for (i, workers) in laws.iter().enumerate() {
        for model in super::monotone_models() {
            for link in [Link::Dedicated, Link::Shared] {
                let comm = Comm::new(Some(0.2), None, link, 0.0).unwrap();
                let study = Study::with_workers(n, workers.clone(), model, schemes.clone(), trials, 300 + i as u64)
                    .unwrap()
                    .with_comm(comm);
                assert_eq!(TrialPlan::new(&study).sampling(), Sampling::Spacings, "{workers}");
                let columns = |path, sampling| columns(&study, path, sampling);
                let spacings = columns(RulePath::Fast, Sampling::Spacings);
                assert_eq!(
                    spacings,
                    columns(RulePath::Events, Sampling::Spacings),
                    "{workers} {model} {comm}: the closed forms are not the walk"
                );
                let draws = columns(RulePath::Fast, Sampling::Draws);
                for (slot, (mut x, mut y)) in spacings.into_iter().zip(draws).enumerate() {
                    x.sort_by(f64::total_cmp);
                    y.sort_by(f64::total_cmp);
                    let stat = ks_statistic(&x, &y);
                    assert!(stat < 1.95, "{workers} {model} {comm} slot {slot}: KS {stat:.3}");
                    checks += 1;
                }
            }
        }
    }
    assert_eq!(checks, 6 * 3 * 2 * 6);
}

/// Spacings are for constant transfers and k-of-n rules only: random
/// transfers, frc's groups, a strategy, log-normal workers and worker
/// classes keep their own sampling.
#[test]
fn spacings_only_where_they_apply() {
    use gcsim::comm::{Comm, Link};
    let n = 12;
    let crc = vec![scheme(SchemeKind::Crc, n, Some(2), None, None)];
    let constant = Comm::new(Some(0.3), None, Link::Shared, 0.0).unwrap();
    let random = Comm::new(None, Some(Dist::exp(2.0).unwrap()), Link::Shared, 0.0).unwrap();
    let study = |workers: Workers, schemes: Vec<Scheme>, comm: Comm| {
        Study::with_workers(n, workers, LoadModel::Fixed, schemes, 10, 1)
            .unwrap()
            .with_comm(comm)
    };
    let exp = || Workers::Iid(Dist::exp(1.0).unwrap());
    assert!(engine::spacings_apply(&study(exp(), crc.clone(), constant)));
    assert!(!engine::spacings_apply(&study(exp(), crc.clone(), random)));
    let frc = vec![scheme(SchemeKind::Frc, n, Some(2), None, None)];
    assert!(!engine::spacings_apply(&study(exp(), frc, constant)));
    let lognormal = Workers::Iid(Dist::lognormal(0.0, 1.0).unwrap());
    assert!(engine::spacings_apply(&study(lognormal, crc.clone(), constant)));
    let mixture = Workers::Iid(Dist::exp(1.0).unwrap().with_stragglers(0.1, 5.0).unwrap());
    assert!(!engine::spacings_apply(&study(mixture, crc.clone(), constant)));
    let classes = Workers::Classes {
        classes: vec![(6, Dist::exp(1.0).unwrap()), (6, Dist::exp(0.5).unwrap())],
        shuffle: false,
    };
    assert!(!engine::spacings_apply(&study(classes, crc.clone(), constant)));
    let no_comm = Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, crc.clone(), 10, 1).unwrap();
    assert!(!engine::spacings_apply(&no_comm));
}
