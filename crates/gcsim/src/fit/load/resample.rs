//! Permutation p-values and bootstrap standard errors over whole steps.
//!
//! Under a monotone load model the base times of one step, `x = T` (fixed),
//! `T/ℓ` (scaled) or `T − c·ℓ` (affine), have one joint law whatever the
//! step's load, so the steps are exchangeable between loads: reassigning
//! whole steps to loads at random (each load keeping its number of steps)
//! and recomputing A²_akN gives its null distribution, however the workers
//! of a step are correlated. The p-value is `(1 + #{A²* ≥ A²}) / (B + 1)`,
//! which is never 0 and is valid for any B: P(p ≤ α) ≤ α under the
//! hypothesis (Phipson & Smyth 2010).
//! Affine's c is fitted to each permuted data set as to the data, from the
//! residuals `T − ĉ·ℓ` (Freedman & Lane 1983), so the p-value allows for
//! the fit.
//!
//! The standard error of affine's ĉ is the spread of ĉ over bootstrap
//! resamples of whole steps within each load (a stratified cluster
//! bootstrap; Davison & Hinkley 1997, §3.8; Field & Welsh 2007).
//!
//! Each replicate draws from its own stream of the seed (`crate::rng`), so
//! the results do not depend on the number of threads.

use rand::RngExt;
use rand::seq::SliceRandom;
use rayon::prelude::*;

use super::ksample::{Merge, shift_fit};

/// Step permutations per p-value.
pub const PERMUTATIONS: u64 = 499;
/// Bootstrap resamples for the standard error of affine's unit time.
pub const RESAMPLES: u64 = 200;

/// Separates the bootstrap's streams from the permutations'.
const BOOTSTRAP_STREAM: u64 = 0xB007_5742_0000_0001;

/// Steps (clusters of base times) by load, and the loads.
#[derive(Debug, Clone)]
pub struct Steps {
    /// `steps[j]` holds the steps of load j, each a list of times.
    pub steps: Vec<Vec<Vec<f64>>>,
    /// The loads, ascending.
    pub loads: Vec<f64>,
}

impl Steps {
    /// The same steps with every time mapped by `f(load, time)`.
    pub fn map(&self, f: impl Fn(f64, f64) -> f64) -> Steps {
        Steps {
            steps: self
                .steps
                .iter()
                .zip(&self.loads)
                .map(|(steps, &l)| steps.iter().map(|s| s.iter().map(|&t| f(l, t)).collect()).collect())
                .collect(),
            loads: self.loads.clone(),
        }
    }

    /// Every time, load by load.
    pub fn pooled(&self) -> Vec<f64> {
        self.steps.iter().flatten().flatten().copied().collect()
    }

    /// The times of each load, sorted.
    pub fn sorted(&self) -> Vec<Vec<f64>> {
        self.steps
            .iter()
            .map(|s| sorted(s.iter().flatten().copied().collect()))
            .collect()
    }

    /// The permutation p-value of `statistic`, the value of `recompute` on
    /// the data, `recompute` being applied to each permuted data set (sorted
    /// samples by load).
    pub(crate) fn permutation_p<F>(&self, statistic: f64, seed: u64, recompute: F) -> f64
    where
        F: Fn(&[Vec<f64>], &mut Merge) -> f64 + Sync,
    {
        let all: Vec<&Vec<f64>> = self.steps.iter().flatten().collect();
        let counts: Vec<usize> = self.steps.iter().map(Vec::len).collect();
        let exceed = (0..PERMUTATIONS)
            .into_par_iter()
            .map_init(Merge::default, |merge, b| {
                let mut rng = crate::rng::trial_rng(seed, b);
                let mut order: Vec<usize> = (0..all.len()).collect();
                order.shuffle(&mut rng);
                let mut next = order.into_iter();
                let samples: Vec<Vec<f64>> = counts
                    .iter()
                    .map(|&c| sorted(next.by_ref().take(c).flat_map(|i| all[i].iter().copied()).collect()))
                    .collect();
                // Ties with the data's own value count as exceeding.
                recompute(&samples, merge) >= statistic * (1.0 - 1e-12)
            })
            .filter(|&e| e)
            .count();
        (1 + exceed) as f64 / (PERMUTATIONS + 1) as f64
    }

    /// The bootstrap standard error of `estimate` (a function of the sorted
    /// samples by load) over resamples of whole steps within each load.
    pub(crate) fn bootstrap_se<F>(&self, seed: u64, estimate: F) -> f64
    where
        F: Fn(&[Vec<f64>], &mut Merge) -> f64 + Sync,
    {
        let values: Vec<f64> = (0..RESAMPLES)
            .into_par_iter()
            .map_init(Merge::default, |merge, b| {
                let mut rng = crate::rng::trial_rng(seed ^ BOOTSTRAP_STREAM, b);
                let samples: Vec<Vec<f64>> = self
                    .steps
                    .iter()
                    .map(|steps| {
                        let picks = (0..steps.len()).map(|_| &steps[rng.random_range(0..steps.len())]);
                        sorted(picks.flatten().copied().collect())
                    })
                    .collect();
                estimate(&samples, merge)
            })
            .collect();
        let r = values.len() as f64;
        let mean = values.iter().sum::<f64>() / r;
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (r - 1.0)).sqrt()
    }
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// The largest c that keeps every base time `T − c·ℓ` of `sorted` positive:
/// just under min over loads of (smallest time)/ℓ.
pub(crate) fn max_unit_time(sorted: &[Vec<f64>], loads: &[f64]) -> f64 {
    let bound = sorted
        .iter()
        .zip(loads)
        .map(|(s, l)| s[0] / l)
        .fold(f64::INFINITY, f64::min);
    bound * (1.0 - 1e-9)
}

/// Affine's fitted unit time for sorted samples: [`shift_fit`] over
/// `[0, max_unit_time]`.
pub(crate) fn affine_fit(sorted: &[Vec<f64>], loads: &[f64], merge: &mut Merge) -> (f64, f64) {
    shift_fit(sorted, loads, 0.0, max_unit_time(sorted, loads), merge)
}
