//! Monte Carlo against exact values, at fixed seeds, with tolerances in
//! standard errors.
//!
//! References are computed here, independently of the engine: the
//! iteration-time CDF as a binomial tail, P(X_(k) ≤ t) = P(Bin(n, G(t)) ≥ k)
//! (David & Nagaraja, Order Statistics, §2.1), frc's group formula
//! (1 − (1 − G)^r)^g, harmonic numbers, the Pareto Gamma ratio, and means by
//! integrating the survival function.
//!
//! The mean must lie within Z standard errors of the exact value; a percentile
//! estimate x̂ must satisfy |P(T ≤ x̂) − q| ≤ Z·√(q(1−q)/N). With Z = 4.5 and
//! about a hundred checks, a correct engine fails with probability < 10⁻³;
//! an engine off by one worker misses by tens of standard errors.

use gcsim::dist::Dist;
use gcsim::engine::{self, Outcome, Silent, Summary};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Rule, Scheme, SchemeKind};
use gcsim::stats::QUANTILES;
use gcsim::study::Study;
use statrs::distribution::{Binomial, DiscreteCDF};
use statrs::function::gamma::{gamma_lr, ln_gamma};

const Z: f64 = 4.5;
const TRIALS: u64 = 100_000;

fn scheme(kind: SchemeKind, n: usize, s: Option<usize>, m: Option<usize>, k: Option<usize>) -> Scheme {
    Scheme::new(
        kind,
        n,
        Params {
            s,
            m,
            k,
            d: None,
            ..Params::default()
        },
    )
    .unwrap()
}

fn harmonic(n: usize) -> f64 {
    (1..=n).map(|j| 1.0 / j as f64).sum()
}

/// The CDF of one worker's time at load ℓ.
fn worker_cdf(dist: &Dist, model: LoadModel, load: f64) -> impl Fn(f64) -> f64 + '_ {
    move |t: f64| match model {
        LoadModel::Fixed => dist.cdf(t),
        LoadModel::Scaled => dist.cdf(t / load),
        LoadModel::Affine { unit_time } => dist.cdf(t - unit_time * load),
        LoadModel::Additive => {
            // Exponential units only: Gamma(ℓ, μ) for integer ℓ.
            let rate = 1.0 / dist.mean();
            assert_eq!(load.fract(), 0.0);
            if t <= 0.0 { 0.0 } else { gamma_lr(load, rate * t) }
        }
    }
}

/// The iteration-time CDF of `scheme`, from the worker CDF.
fn iteration_cdf(scheme: &Scheme, g: impl Fn(f64) -> f64) -> impl Fn(f64) -> f64 {
    let n = scheme.n();
    let rule = scheme.rule();
    move |t| {
        let p = g(t).clamp(0.0, 1.0);
        match rule {
            Rule::KOfN(k) => {
                // P(Bin(n, p) >= k)
                if k == 0 {
                    1.0
                } else {
                    Binomial::new(p, n as u64).unwrap().sf(k as u64 - 1)
                }
            }
            Rule::Groups { size } => (1.0 - (1.0 - p).powi(size as i32)).powi((n / size) as i32),
        }
    }
}

/// ∫ (1 − F(t)) dt by composite Simpson on [lo, hi], where F(hi) ≈ 1.
fn mean_from_cdf(f: &impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let steps = 20_000;
    let h = (hi - lo) / steps as f64;
    let sf = |t: f64| 1.0 - f(t);
    let mut sum = sf(lo) + sf(hi);
    for i in 1..steps {
        sum += if i % 2 == 1 { 4.0 } else { 2.0 } * sf(lo + i as f64 * h);
    }
    lo + sum * h / 3.0
}

fn simulate(n: usize, dist: Dist, model: LoadModel, schemes: Vec<Scheme>, trials: u64, seed: u64) -> (Study, Outcome) {
    let study = Study::new(n, dist, model, schemes, trials, seed).unwrap();
    let outcome = engine::simulate(&study, &Silent);
    (study, outcome)
}

fn check_mean(label: &str, s: &Summary, exact: f64) {
    let se = s.mean.std_err.unwrap();
    let z = (s.mean.mean - exact) / se;
    assert!(
        z.abs() < Z,
        "{label}: mean {} vs exact {exact}: z = {z:.2}",
        s.mean.mean
    );
}

fn check_quantiles(label: &str, s: &Summary, cdf: &impl Fn(f64) -> f64) {
    for (q, &x) in QUANTILES.iter().zip(&s.quantiles) {
        let z = (cdf(x) - q) / (q * (1.0 - q) / s.trials as f64).sqrt();
        assert!(z.abs() < Z, "{label}: p{q} = {x}: F(x) = {}: z = {z:.2}", cdf(x));
    }
}

/// Checks every configuration of one study: quantiles always, the mean
/// against `exact_mean` where given or else against the integrated CDF.
fn check_all(n: usize, dist: Dist, model: LoadModel, schemes: Vec<Scheme>, exact_means: Vec<Option<f64>>, seed: u64) {
    let (study, outcome) = simulate(n, dist, model, schemes, TRIALS, seed);
    for ((scheme, summary), exact) in study.schemes().iter().zip(&outcome.configs).zip(exact_means) {
        let label = format!("{scheme} {dist} {model}");
        let cdf = iteration_cdf(scheme, worker_cdf(&dist, model, scheme.load()));
        check_quantiles(&label, summary, &cdf);
        let exact = exact.unwrap_or_else(|| {
            let hi = (1..).map(|i| i as f64).find(|&t| cdf(t) > 1.0 - 1e-13).unwrap();
            mean_from_cdf(&cdf, 0.0, hi)
        });
        check_mean(&label, summary, exact);
    }
}

/// One law of every kind the order-statistic and spacings samplers take
/// (`Standard`): exponential, shifted-exponential, Pareto, Weibull,
/// log-normal, and the bootstrap from the 64-worker trace.
fn standard_laws() -> Vec<gcsim::study::Workers> {
    use gcsim::study::Workers;
    let trace = gcsim::trace::Trace::from_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/trace-llm-64w.csv"),
    );
    vec![
        Workers::Iid(Dist::exp(2.0).unwrap()),
        Workers::Iid(Dist::shifted_exp(1.0, 1.0).unwrap()),
        Workers::Iid(Dist::pareto(1.0, 2.5).unwrap()),
        Workers::Iid(Dist::weibull(1.0, 1.5).unwrap()),
        Workers::Iid(Dist::lognormal(0.5, 0.8).unwrap()),
        Workers::Trace(std::sync::Arc::new(trace.unwrap())),
    ]
}

/// The monotone load models, with an affine shift of 0.5 per unit of load.
fn monotone_models() -> [LoadModel; 3] {
    [
        LoadModel::Fixed,
        LoadModel::Scaled,
        LoadModel::Affine { unit_time: 0.5 },
    ]
}

/// E[X_(k:n)] of Pareto(x_m, α): x_m Γ(n+1)Γ(n−k+1−1/α) / (Γ(n−k+1)Γ(n+1−1/α)).
fn pareto_order_mean(xm: f64, alpha: f64, n: usize, k: usize) -> f64 {
    let (nf, kf) = (n as f64, k as f64);
    xm * (ln_gamma(nf + 1.0) + ln_gamma(nf - kf + 1.0 - 1.0 / alpha)
        - ln_gamma(nf - kf + 1.0)
        - ln_gamma(nf + 1.0 - 1.0 / alpha))
    .exp()
}

mod bisection;
mod deadlines;
mod intervals;
mod means;
mod percentiles;
mod samplers;
mod slot_laws;
mod slow_state;
mod spacings;
mod strategy_ranks;
