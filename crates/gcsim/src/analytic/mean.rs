//! Means of the iteration time, in the variable Y before the load's affine map.
//!
//! Closed forms (David & Nagaraja 2003, §3.1 and §6.7; Tandon et
//! al. 2017, §4.1):
//! - exponential rate μ (+ shift): `E[Y_(k:n)] = shift + (H_n − H_{n−k})/μ`;
//!   groups: the group minimum is exponential with rate rμ, so
//!   `E = shift + H_g/(rμ)`;
//! - Pareto (x_m, α): with m = n−k+1 and β = 1/α,
//!   `E[Y_(k:n)] = x_m·Γ(n+1)Γ(m−β)/(Γ(m)Γ(n+1−β))`; groups: the group minimum
//!   is Pareto (x_m, rα), and the maximum of g of them is the case k = n = g.
//!
//! Otherwise `E[Y] = y₀ + ∫_{y₀}^∞ P(Y > y) dy`. The body is integrated by
//! adaptive Gauss–Kronrod between quantiles of Y (where P(Y > y) changes)
//! up to the 1 − 10⁻⁶ quantile y_c. Beyond it:
//! - tails lighter than any power (exponential, log-normal, Weibull): the substitution `y = y_c + L·u/(1−u)` maps the
//!   tail onto u ∈ [0, 1);
//! - Pareto-type tails: past the straggler copy's minimum the worker law is
//!   exactly `S(y) = (c/y)^α`, and with it the tail integral has the closed
//!   form `∫_{y_c}^∞ P(Y > y) dy = c·B(m−β, k)/B(m, k)·I_{S_c}(m−β, k) −
//!   y_c·P(Y > y_c)` (k of n; groups with m = 1, k = g, β = 1/(rα) and
//!   `S_c^r` for `S_c`). A tail index near 1 puts much of the mean beyond any
//!   point a quadrature could reach, so this part is never integrated.

use statrs::function::gamma::ln_gamma;

use crate::dist::Base;

use super::IterationLaw;
use super::numeric;
use super::special::{harmonic_diff, ln_gamma_ratio};
use super::worker::{Order, WorkerLaw};

/// The closed-form mean of Y, where one exists.
pub(crate) fn closed_form(worker: &WorkerLaw, order: &Order) -> Option<f64> {
    let d = match (*worker, *order) {
        // One Gamma variable (k-batch-sync): shift + ℓ/μ.
        (
            WorkerLaw::Gamma {
                shape,
                rate,
                shift,
                slow,
            },
            Order::KOfN { n: 1, k: 1 },
        ) => {
            let factor = slow.map_or(1.0, |(p, slowdown)| 1.0 - p + p * slowdown);
            return Some(factor * (shift + shape / rate));
        }
        (WorkerLaw::Gamma { .. }, _) => return None,
        (WorkerLaw::Dist(d), _) => d,
    };
    if d.stragglers().is_some() {
        return None;
    }
    if let Base::Pareto { scale, shape } = d.base() {
        let (n, m, alpha) = match *order {
            Order::KOfN { n, k } => (n, n - k + 1, shape),
            Order::Groups { size, groups } => (groups, 1, shape * size as f64),
        };
        return Some(scale * pareto_ratio(n, m, 1.0 / alpha));
    }
    let (shift, rate) = d.base().shifted_exponential()?;
    let spacing_sum = match *order {
        Order::KOfN { n, k } => harmonic_diff(n, n - k) / rate,
        Order::Groups { size, groups } => harmonic_diff(groups, 0) / (size as f64 * rate),
    };
    Some(shift + spacing_sum)
}

/// `Γ(n+1)Γ(m−β) / (Γ(m)Γ(n+1−β)) = B(m−β, n−m+1)/B(m, n−m+1)`, for m > β.
fn pareto_ratio(n: u64, m: u64, beta: f64) -> f64 {
    (ln_gamma_ratio(n as f64 + 1.0, beta) - ln_gamma_ratio(m as f64, beta)).exp()
}

