//! The approximation error of the schemes that decode an inexact gradient
//! (approximate gradient coding: Charles, Papailiopoulos & Ellenberg 2017;
//! Raviv, Tamo, Tandon & Dimakis 2020).
//!
//! When the master stops at the fastest k = n − s messages F, it decodes
//! with the optimal least-squares weights u* = argmin_u ‖uᵀB_F − 1ᵀ‖ and the
//! error of that trial is ‖u*ᵀB_F − 1ᵀ‖² / P: the squared distance of the
//! decoded combination of the P partial gradients from their sum, per
//! partition (P = n for the built-in codes). It is 0 for an exact decoding;
//! for `ignore` (B = I) it is the fraction of partitions lost, s/n, in every
//! trial; approx-regular and inexact custom codes are averaged over trials,
//! since which n − s workers arrive first varies.
//!
//! Beside the error, the share of the data in the update (`data_fraction`):
//! the mean fraction of the P partitions held by at least one of the
//! messages the master decodes from. 1 for the exact schemes, (n − s)/n for
//! `ignore`; for `timeout` (B = I) the share of the n workers that have
//! arrived when the master proceeds, whose error is then 1 − that share.
//! Exact for `timeout` where the study has an exact law (i.i.d. workers):
//! E\[count\]/n = F(T) + S(T)ⁿ/n with F the law of an arrival; simulated
//! otherwise.

use rayon::prelude::*;

use super::Progress;
use super::trial::{RulePath, Sampling, TrialPlan, async_reads_order_statistics, order_statistics_apply};
use crate::rng::trial_rng;
use crate::scheme::{Scheme, SchemeKind, Strategy};
use crate::study::Study;

mod hypergeometric;

/// Most trials over which a simulated error is averaged: the first
/// min(trials, this) of the study's trial streams, fewer for large codes
/// (see [`error_trials`]). The per-trial errors vary little, so the mean is
/// known far more closely than its iteration-time companions.
pub const ERROR_TRIALS: u64 = 20_000;

/// Fewest trials of a simulated error, however large the code.
pub const MIN_ERROR_TRIALS: u64 = 200;

/// Work one configuration's error may take, in units of k·P·min(k, P) (the
/// cost of one SVD of the k × P matrix B_F, about 1.7 ns per unit: 0.3 ms
/// at k = 54, P = 60), about 10 s on one core.
const ERROR_BUDGET: f64 = 6e9;

/// The trials over which the error of a code with `k` arrived rows and `p`
/// columns is averaged: min(trials, [`ERROR_TRIALS`], the budget's share),
/// at least [`MIN_ERROR_TRIALS`] (or all trials, if fewer).
pub fn error_trials(trials: u64, k: usize, p: usize) -> u64 {
    let unit = k as f64 * p as f64 * k.min(p) as f64;
    let affordable = (ERROR_BUDGET / unit.max(1.0)) as u64;
    trials.min(ERROR_TRIALS.min(affordable.max(MIN_ERROR_TRIALS)))
}

/// What the update of one configuration holds (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inexact {
    /// The mean of ‖u*ᵀB_F − 1ᵀ‖²/P.
    pub error: f64,
    /// The mean share of the partitions whose gradient is in the update.
    pub data_fraction: f64,
}

/// Trials between two reports to a [`Progress`] where a count's trials
/// are cheap.
const REPORT_EVERY: u64 = 64;

/// Tells `progress` of trial `trial`'s end where it closes a run of
/// [`REPORT_EVERY`] trials.
fn report_every(progress: &dyn Progress, trial: u64) {
    if trial % REPORT_EVERY == REPORT_EVERY - 1 {
        progress.advance(REPORT_EVERY);
    }
}

/// The approximation error and data share of each of `study`'s schemes,
/// in order (see the module notes); `progress` hears of a pass over each
/// simulated scheme's trials, decoding by decoding.
pub fn inexact(study: &Study, progress: &dyn Progress) -> Vec<Inexact> {
    let pipelines = match study.parallel() {
        Some(_) => super::pipelines::pipeline_shares(study),
        None => vec![None; study.schemes().len()],
    };
    inexact_with(study, &pipelines, progress)
}

