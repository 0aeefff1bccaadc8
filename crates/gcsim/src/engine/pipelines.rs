//! What a hybrid-parallel job's rows report beside the iteration time: the
//! pipelines' idle share and each stage's busy time.

use rayon::prelude::*;

use super::Outcome;
use super::trial::{PipelineTotals, SumTotals, TrialPlan};
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
    /// The mean over trials, stages and buckets of the share of the
    /// replicas whose gradients are in the sum: where a deadline decides
    /// it, the data share of the update.
    pub summed_share: f64,
}

/// The pipelines' totals of the first trials, per program (see
/// [`TrialPlan::pipeline_programs`]) and per slot, summed in trial order.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineSums {
    /// Per program, the sum over trials of its totals.
    totals: Vec<PipelineTotals>,
    /// Per slot, the sum over trials of its gradient sums' totals.
    sums: Vec<SumTotals>,
    /// The trials summed.
    trials: u64,
}

impl PipelineSums {
    /// No trial yet, for `programs` programs and `slots` slots.
    pub fn new(programs: usize, slots: usize) -> Self {
        Self {
            totals: vec![PipelineTotals::default(); programs],
            sums: vec![SumTotals::default(); slots],
            trials: 0,
        }
    }

    /// Adds the next trial's totals and sums (as
    /// [`TrialPlan::run_pipelines`] leaves them, from zero).
    pub fn add(&mut self, totals: &[PipelineTotals], sums: &[SumTotals]) {
        self.sums.iter_mut().zip(sums).for_each(|(s, v)| {
            s.span += v.span;
            s.share += v.share;
        });
        for (s, t) in self.totals.iter_mut().zip(totals) {
            s.bubble += t.bubble;
            s.busy.resize(t.busy.len(), 0.0);
            s.busy.iter_mut().zip(&t.busy).for_each(|(a, b)| *a += b);
        }
        self.trials += 1;
    }
}

/// The number of trials the pipelines' shares of a run of `trials` trials
/// are averaged over: its first min(trials, [`PIPELINE_TRIALS`]).
pub fn pipeline_trials(trials: u64) -> u64 {
    trials.min(PIPELINE_TRIALS)
}

/// [`pipeline_shares`] from the sums `outcome` collected while it
/// simulated its first trials, where it did; else simulated here.
pub fn pipeline_shares_of(study: &Study, outcome: &Outcome) -> Vec<Option<PipelineShares>> {
    match &outcome.pipelines {
        Some(sums) if sums.trials == pipeline_trials(study.trials()) => {
            let plan = TrialPlan::new(study);
            match plan.pipeline_programs() {
                Some((_, slot_programs)) => shares(study, slot_programs, sums),
                None => vec![None; study.schemes().len()],
            }
        }
        _ => pipeline_shares(study),
    }
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
    let trials = pipeline_trials(study.trials());
    let slots = plan.slots();
    // Per trial, then summed in trial order: the same bytes on any number of threads.
    let per_trial: Vec<(Vec<PipelineTotals>, Vec<SumTotals>)> = (0..trials)
        .into_par_iter()
        .map_init(
            || (plan.scratch(), vec![0.0; slots]),
            |(scratch, out), trial| {
                let mut totals = vec![PipelineTotals::default(); programs];
                let mut sums = vec![SumTotals::default(); slots];
                plan.run_pipelines(study.seed(), trial, scratch, out, &mut totals, &mut sums);
                (totals, sums)
            },
        )
        .collect();
    let mut sums = PipelineSums::new(programs, slots);
    for (totals, trial_sums) in &per_trial {
        sums.add(totals, trial_sums);
    }
    shares(study, slot_programs, &sums)
}

/// Per scheme, its pipelines' shares from `sums`, with `slot_programs`
/// each slot's program.
fn shares(study: &Study, slot_programs: Vec<usize>, sums: &PipelineSums) -> Vec<Option<PipelineShares>> {
    let trials = sums.trials;
    let replicas = study.scheme_n() as f64;
    let count = trials as f64 * replicas;
    slot_programs
        .into_iter()
        .zip(&sums.sums)
        .take(study.schemes().len())
        .map(|(k, sum)| {
            Some(PipelineShares {
                bubble_fraction: sums.totals[k].bubble / count,
                stage_busy: sums.totals[k].busy.iter().map(|b| b / count).collect(),
                collective_time: sum.span / trials as f64,
                summed_share: sum.share / trials as f64,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
