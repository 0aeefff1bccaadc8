//! The uncertainty of a trace's recorded steps in a plan: each candidate's
//! objective over bootstrap replicates of the trace (see
//! [`crate::engine::bootstrap`]), whose spread widens its interval.

use super::{Objective, PlanError, PlanRequest, objective_of};
use crate::engine::bootstrap;
use crate::engine::{Options, Outcome};
use crate::study::Study;

/// The variance due to the data of each candidate's objective; `None` for
/// a law, or with no replicates asked for.
pub(super) fn data_variance(
    req: &PlanRequest,
    study: &Study,
    simulate: &dyn Fn(&Study, &Options) -> Outcome,
    deadline: &Option<f64>,
) -> Result<Option<Vec<f64>>, PlanError> {
    let options = Options {
        deadline: *deadline,
        ..Options::default()
    };
    Ok(bootstrap::data_variance(
        study,
        req.data_replicates,
        &options,
        simulate,
        &|summary| objective_of(&req.objective, summary),
    )?)
}

/// A Monte Carlo interval `ci` around `value`, each side widened by the
/// data's variance `var` (a probability stays within [0, 1]).
pub(super) fn widened(value: f64, ci: (f64, f64), var: f64, objective: &Objective) -> (f64, f64) {
    let (low, high) = bootstrap::widened(value, ci, var);
    match objective {
        Objective::Deadline(_) => (low.max(0.0), high.min(1.0)),
        _ => (low, high),
    }
}
