//! What a hybrid-parallel job's rows report beside the iteration time: the
//! pipelines' idle share and each stage's busy time.

use rayon::prelude::*;

use super::trial::{PipelineTotals, TrialPlan};
use crate::study::Study;

/// Trials over which the pipelines' shares are averaged, at most.
pub const PIPELINE_TRIALS: u64 = 2_000;

/// A scheme's pipelines, averaged over replicas and trials.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineShares {
    /// The mean over replicas of 1 − Σᵢ busyᵢ / (P · the replica's
    /// makespan): the share of the stages' time they wait.
    pub bubble_fraction: f64,
    /// Per stage, the mean time it computes per iteration.
    pub stage_busy: Vec<f64>,
    /// The mean time from the start of the last-ending stage's first
    /// gradient sum to its end (the sum's cost, with one bucket).
    pub collective_time: f64,
}

/// Per scheme of `study`, under a layout, its pipelines' shares over the
/// first min(trials, [`PIPELINE_TRIALS`]) trials of the study's streams
/// (one iteration each: every iteration has the law of one); `None` for a
/// flat cluster.
pub fn pipeline_shares(study: &Study) -> Vec<Option<PipelineShares>> {
    let schemes = study.schemes().len();
    let plan = TrialPlan::new(study);
    let Some((programs, slot_programs)) = plan.pipeline_programs() else {
        return vec![None; schemes];
    };
    let trials = study.trials().min(PIPELINE_TRIALS);
    let slots = plan.slots();
    // Per trial, then summed in trial order: the same bytes on any number of threads.
    let per_trial: Vec<(Vec<PipelineTotals>, Vec<f64>)> = (0..trials)
        .into_par_iter()
        .map_init(
            || (plan.scratch(), vec![0.0; slots]),
            |(scratch, out), trial| {
                let mut totals = vec![PipelineTotals::default(); programs];
                let mut spans = vec![0.0; slots];
                plan.run_pipelines(study.seed(), trial, scratch, out, &mut totals, &mut spans);
                (totals, spans)
            },
        )
        .collect();
    let mut sums = vec![PipelineTotals::default(); programs];
    let mut span_sums = vec![0.0; slots];
    for (totals, spans) in &per_trial {
        span_sums.iter_mut().zip(spans).for_each(|(s, v)| *s += v);
        for (s, t) in sums.iter_mut().zip(totals) {
            s.bubble += t.bubble;
            s.busy.resize(t.busy.len(), 0.0);
            s.busy.iter_mut().zip(&t.busy).for_each(|(a, b)| *a += b);
        }
    }
    let replicas = study.scheme_n() as f64;
    let count = trials as f64 * replicas;
    slot_programs
        .into_iter()
        .zip(span_sums)
        .take(schemes)
        .map(|(k, span)| {
            Some(PipelineShares {
                bubble_fraction: sums[k].bubble / count,
                stage_busy: sums[k].busy.iter().map(|b| b / count).collect(),
                collective_time: span / trials as f64,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
