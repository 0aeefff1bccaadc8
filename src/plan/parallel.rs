//! `plan --parallel`: what a plan of a hybrid-parallel job searches and
//! refuses.

use anyhow::{Result, bail};

use gcsim::parallel::Parallel;
use gcsim::scheme::SchemeKind;
use gcsim::study::{ParallelConflict, StudyError};

use super::PlanArgs;
use crate::flags::{N, PARALLEL, REF_N};

/// The schemes that code across a layout's replicas.
pub(super) const PARALLEL_SCHEMES: [SchemeKind; 5] = [
    SchemeKind::Uncoded,
    SchemeKind::Ignore,
    SchemeKind::Frc,
    SchemeKind::Crc,
    SchemeKind::Mds,
];

/// The hybrid-parallel job of `--parallel`, if given, checked against
/// what `plan` searches there: its one size (the rank count), no `--ref-n`,
/// no `--load-model` (a replica's load is its microbatches).
pub(super) fn layout(args: &PlanArgs) -> Result<Option<Parallel>> {
    let Some(parallel) = args.common.parallel.parallel()? else {
        return Ok(None);
    };
    args.common.parallel.one_microbatch_count("plan")?;
    if let Some(l) = args.n.as_ref().filter(|l| l.values.len() > 1) {
        bail!(
            "{N} {}: a {PARALLEL} plan searches one layout; give its rank count ({}) or no {N}",
            l.text,
            parallel.layout.ranks()
        );
    }
    if args.ref_n.is_some() {
        bail!(
            "{REF_N} rescales a flat cluster's share of the work; under {PARALLEL} a replica's work is its microbatches: drop {REF_N}"
        );
    }
    if args.common.cluster.load_model.is_some() {
        return Err(StudyError::UnderParallel(ParallelConflict::LoadModel).into());
    }
    Ok(Some(parallel))
}
