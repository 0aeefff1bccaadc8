//! The two-state model of stragglers, fitted to a trace by Baum–Welch.
//!
//! **Model.** Each worker's state in step t, normal (N) or slow (S), is a
//! stationary two-state Markov chain across steps with `P(N→S) = a` and
//! `P(S→N) = b`, independent between workers. Its stationary slow
//! probability is `p_slow = a/(a+b)` and the lag-1 autocorrelation of the
//! state indicator is `ρ = 1 − a − b`, so `P(S→S) = p_slow + ρ·(1 − p_slow)`
//! and `P(N→S) = p_slow·(1 − ρ)`. A slow step's time is `slowdown` times a
//! draw of the base law.
//!
//! **Fit.** The observations are the log times relative to their step's
//! median over the workers, `r = ln(x_{w,t} / median_{w'} x_{w',t})`, so that
//! a step-wide slowdown, which the model does not have, is not read as every
//! worker turning slow (with fewer than 3 workers a step's median would
//! absorb the straggler itself; the trace's median is used instead). In log
//! time a scale factor is a shift, so state N emits Normal(μ, σ²) and state S
//! Normal(μ + δ, σ²) with `δ = ln slowdown`: exact for a log-normal base law,
//! a Gaussian approximation of the log-time's law for the others. The
//! parameters (μ, σ, δ, a, b) maximise the likelihood of the hidden Markov
//! model by the Baum–Welch (EM) algorithm with the scaled forward–backward
//! recursions of Rabiner (1989, *Proc. IEEE* 77(2), §V.A and §VI), from
//! several starts (two-cluster splits of r), keeping the best. Each chain
//! starts in its stationary law, which ties the initial state to a and b,
//! so the M-step has no closed form; it takes p_slow as the expected share
//! of slow steps and `ρ = P(S→S) − P(N→S)` from the expected transition
//! counts, then `a = p_slow·(1 − ρ)`, `b = (1 − p_slow)·(1 − ρ)`. Both are
//! consistent, and p_slow stays identified when no worker ever changes state
//! (where the transition counts alone would leave it at a/(a+b) = 0/0).
//!
//! **A slow state or none.** The second state counts as a slow state when
//! it is a second cluster, and the Bayesian information criterion prefers
//! it to a single normal: `2·(ln L₂ − ln L₁) > 3·ln N` for its three extra
//! parameters (Schwarz 1978, *Ann. Statist.* 6(2)). A second cluster is a
//! second mode of the fitted mixture `(1 − p)·N(μ, σ²) + p·N(μ + δ, σ²)`
//! of log times: with `D = δ/σ`, it is bimodal exactly when `D > 2` and
//! `|ln((1 − p)/p)| < 2·ln((D − √(D² − 4))/2) + D·√(D² − 4)/2` (Robertson
//! & Fryer 1969, *Skand. Aktuarietidskr.* 52; restated by Schilling,
//! Watkins & Watkins 2002, *Am. Stat.* 56(3)). With equal weights it is
//! Ashman's `D > 2` (Ashman, Bird & Zepf 1994, *Astron. J.* 108); the
//! further the weights are from equal, the larger the D it needs.
//!
//! Why `D ≥ 2` alone is not enough: `slow_state.rs`.
//!
//! **Standard errors** of p_slow, slowdown and ρ: the standard deviation of
//! the estimates over [`RESAMPLES`] bootstrap resamples of whole workers
//! (Efron & Tibshirani 1993, ch. 6), each refitted from the full fit by
//! Baum–Welch accelerated by SQUAREM (`squarem.rs`), which reaches the
//! resample's maximum in a fraction of the E-steps and closer to it. The
//! workers' chains are independent in the model, so resampling workers keeps
//! each one's dependence across steps; resample b draws from the stream
//! `rng::trial_rng(seed, b)`, so the errors are reproducible.
//!
//! **Series.** A worker may contribute several series, blocks of
//! consecutive steps of its own (the subsample of a large trace,
//! `subsample.rs`); each block starts in the chain's stationary law, which
//! a block cut from a stationary chain does, and a resample takes a drawn
//! worker's blocks together.

mod forward;
mod slow_state;
mod squarem;

use rand::RngExt;
use rayon::prelude::*;

use self::forward::Counts;
use super::Trace;
use super::stats::{median, median_in};
use crate::progress::Progress;

/// Bootstrap resamples behind each standard error: the error of a standard
/// deviation from B resamples is about 1/√(2B) of it, 5% here.
pub const RESAMPLES: usize = 200;