/// [`inexact`] with a layout's pipeline shares at hand: a deadline's share
/// under a layout is theirs (see
/// [`super::pipelines::PipelineShares::summed_share`]).
pub fn inexact_with(
    study: &Study,
    pipelines: &[Option<super::pipelines::PipelineShares>],
    progress: &dyn Progress,
) -> Vec<Inexact> {
    let mut plan = None;
    study
        .schemes()
        .iter()
        .enumerate()
        .map(|(slot, s)| {
            let layout = pipelines.get(slot).and_then(Option::as_ref);
            if let (Some(shares), Some(_)) = (layout, s.deadline()) {
                return Inexact {
                    error: 1.0 - shares.summed_share,
                    data_fraction: shares.summed_share,
                };
            }
            exact(study, s).unwrap_or_else(|| {
                let plan = plan.get_or_insert_with(|| TrialPlan::with(study, RulePath::Events, Sampling::Draws));
                simulated(study, plan, slot, s, progress)
            })
        })
        .collect()
}

/// The error where it is the same in every trial: 0 for the exact schemes,
/// s/n for `ignore`; `None` where it is simulated.
pub(crate) fn exact_error(s: &Scheme) -> Option<f64> {
    match s.kind() {
        _ if s.exact_gradient() => Some(0.0),
        // K-batch-sync's K mini-batches hold K workers' shares of the data,
        // as do the K gradients of an asynchronous update.
        SchemeKind::Ignore | SchemeKind::KBatchSync | SchemeKind::KAsync | SchemeKind::KBatchAsync => {
            Some(s.s() as f64 / s.n() as f64)
        }
        _ => None,
    }
}

/// The error and data share where they are known without simulation.
pub fn exact(study: &Study, s: &Scheme) -> Option<Inexact> {
    if let Some(error) = exact_error(s) {
        // The k of n workers' shares (all n for the exact schemes).
        let data_fraction = if s.exact_gradient() {
            1.0
        } else {
            s.k() as f64 / s.n() as f64
        };
        return Some(Inexact { error, data_fraction });
    }
    let share = study.exact_iteration_law(s)?.deadline_share()?;
    Some(Inexact {
        error: 1.0 - share,
        data_fraction: share,
    })
}

/// The means over the first [`error_trials`] trials of slot `slot`'s error
/// and data share.
fn simulated(study: &Study, plan: &TrialPlan, slot: usize, scheme: &Scheme, progress: &dyn Progress) -> Inexact {
    let n = scheme.n();
    let (trials, sums) = match scheme.deadline() {
        Some(t) => {
            let trials = error_trials(study.trials(), 1, n);
            let lost: Vec<f64> = (0..trials)
                .into_par_iter()
                .map_init(
                    || plan.scratch(),
                    |scratch, trial| {
                        let arrival = plan.arrivals(slot, study.seed(), trial, scratch);
                        let (first, last) = arrival.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &a| {
                            (lo.min(a), hi.max(a))
                        });
                        let end = super::timeline::with_deadline(last, t, first);
                        let arrived = arrival.iter().filter(|&&a| a <= end).count();
                        (n - arrived) as f64 / n as f64
                    },
                )
                .collect();
            let error = lost.iter().sum::<f64>();
            (trials, (error, trials as f64 - error))
        }
        None => {
            let code = study.code(scheme).expect("the study checked that its codes build");
            let (k, p) = (scheme.k(), scheme.partitions());
            let trials = error_trials(study.trials(), k, p);
            progress.pass(1, trials);
            let per_trial: Vec<(f64, f64)> = (0..trials)
                .into_par_iter()
                .map_init(
                    || (plan.scratch(), Vec::new(), vec![false; p]),
                    |(scratch, order, held), t| {
                        let arrival = plan.arrivals(slot, study.seed(), t, scratch);
                        order.clear();
                        order.extend(0..arrival.len());
                        order.sort_unstable_by(|&a, &b| arrival[a].total_cmp(&arrival[b]).then(a.cmp(&b)));
                        let r = code.decode(&order[..k]).residual;
                        held.fill(false);
                        let b = code.encoding();
                        for &w in &order[..k] {
                            for (j, h) in held.iter_mut().enumerate() {
                                *h |= b[(w, j)] != 0.0;
                            }
                        }
                        let share = held.iter().filter(|&&h| h).count() as f64 / p as f64;
                        progress.advance(1);
                        (r * r, share)
                    },
                )
                .collect();
            let sums = per_trial.iter().fold((0.0, 0.0), |(e, f), &(a, b)| (e + a, f + b));
            (trials, sums)
        }
    };
    Inexact {
        error: sums.0 / trials as f64,
        data_fraction: sums.1 / trials as f64,
    }
}

