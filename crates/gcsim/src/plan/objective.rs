//! What a plan ranks by: the mean, a percentile, the probability of
//! finishing by a deadline, or the cost of a run.

use std::fmt;
use std::str::FromStr;

use super::{PlanRequest, PlanRow};

/// What the plan minimises (or, for a deadline, maximises).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// Mean iteration time.
    Mean,
    /// The q-quantile (0.5, 0.9, 0.99) of the iteration time.
    Quantile(f64),
    /// The probability that an iteration finishes by T.
    Deadline(f64),
    /// The cost of one run: its GPU-hours, times the price where given
    /// (needs the cost view's `--iterations-per-run` and the time unit).
    Cost,
}

impl FromStr for Objective {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let accepted = "accepted: mean, p50, p90, p99, cost, or deadline:T (e.g. deadline:2.5)";
        // Names in any case: `P99` is `p99`.
        let lower = s.trim().to_ascii_lowercase();
        Ok(match lower.as_str() {
            "mean" => Objective::Mean,
            "cost" => Objective::Cost,
            "p50" => Objective::Quantile(0.5),
            "p90" => Objective::Quantile(0.9),
            "p99" => Objective::Quantile(0.99),
            other => match other.strip_prefix("deadline:").map(str::parse::<f64>) {
                Some(Ok(t)) if t.is_finite() && t > 0.0 => Objective::Deadline(t),
                Some(_) => {
                    return Err(format!(
                        "`{}`: the deadline must be a finite number > 0; {accepted}",
                        s.trim()
                    ));
                }
                None => return Err(format!("unknown objective `{}`; {accepted}", s.trim())),
            },
        })
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Objective::Mean => write!(f, "mean"),
            Objective::Cost => write!(f, "cost"),
            Objective::Quantile(q) => write!(f, "p{}", (q * 100.0).round()),
            Objective::Deadline(t) => write!(f, "deadline:{}", crate::dist::plain(*t)),
        }
    }
}

impl Objective {
    pub(crate) fn maximise(&self) -> bool {
        matches!(self, Objective::Deadline(_))
    }

    pub(super) fn quantile_index(q: f64) -> usize {
        crate::stats::QUANTILES
            .iter()
            .position(|&x| x == q)
            .expect("p50, p90 and p99 are reported quantiles")
    }
}

/// Fills a row's cost columns; under `--objective cost` the objective (the
/// mean, as evaluated) and its interval become the run's cost, which is the
/// mean times a constant of the row.
pub(super) fn cost_columns(r: &mut PlanRow, req: &PlanRequest) {
    let c = req.costs.costs(
        req.time_unit,
        &crate::units::Footprint {
            n: r.gpus.unwrap_or(r.n),
            per_iteration: r.mean / req.iterations as f64,
            load: r.load,
            share_of: req.ref_n.unwrap_or(r.n),
            gradients_sent: crate::units::gradients_sent(r.scheme, r.s, r.parts, r.message),
            collective_gradients: r.collective_gradients,
        },
    );
    (r.iterations_per_hour, r.run_hours, r.gpu_hours, r.cost) =
        (c.iterations_per_hour, c.run_hours, c.gpu_hours, c.cost);
    (r.storage_bytes, r.bytes_per_iteration) = (c.storage_bytes, c.bytes_per_iteration);
    if req.objective == Objective::Cost {
        let unit = req.time_unit.expect("checked by plan").seconds();
        let runs = req.costs.iterations_per_run.expect("checked by plan") as f64;
        let per_mean = unit * runs / req.iterations as f64 / 3600.0
            * r.gpus.unwrap_or(r.n) as f64
            * req.costs.gpu_hour_price.unwrap_or(1.0);
        r.objective *= per_mean;
        r.objective_low = r.objective_low.map(|x| x * per_mean);
        r.objective_high = r.objective_high.map(|x| x * per_mean);
    }
}
