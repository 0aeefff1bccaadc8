//! The exact laws under all-reduce collectives: the rule's law shifted by
//! its one bucket's cost (the agreement where not every rank takes part,
//! and the sum among the participants).

use super::{Case, scheme};
use crate::collective::{Aggregation, Algorithm, Collective};
use crate::dist::Dist;
use crate::load::LoadModel;
use crate::scheme::SchemeKind;
use crate::units::TimeUnit;

/// Every algorithm on 20 workers (not a power of two, nor a multiple of
/// the nodes' 8 ranks), with the schemes whose participant set is fixed,
/// under exponential workers and a straggler mixture. The costs are of
/// the order of the computation: α = 10 ms, S·β = 0.5 s. Last, so that
/// the cases before keep their seeds.
pub(super) fn cases() -> Vec<Case> {
    let n = 20;
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, None, None, None),
        scheme(SchemeKind::Ignore, n, Some(3), None, None),
        scheme(SchemeKind::Frc, n, Some(3), None, None),
        scheme(SchemeKind::Crc, n, Some(4), None, None),
        scheme(SchemeKind::CommEfficient, n, Some(3), Some(2), None),
        scheme(SchemeKind::Mds, n, None, None, Some(10)),
    ];
    let algorithms = [
        Algorithm::Ring,
        Algorithm::Tree,
        Algorithm::HalvingDoubling,
        Algorithm::Hierarchical {
            gpus_per_node: 8,
            intra_bandwidth: 1e10,
        },
    ];
    let dists = [
        (Dist::exp(1.0), LoadModel::Fixed),
        (
            Dist::exp(1.0).and_then(|d| d.with_stragglers(0.05, 8.0)),
            LoadModel::Scaled,
        ),
    ];
    let mut cases = Vec::new();
    for algorithm in algorithms {
        for (dist, model) in &dists {
            let collective = Collective::new(algorithm, Some(1e-2), Some(1e9), Some(5e8), 1, Some(TimeUnit::Seconds))
                .expect("a valid collective");
            cases.push(Case {
                n,
                dist: dist.clone().expect("valid built-in law"),
                model: *model,
                schemes: schemes.clone(),
                aggregation: Aggregation::Collective(collective),
            });
        }
    }
    cases
}
