//! The plan's one-line recommendation, which says when the winner is
//! inexact or stale.

use super::{Objective, PlanRow};
use crate::scheme::SchemeKind;

impl SchemeKind {
    /// Orders ties: schemes that decode the exact gradient before the
    /// inexact ones ([`crate::scheme::Facts::inexact`]).
    pub(super) fn exact_rank(self) -> u8 {
        u8::from(!self.facts().inexact)
    }
}

impl PlanRow {
    /// Whether the row runs uncoded under another name: no redundancy and
    /// every worker awaited (k = n, one message split; see
    /// [`crate::scheme::Facts::uncoded_when_all_awaited`]).
    pub(crate) fn is_uncoded(&self) -> bool {
        self.scheme.facts().uncoded_when_all_awaited && self.k == self.n && self.m.unwrap_or(1) == 1
    }

    /// The row's costs in real units, where the cost view gives them:
    /// `; a run takes 2.10 h, 134.4 GPU-hours, cost 268.80; each worker
    /// stores 46.9GB; 12.8GB sent per iteration`.
    /// Under `--objective cost` the value has said the cost already.
    fn in_real_units(&self, objective: &Objective, separator: &str) -> String {
        let mut parts = Vec::new();
        if let Some(h) = self.run_hours {
            let mut run = format!("a run takes {h:.2} h");
            if let (Some(g), false) = (self.gpu_hours, *objective == Objective::Cost) {
                run += &format!(", {g:.1} GPU-hours");
                if let Some(c) = self.cost {
                    run += &format!(", cost {c:.2}");
                }
            }
            parts.push(run);
        }
        if let Some(b) = self.storage_bytes {
            parts.push(format!(
                "each {} stores {}",
                self.who().1,
                crate::units::format_bytes(b)
            ));
        }
        if let Some(b) = self.bytes_per_iteration {
            parts.push(format!("{} sent per iteration", crate::units::format_bytes(b)));
        }
        parts.iter().map(|p| format!("{separator}{p}")).collect()
    }

    /// How the row names its n and what holds a share: the replicas of a
    /// layout (`dp=8`, `replica`), or the workers (`n=8`, `worker`).
    fn who(&self) -> (&'static str, &'static str) {
        if self.gpus.is_some() {
            ("dp", "replica")
        } else {
            ("n", "worker")
        }
    }

    /// The row's objective in words: `mean 4.1873`, `P(T <= 6) = 0.9500`.
    fn value(&self, objective: &Objective) -> String {
        match objective {
            Objective::Deadline(t) => format!("P(T <= {}) = {:.4}", crate::dist::plain(*t), self.objective),
            Objective::Cost => match (self.cost, self.gpu_hours) {
                (Some(c), Some(h)) => format!("cost {c:.2} per run ({h:.1} GPU-hours)"),
                _ => format!("{:.1} GPU-hours per run", self.objective),
            },
            o => format!("{o} {:.4}", self.objective),
        }
    }
}

/// One sentence naming the best candidate and what it gains; when the best
/// runs uncoded, it says to keep uncoded and names the best coded option.
pub fn recommendation(rows: &[PlanRow], objective: &Objective) -> Option<String> {
    let best = rows.first()?;
    if best.objective.is_infinite() {
        return Some(format!(
            "no recommendation: every candidate's {objective} is infinite (heavy tail); rank by a quantile instead, e.g. --objective p90"
        ));
    }
    if best.is_uncoded() {
        let better = match objective {
            Objective::Deadline(_) => "more likely to finish by the deadline",
            Objective::Cost => "cheaper",
            _ => "faster",
        };
        let coded = match rows.iter().find(|r| !r.is_uncoded()) {
            Some(r) => {
                format!(
                    "; the best coded option, {}={} {}, has {}{} and each {} computes {:.3}x the uncoded share",
                    r.who().0,
                    r.n,
                    &r.configuration,
                    r.value(objective),
                    r.speedup
                        .map_or(String::new(), |s| format!(" (mean speedup {s:.2}x over uncoded)")),
                    r.who().1,
                    r.load
                ) + &r.in_real_units(objective, ", ")
            }
            None => "; no coded option fits within --max-load".to_string(),
        };
        return Some(format!(
            "keep uncoded: no scheme within the limits is {better} ({}={}, {}{}){coded}",
            best.who().0,
            best.n,
            best.value(objective),
            best.in_real_units(objective, ", ")
        ));
    }
    let what = &best.configuration;
    let value = best.value(objective);
    let gain = best
        .speedup
        .map_or(String::new(), |s| format!(", mean speedup {s:.2}x over uncoded"));
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
        "recommend: {}={} {what}{exactness}: {value}{gain}; each {} stores and computes {:.3}x the uncoded share{}",
        best.who().0,
        best.n,
        best.who().1,
        best.load,
        best.in_real_units(objective, "; ")
    ))
}
