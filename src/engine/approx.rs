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

use rayon::prelude::*;

use super::trial::{RulePath, Sampling, TrialPlan};
use crate::scheme::{Scheme, SchemeKind};
use crate::study::Study;

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

/// The mean approximation error of each of `study`'s schemes, in order (see
/// the module notes).
pub fn mean_errors(study: &Study) -> Vec<f64> {
    let mut plan = None;
    study
        .schemes()
        .iter()
        .enumerate()
        .map(|(slot, s)| {
            exact_error(s).unwrap_or_else(|| {
                let plan = plan.get_or_insert_with(|| TrialPlan::with(study, RulePath::Events, Sampling::Draws));
                simulated(study, plan, slot, s)
            })
        })
        .collect()
}

/// The error where it is the same in every trial: 0 for the exact schemes,
/// s/n for `ignore`; `None` where it is simulated.
pub fn exact_error(s: &Scheme) -> Option<f64> {
    match s.kind() {
        _ if s.exact_gradient() => Some(0.0),
        SchemeKind::Ignore => Some(s.s() as f64 / s.n() as f64),
        _ => None,
    }
}

/// The mean over the first [`error_trials`] trials of slot `slot`'s error.
fn simulated(study: &Study, plan: &TrialPlan, slot: usize, scheme: &Scheme) -> f64 {
    let code = study.code(scheme).expect("the study checked that its codes build");
    let k = scheme.k();
    let trials = error_trials(study.trials(), k, scheme.partitions());
    let errors: Vec<f64> = (0..trials)
        .into_par_iter()
        .map_init(
            || (plan.scratch(), Vec::new()),
            |(scratch, order), t| {
                let arrival = plan.arrivals(slot, study.seed(), t, scratch);
                order.clear();
                order.extend(0..arrival.len());
                order.sort_unstable_by(|&a, &b| arrival[a].total_cmp(&arrival[b]).then(a.cmp(&b)));
                let r = code.decode(&order[..k]).residual;
                r * r
            },
        )
        .collect();
    errors.iter().sum::<f64>() / trials as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_trials_follow_the_budget() {
        assert_eq!(error_trials(100_000, 54, 60), ERROR_TRIALS);
        assert_eq!(error_trials(500, 54, 60), 500);
        // 90 × 100: 6e9 / 810 000 = 7407 trials.
        assert_eq!(error_trials(100_000, 90, 100), 7407);
        assert_eq!(error_trials(100_000, 1900, 2000), MIN_ERROR_TRIALS);
        assert_eq!(error_trials(50, 1900, 2000), 50);
    }
}
