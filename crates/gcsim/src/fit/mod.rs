//! Fitting the worker-time laws of [`Dist`] to measured times, to go from a
//! trace to a `--dist` string.
//!
//! [`fit_all`] fits the exponential, shifted-exponential, Pareto, log-normal
//! and Weibull families by maximum likelihood (formulas and references in
//! `mle.rs`: Johnson, Kotz & Balakrishnan 1994) and ranks the fits by their
//! Kolmogorov–Smirnov distance `D = sup_x |F_n(x) − F(x)|`, the largest gap
//! between the sample's empirical CDF and the fitted CDF.
//!
//! Why rank by D and not by likelihood: the shifted-exponential shift and the
//! Pareto scale are support endpoints, fitted at the sample minimum. Such a
//! parameter is not regular (its estimate converges at rate n, not √n, and
//! the likelihood gain it buys grows with n), so AIC's penalty of 2 per
//! parameter does not put these families on the same footing as the others,
//! and a likelihood ratio between families with different supports has no
//! reference distribution. D compares every fit on one scale, the error in
//! the probabilities the simulator will use. The log-likelihood and
//! AIC = 2·(parameters) − 2·ln L are reported for information.
//!
//! [`load`] fits the load models to a trace measured at several loads.
//!
//! D is used as a distance only: with fitted parameters its usual p-values
//! do not apply (Lilliefors 1967). Pooling a trace's times treats them as
//! i.i.d.; correlation between workers or steps is not part of the fit.

mod export;
pub mod load;
mod mle;
pub mod nccl;
mod parallel;

pub use export::FitReport;
pub use mle::SIGNIFICANT_DIGITS;

use rayon::prelude::*;
use serde::Serialize;
use thiserror::Error;

use crate::dist::{Dist, DistError};

/// A family of laws that [`fit_all`] fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// `exp:rate=R`.
    Exp,
    /// `shifted-exp:shift=S,rate=R`.
    ShiftedExp,
    /// `pareto:scale=X,shape=A`.
    Pareto,
    /// `lognormal:mu=M,sigma=S`.
    #[serde(rename = "lognormal")]
    LogNormal,
    /// `weibull:scale=L,shape=K`.
    Weibull,
}

impl Family {
    /// Every family, in the order ties are broken.
    pub const ALL: [Family; 5] = [
        Family::Exp,
        Family::ShiftedExp,
        Family::Pareto,
        Family::LogNormal,
        Family::Weibull,
    ];

    /// The name used in `--dist`.
    pub fn name(self) -> &'static str {
        match self {
            Family::Exp => "exp",
            Family::ShiftedExp => "shifted-exp",
            Family::Pareto => "pareto",
            Family::LogNormal => "lognormal",
            Family::Weibull => "weibull",
        }
    }

    /// Number of fitted parameters (for AIC).
    pub fn parameters(self) -> usize {
        match self {
            Family::Exp => 1,
            _ => 2,
        }
    }
}

/// Why a sample cannot be fitted.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FitError {
    /// Fewer than two times.
    #[error("a fit needs at least 2 times; got {0}")]
    TooFew(usize),
    /// A time that is not a finite positive number.
    #[error("time number {index} is {value}; accepted: a finite number > 0")]
    NotPositive {
        /// 1-based position in the sample.
        index: usize,
        /// The value.
        value: f64,
    },
    /// Every time is the same: no continuous law fits a constant.
    #[error("every time equals {0}; a fit needs at least 2 distinct times")]
    Constant(f64),
    /// The estimates left the law's range (e.g. overflow on extreme data).
    #[error("the {family} fit failed: {source}")]
    Estimate {
        /// The family's name.
        family: &'static str,
        /// The rejected parameter.
        source: DistError,
    },
}

