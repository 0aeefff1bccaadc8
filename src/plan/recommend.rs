//! The plan's one-line recommendation, which says when the winner is
//! inexact or stale.

use super::{Objective, PlanRow};
use crate::scheme::SchemeKind;

impl SchemeKind {
    /// Orders ties: schemes that decode the exact gradient before `ignore`.
    pub(super) fn exact_rank(self) -> u8 {
        u8::from(!matches!(
            self,
            SchemeKind::Ignore
                | SchemeKind::Timeout
                | SchemeKind::KBatchSync
                | SchemeKind::KAsync
                | SchemeKind::KBatchAsync
        ))
    }
}

/// One sentence naming the best candidate and what it gains.
pub fn recommendation(rows: &[PlanRow], objective: &Objective) -> Option<String> {
    let best = rows.first()?;
    if best.objective.is_infinite() {
        return Some(format!(
            "no recommendation: every candidate's {objective} is infinite (heavy tail); rank by a quantile instead, e.g. --objective p90"
        ));
    }
    let what = match best.scheme {
        SchemeKind::Uncoded => "uncoded".to_string(),
        SchemeKind::Mds => format!("mds k={}", best.k),
        SchemeKind::CommEfficient => format!("comm-efficient s={} m={}", best.s, best.m.unwrap_or(1)),
        SchemeKind::KBatchSync | SchemeKind::KAsync | SchemeKind::KBatchAsync => {
            format!("{} K={}", best.scheme, best.k)
        }
        SchemeKind::Timeout => format!("timeout T={}", crate::dist::plain(best.timeout.unwrap_or(0.0))),
        SchemeKind::PartialFrc | SchemeKind::PartialCrc => {
            format!("{} s={} L={}", best.scheme, best.s, best.parts.unwrap_or(0))
        }
        SchemeKind::Speculative => format!(
            "speculative Q={} F={}",
            crate::scheme::SPECULATE_AFTER,
            crate::scheme::SPECULATE_FACTOR
        ),
        kind => format!("{kind} s={}", best.s),
    };
    let value = match objective {
        Objective::Deadline(t) => format!("P(T <= {}) = {:.4}", crate::dist::plain(*t), best.objective),
        o => format!("{o} {:.4}", best.objective),
    };
    let gain = best
        .speedup
        .map_or(String::new(), |s| format!(", {s:.2}x the uncoded mean"));
    let exactness = match best.scheme {
        SchemeKind::Ignore if best.s > 0 => " (inexact: drops s/n of the data)".to_string(),
        SchemeKind::KBatchSync => format!(
            " (inexact: an update of K mini-batches, data_fraction {:.3})",
            best.k as f64 / best.n as f64
        ),
        SchemeKind::Timeout => {
            " (inexact: proceeds at T with the workers that have arrived; sweep reports its data_fraction)".to_string()
        }
        SchemeKind::KAsync | SchemeKind::KBatchAsync => format!(
            " (inexact and stale: asynchronous updates of K gradients computed on older models, data_fraction {:.3}; the objective is per update, see sweep's staleness column)",
            best.k as f64 / best.n as f64
        ),
        _ => String::new(),
    };
    Some(format!(
        "recommend: n={} {what}{exactness}: {value}{gain}; each worker stores and computes {:.3}x the uncoded share",
        best.n, best.load
    ))
}
