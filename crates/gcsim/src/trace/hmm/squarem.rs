//! Baum–Welch accelerated by SQUAREM (Varadhan & Roland 2008, *Scand. J.
//! Statist.* 35, scheme S3 with the adaptive step bound of their SQUAREM
//! package), for the bootstrap's refits.
//!
//! A cycle takes two EM steps from θ₀, θ₁ = F(θ₀) and θ₂ = F(θ₁), and
//! steps along their extrapolation, θ₀ + 2α·r + α²·v with r = θ₁ − θ₀,
//! v = θ₂ − 2θ₁ + θ₀ and α = ‖r‖/‖v‖ (α = 1 is θ₂, plain EM), then one EM
//! step from there, whose E-step gives its likelihood. Where that step
//! leaves the model's range or lowers the likelihood below θ₀'s, the cycle
//! ends at θ₂ instead, which EM never makes worse. Near the optimum EM
//! converges linearly, slowly where the states overlap; the extrapolation
//! takes several of its steps at once, so a refit needs a fraction of the
//! E-steps. It stops where a cycle gains less than the plain iteration's
//! tolerance, so at the same maximum up to that tolerance.

use super::{Hmm, MAX_ITERATIONS, Sample, TOLERANCE, feasible_rho, m_step};

/// The factor the step bound grows by each time α reaches it.
const STEP_FACTOR: f64 = 4.0;

fn to_vector(m: &Hmm) -> [f64; 5] {
    [m.mu, m.sigma, m.shift, m.p_slow, m.rho]
}

/// The model at `x`, if it is one: σ > 0, 0 < p_slow < 1, ρ within its range.
fn from_vector(x: [f64; 5]) -> Option<Hmm> {
    let [mu, sigma, shift, p_slow, rho] = x;
    let inside = x.iter().all(|v| v.is_finite()) && sigma > 0.0 && p_slow > 0.0 && p_slow < 1.0;
    inside.then(|| Hmm {
        mu,
        sigma,
        shift,
        p_slow,
        rho: feasible_rho(p_slow, rho),
    })
}

/// Baum–Welch from `start` by SQUAREM cycles (module docs) until a cycle
/// gains less than a relative 1e-10 of log-likelihood; `None` when a state
/// empties. The model keeps its states' names (δ may be negative).
pub(super) fn squarem(start: Hmm, sample: &Sample) -> Option<Hmm> {
    // One EM step: F(θ) and the log-likelihood of θ.
    let em = |m: &Hmm| {
        let counts = sample.e_step(m);
        let ll = counts.log_likelihood;
        ll.is_finite().then_some(())?;
        Some((m_step(&counts, sample.observations)?, ll))
    };
    let mut model = start;
    let mut previous = f64::NEG_INFINITY;
    let mut step_max = 1.0;
    let mut steps = 0;
    while steps < MAX_ITERATIONS {
        let (first, ll) = em(&model)?;
        if (ll - previous).abs() <= TOLERANCE * (1.0 + ll.abs()) {
            break;
        }
        previous = ll;
        let (second, _) = em(&first)?;
        let (x0, x1, x2) = (to_vector(&model), to_vector(&first), to_vector(&second));
        let r: [f64; 5] = std::array::from_fn(|i| x1[i] - x0[i]);
        let v: [f64; 5] = std::array::from_fn(|i| x2[i] - 2.0 * x1[i] + x0[i]);
        let norm = |x: &[f64; 5]| x.iter().map(|a| a * a).sum::<f64>().sqrt();
        // No curvature (v = 0): plain EM.
        let ratio = norm(&r) / norm(&v);
        let alpha = if ratio.is_nan() {
            1.0
        } else {
            ratio.clamp(1.0, step_max)
        };
        let jumped = from_vector(std::array::from_fn(|i| {
            x0[i] + 2.0 * alpha * r[i] + alpha * alpha * v[i]
        }));
        steps += 3;
        model = match jumped.and_then(|m| em(&m)) {
            Some((next, jumped_ll)) if jumped_ll >= ll => {
                if alpha == step_max {
                    step_max *= STEP_FACTOR;
                }
                next
            }
            _ => {
                if alpha == step_max {
                    step_max = (step_max / STEP_FACTOR).max(1.0);
                }
                second
            }
        };
    }
    Some(model)
}