/// `I_x(a, b)` by the hypergeometric series
/// `x^a (1−x)^b / (a·B(a,b)) · Σ_j (a+b)_j/(a+1)_j x^j` (Abramowitz & Stegun
/// 26.5.4 with 15.1.1), whose terms are all positive, for x < 1. The tail
/// only calls it with x below the bulk of the law, where it converges
/// geometrically.
fn beta_reg_series(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let ln_pre = a * x.ln() + b * (-x).ln_1p() - a.ln() - ln_gamma(a) + ln_gamma_ratio(a + b, a);
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut j = 0.0;
    while term > 1e-18 * sum && j < 1e8 {
        term *= (a + b + j) / (a + 1.0 + j) * x;
        sum += term;
        j += 1.0;
    }
    (ln_pre.exp() * sum).min(1.0)
}

/// Relative accuracy asked of the integrated part.
const REL_TOL: f64 = 1e-12;

/// Survival probability at which the tail treatment takes over.
const TAIL_START: f64 = 1e-6;

/// `E[Y]` by integrating the survival function (see the module docs).
pub(crate) fn integrated(law: &IterationLaw) -> f64 {
    let worker = &law.worker;
    let y0 = worker.min();
    let sf = |y: f64| law.cdf_sf_y(y).1;
    let median = law.quantile_y(0.5);
    let y_tail = law.quantile_y(1.0 - TAIL_START);
    let mut points: Vec<f64> = [1e-3, 0.1, 0.5, 0.9, 0.999]
        .iter()
        .map(|&q| if q == 0.5 { median } else { law.quantile_y(q) })
        .chain([y0, y_tail])
        .collect();
    let mut y_c = y_tail;
    if let Some(kink) = worker.kinks() {
        points.push(kink);
        if worker.tail_index().is_finite() {
            y_c = y_c.max(kink);
        }
    }
    points.retain(|&p| p >= y0 && p <= y_c);
    points.sort_by(f64::total_cmp);
    points.dedup();
    // The body alone is at least half of median − y₀.
    let tol = REL_TOL * (median - y0).max(f64::MIN_POSITIVE);
    let mut f = sf;
    let mut body = 0.0;
    for w in points.windows(2) {
        body += numeric::integrate(&mut f, w[0], w[1], tol / points.len() as f64);
    }
    let tail = if worker.tail_index().is_finite() {
        pareto_tail(law, y_c)
    } else {
        let length = (y_tail - median).max(f64::MIN_POSITIVE);
        let mut g = |u: f64| {
            if u >= 1.0 {
                return 0.0;
            }
            let v = 1.0 - u;
            let y = y_tail + length * u / v;
            if y.is_infinite() { 0.0 } else { sf(y) * length / (v * v) }
        };
        numeric::integrate(&mut g, 0.0, 1.0, tol)
    };
    y0 + body + tail
}