/// Most iterations over which one configuration's inclusion shares (and a
/// strategy's tallies) are counted: the first trials of the study's
/// streams, at least [`MIN_ERROR_TRIALS`] of them (or all, if fewer).
pub(crate) const INCLUSION_ITERATIONS: u64 = 2_000_000;

/// How unevenly an inexact scheme uses the data over a trial of several
/// iterations, per scheme of `study` (`None` for the exact schemes and for
/// a trial of one iteration): the share of a trial's
/// iterations whose update holds a partition's gradient, for the partition
/// held least and the one held most, each averaged over trials.
///
/// A partition is held when a message the master uses carries it: for
/// `ignore` the first n − s workers' own partitions, for `timeout` those of
/// the workers arrived when it proceeds, for approx-regular and inexact
/// custom codes the partitions in the support of the first n − s messages'
/// rows; for k-batch-sync, k-async and k-batch-async the own partitions of
/// the workers whose mini-batches or gradients enter the update (a worker's
/// mini-batches are drawn from its own share). With stragglers that
/// persist, the same workers are dropped in consecutive iterations and the
/// least-held partition falls far below the mean share; without
/// persistence it stays near it.
pub fn inclusion(study: &Study, progress: &dyn Progress) -> Vec<Option<(f64, f64)>> {
    let iterations = study.iterations();
    let marks = |s: &Scheme| {
        matches!(
            s.strategy(),
            None | Some(Strategy::KBatchSync { .. } | Strategy::Async { .. })
        )
    };
    let counted = |s: &Scheme| iterations > 1 && !s.exact_gradient() && marks(s);
    let schemes = study.schemes();
    if !schemes.iter().any(counted) {
        return vec![None; schemes.len()];
    }
    let plan = TrialPlan::with(study, RulePath::Events, Sampling::Draws);
    let trials = iteration_trials(study);
    schemes
        .iter()
        .enumerate()
        .map(|(slot, s)| {
            counted(s).then(|| {
                progress.pass(1, trials);
                inclusion_of(study, &plan, slot, s, trials, progress)
            })
        })
        .collect()
}

/// The trials of a count over whole trials of several iterations:
/// [`INCLUSION_ITERATIONS`] iterations' worth, between [`MIN_ERROR_TRIALS`]
/// and [`ERROR_TRIALS`], and not more than the study's.
fn iteration_trials(study: &Study) -> u64 {
    let per_budget = INCLUSION_ITERATIONS / study.iterations();
    study.trials().min(per_budget.clamp(MIN_ERROR_TRIALS, ERROR_TRIALS))
}

fn inclusion_of(
    study: &Study,
    plan: &TrialPlan,
    slot: usize,
    scheme: &Scheme,
    trials: u64,
    progress: &dyn Progress,
) -> (f64, f64) {
    let n = scheme.n();
    let iterations = study.iterations();
    if scheme.strategy().is_some() {
        return marked_inclusion(study, plan, slot, n, trials, progress);
    }
    // Which partitions each worker's message carries.
    // (`ignore` and `timeout` hold their own, B = I, without building it.)
    let holds: Vec<Vec<usize>> = match scheme.kind() {
        SchemeKind::Ignore | SchemeKind::Timeout => (0..n).map(|w| vec![w]).collect(),
        _ => {
            let code = study.code(scheme).expect("the study checked that its codes build");
            let b = code.encoding();
            (0..n)
                .map(|w| (0..b.ncols()).filter(|&j| b[(w, j)] != 0.0).collect())
                .collect()
        }
    };
    let partitions = holds.iter().flatten().max().map_or(0, |&j| j + 1);
    let per_trial: Vec<(u64, u64)> = (0..trials)
        .into_par_iter()
        .map_init(
            || {
                (
                    plan.scratch(),
                    Vec::new(),
                    vec![0u64; partitions],
                    vec![false; partitions],
                )
            },
            |(scratch, order, counts, held), trial| {
                counts.fill(0);
                for i in 0..iterations {
                    let arrival = plan.arrivals_in(slot, study.seed(), trial, i, scratch);
                    order.clear();
                    match scheme.deadline() {
                        Some(t) => {
                            let (first, last) =
                                arrival.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &a| {
                                    (lo.min(a), hi.max(a))
                                });
                            let end = super::timeline::with_deadline(last, t, first);
                            order.extend((0..n).filter(|&w| arrival[w] <= end));
                        }
                        None => {
                            order.extend(0..n);
                            order.sort_unstable_by(|&a, &b| arrival[a].total_cmp(&arrival[b]).then(a.cmp(&b)));
                            order.truncate(scheme.k());
                        }
                    }
                    held.fill(false);
                    for &w in order.iter() {
                        holds[w].iter().for_each(|&j| held[j] = true);
                    }
                    counts
                        .iter_mut()
                        .zip(held.iter())
                        .for_each(|(c, &h)| *c += u64::from(h));
                }
                report_every(progress, trial);
                counts.iter().fold((u64::MAX, 0), |(lo, hi), &c| (lo.min(c), hi.max(c)))
            },
        )
        .collect();
    share_of(&per_trial, iterations, trials)
}

