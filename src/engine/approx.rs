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

/// Trials over which a simulated error is averaged: the first
/// min(trials, this) of the study's trial streams. One least-squares solve
/// per trial (an SVD of B_F, about 0.3 ms at n = 100); the per-trial errors
/// vary little, so the mean is known far more closely than its
/// iteration-time companions.
pub const ERROR_TRIALS: u64 = 20_000;

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

/// The mean over the first [`ERROR_TRIALS`] trials of slot `slot`'s error.
fn simulated(study: &Study, plan: &TrialPlan, slot: usize, scheme: &Scheme) -> f64 {
    let code = study.code(scheme).expect("the study checked that its codes build");
    let trials = study.trials().min(ERROR_TRIALS);
    let k = scheme.k();
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
