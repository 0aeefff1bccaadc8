//! What a collective's rows report beside the iteration time: the mean
//! time from the first bucket's collective to the end of the iteration,
//! and, under a deadline, the mean traffic of its varying participants.

use rayon::prelude::*;

use super::approx::error_trials;
use super::pipelines::PipelineShares;
use super::trial::TrialPlan;
use crate::collective::BucketCost;
use crate::study::Study;

/// What a collective's row reports beside its times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CollectiveColumns {
    /// The mean time from the start of its first bucket's collective to
    /// the end of the iteration.
    pub time: f64,
    /// The mean gradients (in units of `--gradient-size`) all ranks send
    /// in one iteration (see [`crate::collective::Collective::gradients_sent`]).
    pub gradients: f64,
}

/// Per scheme of `study`, under a collective, its [`CollectiveColumns`];
/// `None` under the master.
///
/// With one bucket and a fixed participant set the time is the bucket's
/// cost, a constant. With K buckets the first starts at t/K, t being the
/// time the rule is met, and the iteration ends at `Collective::finish(t,
/// c)`; under a deadline c is that of the trial's participants. Where
/// either holds, the means are counted over the first [`error_trials`]
/// trials of the study's streams, one iteration each (every iteration has
/// the law of one), with the draws of the study's own trials. Under a
/// layout the sums are timed on its pipelines (`pipelines`, see
/// [`crate::engine::pipelines`]), and a deadline's participants counted
/// there.
pub fn collective_times(study: &Study, pipelines: &[Option<PipelineShares>]) -> Vec<Option<CollectiveColumns>> {
    let Some((c, costs)) = study.collective_costs() else {
        return vec![None; study.schemes().len()];
    };
    let layout = study.parallel().is_some();
    let fixed: Vec<Option<CollectiveColumns>> = study
        .schemes()
        .iter()
        .zip(&costs)
        .zip(pipelines.iter().chain(std::iter::repeat(&None)))
        .map(|((s, cost), shares)| match (cost, shares) {
            (BucketCost::Fixed(time), _) if c.buckets == 1 || layout => Some(CollectiveColumns {
                time: *time,
                gradients: study.collective_gradients(s).expect("a fixed participant set"),
            }),
            // The mean of 2(p − 1)·message is 2(E[p] − 1)·message.
            (BucketCost::Counted { .. }, Some(shares)) => Some(CollectiveColumns {
                time: shares.collective_time,
                gradients: 2.0 * (s.n() as f64 * shares.summed_share - 1.0) * s.message(),
            }),
            _ => None,
        })
        .collect();
    if fixed.iter().all(Option::is_some) {
        return fixed;
    }
    let one = study.clone().with_iterations(1).expect("one iteration is valid");
    let plan = TrialPlan::new(&one).without_step_rows();
    let (slots, n) = (plan.slots(), study.n());
    let messages: Vec<f64> = study.schemes().iter().map(|s| s.message()).collect();
    let trials = error_trials(study.trials(), 1, n);
    // Per trial, then summed in trial order: the same bytes on any number of threads.
    let per_trial: Vec<Vec<(f64, f64)>> = (0..trials)
        .into_par_iter()
        .map_init(
            || (plan.scratch(), vec![0.0; slots]),
            |(scratch, out), trial| {
                let (ruled, participants) = plan.run_collective(study.seed(), trial, scratch, out);
                (0..messages.len())
                    .map(|slot| {
                        let p = match costs[slot] {
                            BucketCost::Fixed(_) => study.participants(&study.schemes()[slot]).expect("fixed"),
                            BucketCost::Counted { .. } => participants[slot],
                        };
                        (out[slot] - c.start(ruled[slot]), c.gradients_sent(p, messages[slot]))
                    })
                    .collect()
            },
        )
        .collect();
    let mut sums = vec![(0.0, 0.0); messages.len()];
    for values in &per_trial {
        sums.iter_mut().zip(values).for_each(|(s, v)| {
            s.0 += v.0;
            s.1 += v.1;
        });
    }
    let per = trials as f64;
    sums.into_iter()
        .zip(fixed)
        .map(|((time, gradients), fixed)| {
            Some(fixed.unwrap_or(CollectiveColumns {
                time: time / per,
                gradients: gradients / per,
            }))
        })
        .collect()
}

/// Per scheme of `study`, under a collective, the gradients all ranks send
/// per iteration: known where its participants are fixed, counted where a
/// deadline's vary (see [`collective_times`]); `None` under the master.
pub fn traffic(study: &Study) -> Vec<Option<f64>> {
    if study.schemes().iter().any(|s| s.deadline().is_some()) {
        let pipelines = match study.parallel() {
            Some(_) => super::pipelines::pipeline_shares(study),
            None => vec![None; study.schemes().len()],
        };
        collective_times(study, &pipelines)
            .iter()
            .map(|c| c.map(|c| c.gradients))
            .collect()
    } else {
        study.schemes().iter().map(|s| study.collective_gradients(s)).collect()
    }
}