/// The fewest workers for which standard errors are given: resampling fewer
/// says little about the variability between workers.
pub const MIN_RESAMPLED_WORKERS: usize = 5;

/// The separation `δ/σ` a slow state must exceed (Ashman's D), with equal
/// weights; unequal ones need more (module docs).
pub(crate) const MIN_SEPARATION: f64 = 2.0;

const MAX_ITERATIONS: usize = 2000;
const TOLERANCE: f64 = 1e-10;
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// The parameters of the two-state model in log time relative to the step median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hmm {
    /// Mean of the normal state's log relative time.
    pub mu: f64,
    /// Common standard deviation of both states' log relative times.
    pub sigma: f64,
    /// `δ = ln slowdown`: the slow state's mean minus the normal state's.
    pub shift: f64,
    /// The stationary slow probability `a/(a+b)`, in (0, 1).
    pub p_slow: f64,
    /// The lag-1 autocorrelation of the state, `ρ = 1 − a − b`, at most 1.
    pub rho: f64,
}

impl Hmm {
    /// `a = P(N→S) = p_slow·(1 − ρ)`.
    pub fn a(&self) -> f64 {
        self.p_slow * (1.0 - self.rho)
    }

    /// `b = P(S→N) = (1 − p_slow)·(1 − ρ)`.
    pub fn b(&self) -> f64 {
        (1.0 - self.p_slow) * (1.0 - self.rho)
    }

    /// The slow state's time factor `e^δ`.
    pub fn slowdown(&self) -> f64 {
        self.shift.exp()
    }

    /// Ashman's separation `D = δ/σ`.
    pub fn separation(&self) -> f64 {
        self.shift / self.sigma
    }

    /// The same model with the states' names swapped.
    fn swapped(self) -> Self {
        Self {
            mu: self.mu + self.shift,
            shift: -self.shift,
            p_slow: 1.0 - self.p_slow,
            ..self
        }
    }

    /// Log-densities of `r` in states N and S.
    #[cfg(test)]
    fn ln_emission(&self, r: f64) -> [f64; 2] {
        self.ln_emission_with(self.ln_normaliser(), r)
    }

    /// `−ln σ − ln √(2π)`, the log-densities' constant.
    fn ln_normaliser(&self) -> f64 {
        -self.sigma.ln() - LN_SQRT_2PI
    }

    /// Log-densities of `r` in states N and S, given [`Self::ln_normaliser`]
    /// (computed once per pass, not once per observation).
    #[inline(always)]
    fn ln_emission_with(&self, c: f64, r: f64) -> [f64; 2] {
        let z0 = (r - self.mu) / self.sigma;
        let z1 = (r - self.mu - self.shift) / self.sigma;
        [c - 0.5 * z0 * z0, c - 0.5 * z1 * z1]
    }

    fn transition(&self) -> [[f64; 2]; 2] {
        let (a, b) = (self.a(), self.b());
        [[1.0 - a, a], [b, 1.0 - b]]
    }
}

/// A fitted model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HmmFit {
    /// The maximum-likelihood parameters found.
    pub model: Hmm,
    /// Their log-likelihood.
    pub log_likelihood: f64,
    /// The log-likelihood of one normal law for every observation.
    pub one_state_log_likelihood: f64,
    /// Observations (workers × steps).
    pub observations: usize,
}

/// Bootstrap standard errors of the model's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StandardErrors {
    /// Of `p_slow`.
    pub p_slow: f64,
    /// Of `slowdown`.
    pub slowdown: f64,
    /// Of ρ.
    pub rho: f64,
}

/// Each worker's log times relative to the step median (the trace's median
/// with fewer than 3 workers), worker by worker, from `series`, the
/// trace's times worker by worker. The steps' medians and the workers'
/// series are spread over rayon's threads; each value is computed alone.
pub(crate) fn log_relative_times(trace: &Trace, series: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let reference: Vec<f64> = if trace.workers() >= 3 {
        (0..trace.steps())
            .into_par_iter()
            .map_init(Vec::new, |copy, t| median_in(trace.step(t), copy).ln())
            .collect()
    } else {
        vec![median(trace.all()).ln(); trace.steps()]
    };
    series
        .par_iter()
        .map(|x| {
            let mut r = x.clone();
            crate::rng::ln::ln_in_place(&mut r);
            for (r, reference) in r.iter_mut().zip(&reference) {
                *r -= reference;
            }
            r
        })
        .collect()
}