/// One fitted law: a flat row of the `gcsim fit` output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// Rank by Kolmogorov–Smirnov distance, 1 = best.
    pub rank: usize,
    /// The family.
    pub family: Family,
    /// The fitted parameters as `key=value` pairs, space-separated, in the unit of the times.
    pub parameters: String,
    /// Number of times fitted.
    pub n: usize,
    /// Log-likelihood `Σ ln f(xᵢ)` of the fitted law (times in their own unit).
    pub log_likelihood: f64,
    /// Akaike information criterion `2·p − 2·ln L` (p fitted parameters); for information only.
    pub aic: f64,
    /// Kolmogorov–Smirnov distance `sup |F_n(x) − F(x)|`, in [0, 1].
    pub ks_distance: f64,
    /// The law as a `--dist` string (it parses back to the same law).
    pub dist: String,
    /// The fitted law.
    #[serde(skip)]
    pub law: Dist,
}

/// How a fit's passes over the sample run: in turn on the calling thread,
/// or split into chunks spread over rayon's threads. Both give the same
/// bits (see [`fit_all_parallel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Passes {
    Serial,
    Parallel,
}

/// Checks a sample and returns it sorted.
fn sorted_sample(xs: &[f64], passes: Passes) -> Result<Vec<f64>, FitError> {
    if xs.len() < 2 {
        return Err(FitError::TooFew(xs.len()));
    }
    if let Some((i, &value)) = xs.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x > 0.0)) {
        return Err(FitError::NotPositive { index: i + 1, value });
    }
    let mut sorted = xs.to_vec();
    match passes {
        Passes::Serial => sorted.sort_by(f64::total_cmp),
        // `total_cmp` is a total order in which only equal bits tie: every
        // sort by it, stable or not, has the same result.
        Passes::Parallel => sorted.par_sort_unstable_by(f64::total_cmp),
    }
    if sorted[0] == sorted[sorted.len() - 1] {
        return Err(FitError::Constant(sorted[0]));
    }
    Ok(sorted)
}

/// The maximum-likelihood fit of one family to `xs` (rank 1).
///
/// Cost: O(n log n) for the sort; the Weibull root find adds some 60 passes.
pub fn fit(family: Family, xs: &[f64]) -> Result<Fit, FitError> {
    let sorted = sorted_sample(xs, Passes::Serial)?;
    fit_sorted(family, &sorted, &mle::Summary::new(&sorted), Passes::Serial)
}

/// The fit of `family` to `sorted`, whose summary is `summary`.
fn fit_sorted(family: Family, sorted: &[f64], summary: &mle::Summary, passes: Passes) -> Result<Fit, FitError> {
    let law = mle::estimate(family, sorted, summary, passes).map_err(|source| FitError::Estimate {
        family: family.name(),
        source,
    })?;
    let ln_pdf = |x: f64| mle::ln_pdf(law.base(), x);
    let (log_likelihood, ks_distance) = match passes {
        Passes::Serial => (sorted.iter().map(|&x| ln_pdf(x)).sum(), ks_distance(sorted, &law)),
        Passes::Parallel => rayon::join(
            || parallel::sum_in_order(sorted, ln_pdf),
            || parallel::ks_distance(sorted, &law),
        ),
    };
    let dist = law.to_string();
    let parameters = dist.split_once(':').map_or("", |(_, p)| p).replace(',', " ");
    Ok(Fit {
        rank: 1,
        family,
        parameters,
        n: sorted.len(),
        log_likelihood,
        aic: 2.0 * family.parameters() as f64 - 2.0 * log_likelihood,
        ks_distance,
        dist,
        law,
    })
}

/// Every family fitted to `xs` (positive times, at least two distinct),
/// best first: by Kolmogorov–Smirnov distance, ties by AIC, then in
/// [`Family::ALL`] order. A family whose estimate is outside its law's
/// range (a Pareto shape below 0.1 on light-tailed times, an exponential
/// rate below 1e-100 where one time is 1e300) is left out; the error of
/// the first is returned where every family is.
pub fn fit_all(xs: &[f64]) -> Result<Vec<Fit>, FitError> {
    fit_all_noting(xs).map(|(fits, _)| fits)
}

