//! The candidates of a plan at one cluster size: every admissible
//! parameter of every allowed scheme, in order of load, within `--max-load`.

use super::{PlanError, PlanRequest};
use crate::scheme::search::PlanLists;
use crate::scheme::{Params, Scheme};

/// The candidates at `n` for `req`, with the factor N0/n of the work. A
/// scheme's load grows with s (and as k falls), so each of its scans (see
/// [`crate::scheme::search::Scan`]) stops at the first candidate over
/// `--max-load`.
/// More than `room` candidates are not built: the count exceeds the limit.
pub(super) fn candidates(req: &PlanRequest, n: usize, factor: f64, room: usize) -> Result<Vec<Scheme>, PlanError> {
    let mut out = Vec::new();
    let fits = |s: &Scheme| req.max_load.is_none_or(|l| s.load() * factor <= l);
    // Under a layout a replica of load L runs L·M microbatches: a load
    // that makes them fractional is skipped, not the end of the scan.
    let whole = |s: &Scheme| {
        req.parallel.as_ref().is_none_or(|p| {
            let m = s.load() * p.microbatches as f64;
            m.fract() == 0.0 && m <= crate::parallel::MAX_MICROBATCHES as f64
        })
    };
    // Adds the schemes of `params` in order of load, while they fit.
    let scan = |out: &mut Vec<Scheme>, kind, params: Box<dyn Iterator<Item = Params>>| {
        for p in params {
            if out.len() > room {
                return;
            }
            match Scheme::new(kind, n, p) {
                Ok(s) if fits(&s) && !whole(&s) => {}
                Ok(s) if fits(&s) => out.push(s),
                Ok(_) => return,
                Err(_) => {}
            }
        }
    };
    let lists = PlanLists {
        parts: req.parts.clone(),
        m: req.m.clone(),
        timeouts: req.timeouts.clone(),
    };
    for &kind in &req.schemes {
        for run in (kind.facts().search)(n, &lists) {
            let start = out.len();
            scan(&mut out, kind, run.params);
            if run.reverse {
                out[start..].reverse();
            }
        }
    }
    out.dedup();
    if out.is_empty() {
        return Err(PlanError::NoCandidate {
            n,
            max_load: req.max_load.unwrap_or(f64::INFINITY),
            smallest: factor,
        });
    }
    Ok(out)
}