/// `∫_{y_c}^∞ P(Y > y) dy` for a Pareto-based worker with `y_c` at or past
/// the slow copy's minimum, where `S(y) = (c/y)^α` exactly.
fn pareto_tail(law: &IterationLaw, y_c: f64) -> f64 {
    let WorkerLaw::Dist(d) = law.worker else {
        unreachable!("only Pareto-based workers have a finite tail index");
    };
    let Base::Pareto { scale, shape: alpha } = d.base() else {
        unreachable!("only Pareto-based workers have a finite tail index");
    };
    // S(y) = scale^α·((1 − p) + p·slowdown^α)·y^(−α) = (c/y)^α for y ≥ slowdown·scale.
    let weight = d.stragglers().map_or(1.0, |(p, sd)| (1.0 - p) + p * sd.powf(alpha));
    let c = scale * weight.powf(1.0 / alpha);
    let s_c = (c / y_c).powf(alpha);
    let (n, m, beta, v_c) = match law.order {
        Order::KOfN { n, k } => (n, n - k + 1, 1.0 / alpha, s_c),
        Order::Groups { size, groups } => (groups, 1, 1.0 / (alpha * size as f64), s_c.powf(size as f64)),
    };
    let k = (n - m + 1) as f64;
    let beyond = c * pareto_ratio(n, m, beta) * beta_reg_series(m as f64 - beta, k, v_c);
    (beyond - y_c * law.cdf_sf_y(y_c).1).max(0.0)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // reference values keep the digits they were computed to
mod tests {
    use super::*;
    use crate::analytic::binomial;

    #[test]
    fn beta_series_matches_integer_tails_and_statrs() {
        for &(a, b, x) in &[
            (1.0, 1.0, 0.3),
            (3.0, 50.0, 0.01),
            (1.0, 1000.0, 1e-4),
            (20.0, 30.0, 0.2),
        ] {
            let (_, upper) = binomial::tails((a + b - 1.0) as u64, a as u64, x, 1.0 - x);
            let series = beta_reg_series(a, b, x);
            assert!(
                (series - upper).abs() < 1e-13 * upper,
                "I_{x}({a},{b}): {series} vs {upper}"
            );
        }
        for &(a, b, x) in &[(0.4, 3.0, 0.05), (2.5, 10.0, 0.1), (0.01, 1.0, 0.5)] {
            let series = beta_reg_series(a, b, x);
            let reference = statrs::function::beta::beta_reg(a, b, x);
            assert!(
                (series - reference).abs() < 1e-13,
                "I_{x}({a},{b}): {series} vs {reference}"
            );
        }
    }

    use crate::analytic::iteration_law;
    use crate::dist::Dist;
    use crate::load::LoadModel;
    use crate::scheme::{Params, Scheme, SchemeKind};

    fn scheme(kind: SchemeKind, n: usize, s: usize) -> Scheme {
        Scheme::with_tolerance(kind, n, s).unwrap()
    }

    /// The quadrature path against the closed forms, where both exist, to
    /// 1e-9 relative: exponential, shifted exponential and Pareto laws, k of n
    /// and groups, small and large k, and Pareto tails next to the
    /// finiteness boundary (where most of the mean lies in the analytic tail).
    #[test]
    fn integrated_means_match_closed_forms() {
        let dists = [
            Dist::exp(1.0).unwrap(),
            Dist::exp(3.0).unwrap(),
            Dist::shifted_exp(2.0, 0.5).unwrap(),
            Dist::pareto(1.0, 2.5).unwrap(),
            Dist::pareto(2.0, 1.05).unwrap(),
            Dist::pareto(1.0, 0.26).unwrap(),
        ];
        let configs = [
            (SchemeKind::Mds, 100, 99),
            (SchemeKind::Crc, 100, 50),
            (SchemeKind::Crc, 100, 3),
            (SchemeKind::Uncoded, 100, 0),
            (SchemeKind::Uncoded, 1, 0),
            (SchemeKind::Crc, 10_000, 9),
            (SchemeKind::Crc, 10_000, 5000),
            (SchemeKind::Frc, 100, 0),
            (SchemeKind::Frc, 100, 3),
            (SchemeKind::Frc, 100, 99),
            (SchemeKind::Frc, 10_000, 9),
        ];
        let mut checked = 0;
        for d in dists {
            for &(kind, n, s) in &configs {
                let sch = if kind == SchemeKind::Uncoded {
                    Scheme::new(kind, n, Params::default()).unwrap()
                } else {
                    scheme(kind, n, s)
                };
                let law = iteration_law(&d, &LoadModel::Fixed, &sch).unwrap();
                if !law.mean().is_finite() {
                    continue;
                }
                let exact = closed_form(&law.worker, &law.order).unwrap();
                let numeric = integrated(&law);
                let rel = (numeric - exact).abs() / exact;
                assert!(
                    rel < 1e-9,
                    "{d} {sch} n={n}: integrated {numeric} vs closed form {exact} (rel {rel:e})"
                );
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} finite cases");
    }
}
