//! What a collective's rows report beside the iteration time: the mean
//! time from the first bucket's collective to the end of the iteration.

use rayon::prelude::*;

use super::approx::error_trials;
use super::trial::TrialPlan;
use crate::collective::Aggregation;
use crate::study::Study;

/// Per scheme of `study`, under a collective, the mean time from the start
/// of its first bucket's collective to the end of the iteration; `None`
/// under the master.
///
/// With one bucket it is the bucket's cost, a constant. With K buckets the
/// first starts at t/K, t being the time the rule is met, and the
/// iteration ends at `Collective::finish(t, c)`: the mean of the
/// difference is counted over the first [`error_trials`] trials of the
/// study's streams, the rule's times drawn as the study draws them
/// without the collective, one iteration each (every iteration has the
/// law of one).
pub fn collective_times(study: &Study) -> Vec<Option<f64>> {
    let Some(c) = study.aggregation().collective() else {
        return vec![None; study.schemes().len()];
    };
    let costs: Vec<f64> = study
        .schemes()
        .iter()
        .map(|s| study.bucket_cost(s).expect("a collective"))
        .collect();
    if c.buckets == 1 || study.parallel().is_some() {
        // A layout's sums are timed on its pipelines (see
        // `crate::engine::pipelines`).
        return costs.into_iter().map(Some).collect();
    }
    let computation = study
        .clone()
        .with_aggregation(Aggregation::Master)
        .and_then(|s| s.with_iterations(1))
        .expect("the same study at a master is valid");
    let plan = TrialPlan::new(&computation);
    let slots = plan.slots();
    let trials = error_trials(study.trials(), 1, study.n());
    // Per trial, then summed in trial order: the same bytes on any number of threads.
    let per_trial: Vec<Vec<f64>> = (0..trials)
        .into_par_iter()
        .map_init(
            || (plan.scratch(), vec![0.0; slots]),
            |(scratch, out), trial| {
                plan.run(study.seed(), trial, scratch, out);
                out.iter()
                    .zip(&costs)
                    .map(|(&t, &cost)| c.finish(t, cost) - c.start(t))
                    .collect()
            },
        )
        .collect();
    let mut sums = vec![0.0; costs.len()];
    for values in &per_trial {
        sums.iter_mut().zip(values).for_each(|(s, v)| *s += v);
    }
    sums.into_iter().map(|s| Some(s / trials as f64)).collect()
}