/// [`inclusion_of`] for a strategy that records the workers in its update.
fn marked_inclusion(
    study: &Study,
    plan: &TrialPlan,
    slot: usize,
    n: usize,
    trials: u64,
    progress: &dyn Progress,
) -> (f64, f64) {
    let iterations = study.iterations();
    let per_trial: Vec<(u64, u64)> = (0..trials)
        .into_par_iter()
        .map_init(
            || (plan.scratch(), vec![0.0; plan.slots()], vec![0u64; n]),
            |(scratch, out, counts), trial| {
                counts.fill(0);
                for i in 0..iterations {
                    let used = plan.run_iteration_marked(study.seed(), trial, i, scratch, out);
                    let used = &used[slot * n..(slot + 1) * n];
                    counts.iter_mut().zip(used).for_each(|(c, &u)| *c += u64::from(u > 0));
                }
                report_every(progress, trial);
                counts.iter().fold((u64::MAX, 0), |(lo, hi), &c| (lo.min(c), hi.max(c)))
            },
        )
        .collect();
    share_of(&per_trial, iterations, trials)
}

/// The mean over trials of the least and most counts, as shares of the
/// iterations.
fn share_of(per_trial: &[(u64, u64)], iterations: u64, trials: u64) -> (f64, f64) {
    let (lo, hi) = per_trial
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x as f64, b + y as f64));
    let per = (iterations * trials) as f64;
    (lo / per, hi / per)
}

/// What a strategy's timeline counts, per scheme of a study (`None` for
/// the schemes whose timeline counts nothing of the kind).
#[derive(Debug, Clone, PartialEq)]
pub struct Tallies {
    /// `speculative`: the copies launched per iteration over n, each a task
    /// of load 1, so the extra computation as a share of the uncoded
    /// iteration's.
    pub extra_work: Vec<Option<f64>>,
    /// The asynchronous strategies: the mean staleness of a gradient, the
    /// updates between the model it was computed on and the update it
    /// enters (over the K gradients of each trial's recorded update).
    pub staleness: Vec<Option<f64>>,
}

/// The trials over which a strategy's tallies are counted: the first
/// [`error_trials`] of the study's streams, within [`iteration_trials`].
fn tally_trials(study: &Study) -> u64 {
    error_trials(study.trials(), 1, study.n()).min(iteration_trials(study))
}

/// Whether some scheme of `study` has tallies counted on its timeline
/// (speculative copies; the staleness of an asynchronous strategy not drawn
/// in law), and the rule path and sampling of the plan [`tallies`] walks
/// them on.
fn walked_tallies(study: &Study) -> Option<(RulePath, Sampling)> {
    let walked = study.schemes().iter().any(|s| match s.strategy() {
        Some(Strategy::Speculative { .. }) => true,
        Some(Strategy::Async { .. }) => !async_reads_order_statistics(study, s),
        _ => false,
    });
    // `TrialPlan::new`'s choice of order statistics.
    let by_order = study.parallel().is_none() && order_statistics_apply(study);
    walked.then_some(match by_order {
        true => (RulePath::Fast, Sampling::OrderStatistics),
        false => (RulePath::Events, Sampling::Draws),
    })
}

/// The first trials whose tallies the main pass of `study` by `plan` can
/// count as it simulates them, for [`tallies`] to take instead of walking
/// them again (0: none). Where `plan` is the one the tallies walk, it
/// counts the same; so does a plan that draws the same worker times on
/// the fast rule path where every strategy is K-batch-async, whose
/// timeline does not read the rule path (and the other slots draw nothing
/// beyond the trial's first draws).
pub(crate) fn tallies_in_pass(study: &Study, plan: &TrialPlan) -> u64 {
    let Some(walked) = walked_tallies(study) else {
        return 0;
    };
    let only_batches =
        (study.schemes().iter()).all(|s| matches!(s.strategy(), None | Some(Strategy::Async { batch: true, .. })));
    let same = (plan.path, plan.sampling()) == walked
        || (plan.sampling() == Sampling::Draws && walked.1 == Sampling::Draws && only_batches);
    if same && !plan.pipelines_in_pass() {
        tally_trials(study)
    } else {
        0
    }
}

