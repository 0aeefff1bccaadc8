//! The law of one worker's time after its load model, and the order
//! statistic that the recovery rule takes over the n workers.
//!
//! Every exact case is `T = a·Y + b` with `Y` one of:
//! - a draw of the base [`Dist`] (loads `fixed`: a = 1; `scaled`: a = ℓ;
//!   `affine`: b = c·ℓ);
//! - `ℓ·shift + Gamma(ℓ, μ)`, the sum of ℓ shifted-exponential units
//!   (`additive` with integer ℓ); with a straggler mixture the worker's
//!   state holds for all ℓ units, so a slow worker's sum is `slowdown`
//!   times the normal one: `F(y) = (1 − p)·F₀(y) + p·F₀(y/slowdown)` with F₀
//!   the ℓ-fold convolution of the base law (not the ℓ-fold convolution of
//!   the mixture).
//!
//! The recovery rule then sees n i.i.d. copies of Y with CDF F and survival
//! S (David & Nagaraja 2003, §2.1; Tandon et al. 2017, §4.1 for the groups):
//! - k of n: `P(Y_(k) ≤ y) = I_F(k, n−k+1)`, `P(Y_(k) > y) = I_S(n−k+1, k)`;
//! - g groups of r: `P(max_groups min_group Y ≤ y) = (1 − S^r)^g`.

use statrs::function::gamma::{gamma_lr, gamma_ur};

use crate::dist::{Base, Dist};

use super::binomial;

/// The law of `Y`, one worker's time before the affine map of the load model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum WorkerLaw {
    /// A draw of the base distribution.
    Dist(Dist),
    /// `shift + Gamma(shape, rate)`, shape a positive integer, the whole
    /// sum `slowdown` times longer with probability `p` where `slow` is
    /// `Some((p, slowdown))`.
    Gamma {
        /// Number of exponential units ℓ.
        shape: f64,
        /// Rate μ of each unit.
        rate: f64,
        /// ℓ times the unit shift.
        shift: f64,
        /// The worker's straggler state `(p_slow, slowdown)`, if any.
        slow: Option<(f64, f64)>,
    },
}

impl WorkerLaw {
    /// The smallest value of `Y`.
    pub(crate) fn min(&self) -> f64 {
        match self {
            WorkerLaw::Dist(d) => d.support_min(),
            WorkerLaw::Gamma { shift, .. } => *shift,
        }
    }

    /// `(F(y), S(y))`, each computed so that it is accurate where it is small.
    pub(crate) fn cdf_sf(&self, y: f64) -> (f64, f64) {
        if y <= self.min() {
            return (0.0, 1.0);
        }
        match *self {
            WorkerLaw::Dist(d) => {
                // Dist::cdf is 1 − S, which loses the digits of a small F
                // near the minimum; the base CDFs are evaluated directly.
                let f = match d.stragglers() {
                    None => d.base().cdf(y),
                    Some((p, slowdown)) => (1.0 - p) * d.base().cdf(y) + p * d.base().cdf(y / slowdown),
                };
                (f, d.sf(y))
            }
            WorkerLaw::Gamma {
                shape,
                rate,
                shift,
                slow,
            } => {
                let normal = |y: f64| {
                    let x = rate * (y - shift);
                    if x <= 0.0 {
                        (0.0, 1.0)
                    } else if x == f64::INFINITY {
                        (1.0, 0.0)
                    } else {
                        (gamma_lr(shape, x), gamma_ur(shape, x))
                    }
                };
                let (f, s) = normal(y);
                match slow {
                    None => (f, s),
                    Some((p, slowdown)) => {
                        let (fs, ss) = normal(y / slowdown);
                        ((1.0 - p) * f + p * fs, (1.0 - p) * s + p * ss)
                    }
                }
            }
        }
    }

    /// The Pareto tail index of `Y` (`INFINITY` for exponential-type tails):
    /// `P(Y > y)` falls like `y^(−α)`. A straggler mixture keeps the index.
    pub(crate) fn tail_index(&self) -> f64 {
        match self {
            WorkerLaw::Dist(d) => match d.base() {
                Base::Pareto { shape, .. } => shape,
                _ => f64::INFINITY,
            },
            WorkerLaw::Gamma { .. } => f64::INFINITY,
        }
    }

    /// A positive length on which `Y` varies, to start bracketing searches.
    pub(crate) fn spread(&self) -> f64 {
        match self {
            WorkerLaw::Dist(d) => (d.quantile(0.5) - d.support_min()).max(f64::MIN_POSITIVE),
            WorkerLaw::Gamma { shape, rate, .. } => shape / rate,
        }
    }

    /// Points where the density jumps (the slow copy's minimum in a straggler
    /// mixture); quadrature splits there.
    pub(crate) fn kinks(&self) -> Option<f64> {
        match self {
            WorkerLaw::Dist(d) => d.stragglers().map(|(_, slowdown)| slowdown * d.support_min()),
            WorkerLaw::Gamma { shift, slow, .. } => slow.map(|(_, slowdown)| slowdown * shift),
        }
    }
}

/// The order statistic a recovery rule takes over the n i.i.d. workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// The k-th smallest of n.
    KOfN {
        /// Number of workers.
        n: u64,
        /// Workers needed, 1 ≤ k ≤ n.
        k: u64,
    },
    /// The maximum over `groups` groups of the minimum within each group of `size`.
    Groups {
        /// Workers per group r.
        size: u64,
        /// Number of groups g = n / r.
        groups: u64,
    },
}

impl Order {
    /// `(P(T ≤ y), P(T > y))` from the worker's `(F(y), S(y))`.
    pub(crate) fn cdf_sf(&self, f: f64, s: f64) -> (f64, f64) {
        match *self {
            Order::KOfN { n, k } => {
                let (lower, upper) = binomial::tails(n, k, f, s);
                (upper, lower)
            }
            Order::Groups { size, groups } => {
                if s <= 0.0 {
                    return (1.0, 0.0);
                }
                if f <= 0.0 {
                    return (0.0, 1.0);
                }
                let r = size as f64;
                // ln S from whichever of F and S holds the digits.
                let ln_s = if s < 0.5 { s.ln() } else { (-f).ln_1p() };
                let s_r = (r * ln_s).exp();
                // ln(1 − S^r), the log-probability that one group has finished.
                let ln_done = if s_r < 0.5 {
                    (-s_r).ln_1p()
                } else {
                    (-(r * ln_s).exp_m1()).ln()
                };
                let g_ln = groups as f64 * ln_done;
                (g_ln.exp(), -g_ln.exp_m1())
            }
        }
    }

    /// The factor by which the rule multiplies the worker's tail index:
    /// `P(T > y) ≈ const·S(y)^m` as y → ∞, so the mean of T is finite iff
    /// `α·m > 1` (m = n−k+1 for k of n, m = r for groups of r).
    pub(crate) fn tail_power(&self) -> u64 {
        match *self {
            Order::KOfN { n, k } => n - k + 1,
            Order::Groups { size, .. } => size,
        }
    }
}