/// [`fit_all`], with the errors of the families it leaves out, in
/// [`Family::ALL`] order (each a [`FitError::Estimate`]).
pub fn fit_all_noting(xs: &[f64]) -> Result<(Vec<Fit>, Vec<FitError>), FitError> {
    let sorted = sorted_sample(xs, Passes::Serial)?;
    let summary = mle::Summary::new(&sorted);
    ranked(
        Family::ALL
            .iter()
            .map(|&f| fit_sorted(f, &sorted, &summary, Passes::Serial))
            .collect(),
    )
}

/// [`fit_all`] with its work spread over rayon's threads: the sort, the
/// families fitted at once, and each fit's log-likelihood and distance
/// computed a chunk of the sample at a time. The same fits, bit for bit,
/// on any number of threads: the sort's result is unique, each estimate
/// is computed as in [`fit_all`], the largest gap of the Kolmogorov–Smirnov
/// distance is the same whichever chunk finds it, and the log-likelihood's
/// terms are added in the sample's order.
pub fn fit_all_parallel(xs: &[f64]) -> Result<Vec<Fit>, FitError> {
    let sorted = sorted_sample(xs, Passes::Parallel)?;
    let summary = mle::Summary::new(&sorted);
    ranked(
        Family::ALL
            .par_iter()
            .map(|&f| fit_sorted(f, &sorted, &summary, Passes::Parallel))
            .collect(),
    )
    .map(|(fits, _)| fits)
}

/// The fits that succeeded, best first and ranked (as [`fit_all`] orders
/// them), and the others' errors, from every family's result in
/// [`Family::ALL`] order; the first error where every family failed.
fn ranked(results: Vec<Result<Fit, FitError>>) -> Result<(Vec<Fit>, Vec<FitError>), FitError> {
    let (fits, errors): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    let mut fits: Vec<Fit> = fits.into_iter().map(Result::unwrap).collect();
    let mut errors = errors.into_iter().map(Result::unwrap_err);
    if fits.is_empty() {
        return Err(errors.next().expect("a family failed"));
    }
    fits.sort_by(|a, b| a.ks_distance.total_cmp(&b.ks_distance).then(a.aic.total_cmp(&b.aic)));
    for (i, f) in fits.iter_mut().enumerate() {
        f.rank = i + 1;
    }
    Ok((fits, errors.collect()))
}

/// `1.63/√n`, the asymptotic 1% critical value of the Kolmogorov–Smirnov
/// distance for a fully specified law (Smirnov 1948). With fitted parameters
/// the true critical value is smaller (Lilliefors 1967), so a best fit above
/// it is poor beyond doubt; correlated times (the workers of one step) make
/// the effective sample smaller, which this does not allow for.
pub(crate) fn ks_critical_1pct(n: usize) -> f64 {
    1.628 / (n as f64).sqrt()
}

/// The Kolmogorov–Smirnov distance `sup_x |F_n(x) − F(x)|` between the
/// empirical CDF of `sorted` (ascending) and `dist`'s CDF.
///
/// F is continuous, so the supremum is reached at a sample point, on one side
/// or the other of its jump: `max_i max(F(x₍ᵢ₎) − (i−1)/n, i/n − F(x₍ᵢ₎))`.
/// Over a run of tied values this takes the jump from before the first to
/// after the last. Cost: n CDF evaluations.
pub fn ks_distance(sorted: &[f64], dist: &Dist) -> f64 {
    let n = sorted.len() as f64;
    sorted.iter().enumerate().fold(0.0, |d: f64, (i, &x)| {
        let f = dist.cdf(x);
        d.max(f - i as f64 / n).max((i + 1) as f64 / n - f)
    })
}

#[cfg(test)]
mod tests;
