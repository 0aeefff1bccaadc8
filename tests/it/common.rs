//! Helpers shared by the analytic test modules.

use gcsim::analytic::{IterationLaw, iteration_law};
use gcsim::dist::Dist;
use gcsim::load::LoadModel;
use gcsim::scheme::{Scheme, SchemeKind};

/// `kind` on n workers with tolerance s (k = n − s for mds, m = 1 for
/// comm-efficient).
pub fn scheme(kind: SchemeKind, n: usize, s: usize) -> Scheme {
    match kind {
        SchemeKind::CommEfficient => Scheme::comm_efficient(n, s, 1),
        _ => Scheme::with_tolerance(kind, n, s),
    }
    .unwrap()
}

/// The law, which the test expects to exist.
pub fn law(dist: &Dist, load: LoadModel, sch: &Scheme) -> IterationLaw {
    iteration_law(dist, &load, sch).unwrap_or_else(|| panic!("{dist} {load} {sch}: no law"))
}

/// Exponential with rate 1.
pub fn exp1() -> Dist {
    Dist::exp(1.0).unwrap()
}