/// The tallies of `study`'s strategies, counted over the first
/// `tally_trials` trials of the study's streams: on the event timeline,
/// except the staleness of memoryless K-async, drawn in law (see
/// `staleness_in_law`). `in_pass`, where given, holds the per-slot sums the
/// main pass counted over those trials (`tallies_in_pass`), the same as
/// the walk's, which is then not run.
pub fn tallies(study: &Study, in_pass: Option<&[u64]>, progress: &dyn Progress) -> Tallies {
    let schemes = study.schemes();
    let copied = |s: &Scheme| matches!(s.strategy(), Some(Strategy::Speculative { .. }));
    let stale = |s: &Scheme| matches!(s.strategy(), Some(Strategy::Async { .. }));
    let in_law = |s: &Scheme| async_reads_order_statistics(study, s);
    // Each trial runs the study's iterations; count per iteration.
    let iterations = study.iterations();
    let trials = tally_trials(study);
    let walked = match (walked_tallies(study), in_pass) {
        (Some(_), Some(counted)) => counted.to_vec(),
        (Some((path, sampling)), None) => {
            // Where the study's trials are drawn as order statistics, its
            // copies are taken by rank and counted there (see
            // `speculative_by_ranks`): the same law as the event walk's count,
            // at a fraction of its cost.
            let plan = TrialPlan::with(study, path, sampling);
            let slots = plan.slots();
            progress.pass(1, trials);
            (0..trials)
                .into_par_iter()
                .fold(
                    || (plan.scratch(), vec![0.0; slots]),
                    |(mut scratch, mut out), trial| {
                        plan.run(study.seed(), trial, &mut scratch, &mut out);
                        report_every(progress, trial);
                        (scratch, out)
                    },
                )
                .map(|(scratch, _)| scratch.tally().to_vec())
                .reduce(|| vec![0; slots], |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect())
        }
        (None, _) => vec![0; schemes.len()],
    };
    let per = |total: u64, count: usize| total as f64 / ((trials * iterations) as f64 * count as f64);
    Tallies {
        extra_work: schemes
            .iter()
            .zip(&walked)
            .map(|(s, &t)| copied(s).then(|| per(t, s.n())))
            .collect(),
        staleness: schemes
            .iter()
            .zip(&walked)
            .map(|(s, &t)| {
                let total = if in_law(s) {
                    let warmup = Strategy::warmup_updates(s.n(), s.k()) as u64;
                    (0..trials * iterations)
                        .into_par_iter()
                        .map(|i| {
                            let mut rng = trial_rng(study.seed() ^ STALENESS_STREAM, i);
                            staleness_in_law(s.n() as u64, s.k() as u64, warmup, &mut rng)
                        })
                        .sum()
                } else {
                    t
                };
                stale(s).then(|| per(total, s.k()))
            })
            .collect(),
    }
}

/// Key of the stream of [`staleness_in_law`] (XORed with the seed).
const STALENESS_STREAM: u64 = 0x57A1_E0F0_5EED_0A5C;

/// The staleness summed over the K gradients of the update after
/// `warmup` of K-async whose updates read the order statistics (see
/// [`async_reads_order_statistics`]), drawn in law. There the K workers
/// of each update are the K of n with the least time left, all n of them
/// exponential and independent of the past: a uniformly random K-subset,
/// independent across updates. Going back from the recorded update, the r
/// of its workers not yet placed are in update j's subset in
/// Hypergeometric(n, r, K) number; those computed on model j + 1, stale by
/// `warmup` − j − 1, and the rest, in none of the earlier updates, on
/// model 0 (stale by `warmup`). Its mean per gradient is
/// Σ_{m=1}^{W} (1 − K/n)^m, which `--analytic` reports.
fn staleness_in_law(n: u64, k: u64, warmup: u64, rng: &mut rand_xoshiro::Xoshiro256PlusPlus) -> u64 {
    let (mut left, mut total) = (k, 0);
    for j in (0..warmup).rev() {
        if left == 0 {
            break;
        }
        let placed = hypergeometric::sample(n, left, k, rng);
        total += placed * (warmup - j - 1);
        left -= placed;
    }
    total + left * warmup
}

#[cfg(test)]
mod tests;