/// The expected counts over a sample of the series, `draws` indexing
/// `series` with repeats: each distinct series is walked once per E-step
/// (`forward.rs`, in parallel), and its counts are added once per draw, in
/// draw order, so the sum has the same bits as walking every draw in turn,
/// on any number of threads.
struct Sample<'a> {
    /// The distinct series drawn, by ascending index.
    distinct: Vec<&'a [f64]>,
    /// Each draw's place in `distinct`.
    draws: Vec<usize>,
    observations: usize,
}

impl<'a> Sample<'a> {
    fn new(series: &[&'a [f64]], draws: &[usize]) -> Self {
        let mut indices = draws.to_vec();
        indices.sort_unstable();
        indices.dedup();
        Self {
            distinct: indices.iter().map(|&i| series[i]).collect(),
            draws: (draws.iter())
                .map(|i| {
                    indices
                        .binary_search(i)
                        .expect("a drawn index is among the distinct ones")
                })
                .collect(),
            observations: draws.iter().map(|&i| series[i].len()).sum(),
        }
    }

    /// Every series once, in order.
    fn whole(series: &[&'a [f64]]) -> Self {
        Self::new(series, &(0..series.len()).collect::<Vec<_>>())
    }

    fn e_step(&self, model: &Hmm) -> Counts {
        let counts = forward::counts(model, &self.distinct);
        let mut total = Counts::default();
        for &d in &self.draws {
            total.add(&counts[d]);
        }
        total
    }
}

/// The M-step; `None` when a state has lost all its weight.
fn m_step(c: &Counts, observations: usize) -> Option<Hmm> {
    if c.weight[0] < 1e-9 || c.weight[1] < 1e-9 {
        return None;
    }
    let m0 = c.sum[0] / c.weight[0];
    let m1 = c.sum[1] / c.weight[1];
    let ss = (c.sum_sq[0] - c.sum[0] * m0) + (c.sum_sq[1] - c.sum[1] * m1);
    let sigma = (ss.max(0.0) / observations as f64).sqrt();
    if sigma.is_nan() || sigma <= 0.0 {
        return None;
    }
    // p_slow from the expected share of slow steps, ρ from the expected
    // transitions, then a and b from them (module docs).
    let p = c.weight[1] / (c.weight[0] + c.weight[1]);
    let rho = if c.from[0] > 1e-12 && c.from[1] > 1e-12 {
        (1.0 - c.s_to_n / c.from[1]) - c.n_to_s / c.from[0]
    } else {
        0.0
    };
    Some(Hmm {
        mu: m0,
        sigma,
        shift: m1 - m0,
        p_slow: p,
        rho: feasible_rho(p, rho),
    })
}

/// `rho` within the values that keep `a` and `b` in [0, 1]:
/// `1 − min(1/p, 1/(1 − p)) ≤ ρ ≤ 1`.
fn feasible_rho(p: f64, rho: f64) -> f64 {
    rho.clamp(1.0 - 1.0 / p.max(1.0 - p), 1.0)
}

/// Baum–Welch from `start` until the log-likelihood gains less than a
/// relative 1e-10; `None` when a state empties.
fn baum_welch(start: Hmm, sample: &Sample) -> Option<(Hmm, f64)> {
    let observations = sample.observations;
    let mut model = start;
    let mut previous = f64::NEG_INFINITY;
    for _ in 0..MAX_ITERATIONS {
        let counts = sample.e_step(&model);
        let ll = counts.log_likelihood;
        if !ll.is_finite() {
            return None;
        }
        let converged = (ll - previous).abs() <= TOLERANCE * (1.0 + ll.abs());
        previous = ll;
        if converged {
            break;
        }
        model = m_step(&counts, observations)?;
    }
    let model = if model.shift < 0.0 { model.swapped() } else { model };
    Some((model, previous))
}

/// A start: the observations above `threshold` slow, each state's mean and
/// the pooled deviation from them, persistence 1/2.
fn start_from_split(sorted: &[f64], threshold: f64) -> Option<Hmm> {
    let cut = sorted.partition_point(|&x| x <= threshold);
    let (low, high) = sorted.split_at(cut);
    if low.is_empty() || high.is_empty() {
        return None;
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let (m0, m1) = (mean(low), mean(high));
    let ss: f64 =
        low.iter().map(|x| (x - m0).powi(2)).sum::<f64>() + high.iter().map(|x| (x - m1).powi(2)).sum::<f64>();
    let sigma = (ss / sorted.len() as f64).sqrt();
    if sigma.is_nan() || sigma <= 0.0 {
        return None;
    }
    Some(Hmm {
        mu: m0,
        sigma,
        shift: m1 - m0,
        p_slow: high.len() as f64 / sorted.len() as f64,
        rho: 0.5,
    })
}

/// The two-means split of sorted data: the threshold that minimises the
/// within-cluster sum of squares (Otsu's criterion).
fn two_means_threshold(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    let total: f64 = sorted.iter().sum();
    let (mut best, mut best_gain, mut left) = (sorted[n / 2], f64::NEG_INFINITY, 0.0);
    for i in 1..n {
        left += sorted[i - 1];
        if sorted[i] == sorted[i - 1] {
            continue;
        }
        let (nl, nr) = (i as f64, (n - i) as f64);
        // Between-cluster sum of squares; maximal where the within-cluster one is minimal.
        let gain = left * left / nl + (total - left).powi(2) / nr;
        if gain > best_gain {
            best_gain = gain;
            best = sorted[i - 1];
        }
    }
    best
}

/// Why the model cannot be fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFit {
    /// Fewer steps than transitions can be counted from.
    TooFewSteps,
    /// Every log relative time is the same.
    Constant,
}

/// Fits the model to the series (worker by worker, or each worker's blocks
/// in turn), keeping the best of starts at the two-means split and at 1.5
/// and 3 robust deviations above the median (ties to the later start);
/// `progress` advances by one per start. Cost: O(iterations ×
/// observations) per start, the starts fitted at once on rayon's threads.
pub fn fit(series: &[&[f64]], progress: &dyn Progress) -> Result<HmmFit, NoFit> {
    let steps = series.first().map_or(0, |r| r.len());
    if steps < super::stats::MIN_STEPS {
        return Err(NoFit::TooFewSteps);
    }
    let mut sorted: Vec<f64> = series.iter().flat_map(|r| r.iter()).copied().collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if sorted[0] == sorted[n - 1] {
        return Err(NoFit::Constant);
    }
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let var = sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    let one_state_log_likelihood = -0.5 * n as f64 * ((2.0 * std::f64::consts::PI * var).ln() + 1.0);
    let med = median(&sorted);
    let deviations: Vec<f64> = sorted.iter().map(|x| (x - med).abs()).collect();
    let robust = 1.4826 * median(&deviations);
    let spread = if robust > 0.0 { robust } else { var.sqrt() };
    let thresholds = [two_means_threshold(&sorted), med + 1.5 * spread, med + 3.0 * spread];
    let sample = Sample::whole(series);
    let fits: Vec<(Hmm, f64)> = thresholds
        .par_iter()
        .filter_map(|&t| {
            let fitted = start_from_split(&sorted, t).and_then(|start| baum_welch(start, &sample));
            progress.advance(1);
            fitted
        })
        .collect();
    let best = fits.into_iter().max_by(|x, y| x.1.total_cmp(&y.1));
    let Some((model, log_likelihood)) = best else {
        return Err(NoFit::Constant);
    };
    Ok(HmmFit {
        model,
        log_likelihood,
        one_state_log_likelihood,
        observations: n,
    })
}

/// The posterior probability that each worker is slow in each step, worker
/// by worker.
pub(crate) fn posterior_slow(model: &Hmm, series: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let series: Vec<&[f64]> = series.iter().map(|r| r.as_slice()).collect();
    forward::posteriors(model, &series)
}

/// Bootstrap standard errors over workers (module docs): [`RESAMPLES`]
/// resamples of the workers with replacement, each refitted from `fitted`
/// by SQUAREM-accelerated Baum–Welch; `None` when fewer than two refits succeed. `series` holds
/// each worker's `blocks` series in turn, and a drawn worker brings all of
/// them. `progress` advances by one per resample. Cost: RESAMPLES fits,
/// spread over rayon's threads; the result does not depend on their number.
pub fn bootstrap(
    fitted: &Hmm,
    series: &[&[f64]],
    blocks: usize,
    seed: u64,
    progress: &dyn Progress,
) -> Option<StandardErrors> {
    let n = series.len() / blocks;
    let estimates: Vec<[f64; 3]> = (0..RESAMPLES as u64)
        .into_par_iter()
        .filter_map(|b| {
            let mut rng = crate::rng::trial_rng(seed, b);
            let mut draws = Vec::with_capacity(series.len());
            for _ in 0..n {
                let w = rng.random_range(0..n);
                draws.extend(w * blocks..(w + 1) * blocks);
            }
            let refit = squarem::squarem(*fitted, &Sample::new(series, &draws));
            progress.advance(1);
            let m = refit?;
            let m = if m.shift < 0.0 { m.swapped() } else { m };
            Some([m.p_slow, m.slowdown(), m.rho])
        })
        .collect();
    if estimates.len() < 2 {
        return None;
    }
    // Resamples that differ only by rounding (a state no worker ever
    // leaves gives ρ = 1 in every one) have no spread: 0, not 1e-16.
    let sd = |i: usize| {
        let k = estimates.len() as f64;
        let mean = estimates.iter().map(|e| e[i]).sum::<f64>() / k;
        let sd = (estimates.iter().map(|e| (e[i] - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
        if sd <= 1e-12 * mean.abs().max(1.0) { 0.0 } else { sd }
    };
    Some(StandardErrors {
        p_slow: sd(0),
        slowdown: sd(1),
        rho: sd(2),
    })
}

#[cfg(test)]
mod tests {
    use super::forward::forward_backward;
    use super::*;

    /// The forward–backward likelihood against a sum over all 2^T state paths.
    #[test]
    fn likelihood_equals_the_sum_over_paths() {
        let model = Hmm {
            mu: 0.1,
            sigma: 0.3,
            shift: 0.8,
            p_slow: 0.25,
            rho: 0.2,
        };
        let r = [0.05, 0.9, 1.1, -0.2, 0.4];
        let tr = model.transition();
        let p = model.p_slow;
        let mut total = 0.0;
        let mut slow_at_1 = 0.0;
        for path in 0..1u32 << r.len() {
            let s = |t: usize| ((path >> t) & 1) as usize;
            let mut prob = if s(0) == 1 { p } else { 1.0 - p };
            for t in 0..r.len() {
                if t > 0 {
                    prob *= tr[s(t - 1)][s(t)];
                }
                prob *= model.ln_emission(r[t])[s(t)].exp();
            }
            total += prob;
            if s(1) == 1 {
                slow_at_1 += prob;
            }
        }
        let (posterior, counts) = forward_backward(&model, &r);
        assert!(
            (counts.log_likelihood - total.ln()).abs() < 1e-12,
            "{}",
            counts.log_likelihood
        );
        assert!((posterior[1] - slow_at_1 / total).abs() < 1e-12);
        // Expected departures and transitions balance: from N = N→N + N→S.
        assert!(counts.n_to_s <= counts.from[0] && counts.s_to_n <= counts.from[1]);
    }

    #[test]
    fn stationary_law_and_persistence() {
        let m = Hmm {
            mu: 0.0,
            sigma: 1.0,
            shift: 2.0f64.ln(),
            p_slow: 0.05,
            rho: 0.8,
        };
        // a/(a+b) = p, 1 − a − b = ρ; P(S→S) = p + ρ(1 − p), P(N→S) = p(1 − ρ).
        assert!((m.a() / (m.a() + m.b()) - 0.05).abs() < 1e-15);
        assert!((1.0 - m.a() - m.b() - 0.8).abs() < 1e-15);
        assert!((1.0 - m.b() - (0.05 + 0.8 * 0.95)).abs() < 1e-15);
        assert!((m.a() - 0.01).abs() < 1e-15);
        assert!((m.slowdown() - 2.0).abs() < 1e-15);
        let s = m.swapped();
        assert!((s.a() - m.b()).abs() < 1e-15 && (s.b() - m.a()).abs() < 1e-15);
        assert!((s.shift + m.shift).abs() < 1e-15 && (s.mu - m.shift).abs() < 1e-15);
    }

    #[test]
    fn two_means_splits_at_the_gap() {
        assert_eq!(two_means_threshold(&[0.0, 0.1, 0.2, 5.0, 5.1]), 0.2);
        assert_eq!(two_means_threshold(&[1.0, 1.0, 1.0, 3.0]), 1.0);
    }

    #[test]
    fn constant_and_short_series_have_no_fit() {
        let silent = &crate::progress::Silent;
        assert_eq!(fit(&[&[0.0; 5], &[0.0; 5]], silent), Err(NoFit::Constant));
        assert_eq!(fit(&[&[0.0, 1.0], &[0.5, 0.2]], silent), Err(NoFit::TooFewSteps));
    }
}
