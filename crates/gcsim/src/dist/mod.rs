//! Worker-time distributions.
//!
//! A [`Dist`] is a base law (exponential, shifted exponential, Pareto type I,
//! log-normal or Weibull) optionally mixed with stragglers: with probability `p_slow` a draw is
//! multiplied by `slowdown`, so
//! `F(x) = (1 − p_slow)·F₀(x) + p_slow·F₀(x / slowdown)`.
//!
//! Two keys describe how stragglers behave across workers and iterations;
//! neither changes one worker's law in one iteration, which is what the
//! `cdf`, `sf`, `quantile`, `mean` and the sampler here describe:
//! - `persist=RHO` makes each worker's slow/normal state a two-state Markov
//!   chain across iterations with stationary probability `p_slow` and lag-1
//!   autocorrelation RHO: a slow worker stays slow with probability
//!   p_slow + RHO·(1 − p_slow), a normal one turns slow with probability
//!   p_slow·(1 − RHO) (see [`next_state`]).
//! - `group=G,p_group=P,group_slowdown=F`: the workers in consecutive groups
//!   of G (the last group may be smaller) share a slowdown event: in each
//!   iteration, with probability P, every worker of the group is F times
//!   slower (on top of its own state). With `persist`, each group's state
//!   is a chain of the same kind. One worker's law then mixes over both
//!   states, but the workers of a group are no longer independent.
//!
//! The same type carries the sampler and the exact `cdf`, `sf`, `pdf`,
//! `quantile` and `mean` that the analytic layer uses, so the simulation and
//! the theory share one definition of every law (the rand_distr template:
//! private fields, `new` returning `Result`).

mod bounds;
mod hazard;
mod normal;
mod parse;

use bounds::{SCALE_RANGE, in_scale};
pub use hazard::{HazardQuantile, MAX_ERLANG_SHAPE, MAX_TABLE_SIGMA};
pub use normal::normal_of_exponential;
pub use parse::DistError;
pub(crate) use parse::plain;

use rand::Rng;
use rand::RngExt;
use rand_distr::{Distribution, Exp1, OpenClosed01, StandardNormal};
// libm's erfc is the fdlibm one (under 1 ulp); statrs 0.19's loses up to 1e-10
// relative, too much for an exact CDF.
use libm::erfc;
use statrs::function::erf::erfc_inv;
use statrs::function::gamma::ln_gamma;
use std::f64::consts::SQRT_2;

/// The base law of a worker's time for one uncoded share of the work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Base {
    /// Exponential with rate `rate` (mean `1/rate`).
    Exp {
        /// Rate μ > 0.
        rate: f64,
    },
    /// `shift` plus an exponential with rate `rate`.
    ShiftedExp {
        /// Deterministic minimum time, ≥ 0.
        shift: f64,
        /// Rate μ > 0 of the exponential part.
        rate: f64,
    },
    /// Pareto type I: `P(X > x) = (scale/x)^shape` for `x ≥ scale`.
    Pareto {
        /// Minimum value x_m > 0.
        scale: f64,
        /// Tail index α > 0; the mean is finite only for α > 1.
        shape: f64,
    },
    /// Log-normal: `ln X ~ Normal(mu, sigma²)` (Johnson, Kotz & Balakrishnan
    /// 1994, ch. 14). Every moment is finite.
    LogNormal {
        /// Mean of `ln X`, any finite number.
        mu: f64,
        /// Standard deviation of `ln X`, > 0.
        sigma: f64,
    },
    /// Weibull: `P(X > x) = exp(−(x/scale)^shape)` for `x ≥ 0` (Johnson, Kotz
    /// & Balakrishnan 1994, ch. 21). Every moment is finite.
    Weibull {
        /// Scale λ > 0 (the 1 − 1/e quantile).
        scale: f64,
        /// Shape k > 0; k = 1 is the exponential with rate 1/λ.
        shape: f64,
    },
}

/// A straggler mixture: with probability `p_slow` a worker is slow for an iteration, every draw it makes `slowdown` times slower.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stragglers {
    p_slow: f64,
    slowdown: f64,
}

/// Correlated slowdowns: consecutive groups of `size` workers, each slowed
/// by `slowdown` together with probability `p`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Groups {
    /// Workers per group (a host, a rack), ≥ 1.
    pub size: usize,
    /// The probability that a group is slow in an iteration, in [0, 1].
    pub p: f64,
    /// The factor of a slow group's times, ≥ 1.
    pub slowdown: f64,
}

/// A validated worker-time distribution: a [`Base`] law, optionally with
/// stragglers, correlated group slowdowns and persistence across iterations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dist {
    base: Base,
    stragglers: Option<Stragglers>,
    groups: Option<Groups>,
    /// RHO: the lag-1 autocorrelation of every slow/normal state (0: each
    /// iteration draws the states afresh).
    persist: f64,
}

/// Most workers per correlated group.
pub(crate) const MAX_GROUP: usize = 1 << 24;

/// The next slow/normal state of a two-state chain with stationary
/// probability `p` and lag-1 autocorrelation `rho`, from the previous state
/// (`None`: the first iteration, which starts from the stationary law) and a
/// uniform `u` on [0, 1): slow when u is below p, p + rho·(1 − p) after a
/// slow state, p·(1 − rho) after a normal one. With rho = 0 every threshold
/// is p, so the same `u` gives the independent draw.
#[inline]
pub fn next_state(p: f64, rho: f64, previous: Option<bool>, u: f64) -> bool {
    let threshold = match previous {
        None => p,
        Some(true) => p + rho * (1.0 - p),
        Some(false) => p * (1.0 - rho),
    };
    u < threshold
}

/// The largest time scale gcsim computes in: a law's scale (or rate's
/// inverse, or e^mu) within [1/MAX_SCALE, MAX_SCALE]. Far outside it the
/// squares behind standard errors under- or overflow (times near 1e-154
/// gave std_err 0, near 1e154 none); such a law is in the wrong time unit.
pub(crate) const MAX_SCALE: f64 = 1e100;

fn check(key: &'static str, value: f64, ok: bool, accepted: &'static str) -> Result<(), DistError> {
    if value.is_finite() && ok {
        Ok(())
    } else {
        Err(DistError::OutOfRange { key, value, accepted })
    }
}

impl Dist {
    /// Exponential with rate `rate` > 0.
    pub fn exp(rate: f64) -> Result<Self, DistError> {
        check("rate", rate, in_scale(rate), SCALE_RANGE)?;
        Ok(Self::from_base(Base::Exp { rate }))
    }

    /// `shift` (≥ 0) plus an exponential with rate `rate` (> 0).
    pub fn shifted_exp(shift: f64, rate: f64) -> Result<Self, DistError> {
        check(
            "shift",
            shift,
            shift == 0.0 || in_scale(shift),
            "0, or a number from 1e-100 to 1e100 (rescale the time unit for values outside)",
        )?;
        check("rate", rate, in_scale(rate), SCALE_RANGE)?;
        Ok(Self::from_base(Base::ShiftedExp { shift, rate }))
    }

    /// Pareto type I with minimum `scale` > 0 and tail index `shape` in 0.1..=1e100.
    pub fn pareto(scale: f64, shape: f64) -> Result<Self, DistError> {
        check("scale", scale, in_scale(scale), SCALE_RANGE)?;
        check("shape", shape, bounds::pareto_shape(shape), bounds::PARETO_SHAPE_RANGE)?;
        Ok(Self::from_base(Base::Pareto { scale, shape }))
    }

    /// Log-normal: `ln X ~ Normal(mu, sigma²)`, `mu` finite, `sigma` > 0.
    pub fn lognormal(mu: f64, sigma: f64) -> Result<Self, DistError> {
        // The median e^mu within the time scales gcsim computes in
        // (e^230 ≈ 1e100), and the spread within a few hundred orders of
        // magnitude of it (e^(20·3.1) ≈ 1e27 at the 0.999 quantile).
        check(
            "mu",
            mu,
            mu.abs() <= 230.0,
            "a number from -230 to 230 (e^mu is the median time; rescale the time unit for values outside)",
        )?;
        check("sigma", sigma, sigma > 0.0 && sigma <= 20.0, "a number in (0, 20]")?;
        Ok(Self::from_base(Base::LogNormal { mu, sigma }))
    }

    /// Weibull with `P(X > x) = exp(−(x/scale)^shape)`, `scale` > 0, `shape` in 0.05..=1e100.
    pub fn weibull(scale: f64, shape: f64) -> Result<Self, DistError> {
        check("scale", scale, in_scale(scale), SCALE_RANGE)?;
        check(
            "shape",
            shape,
            bounds::weibull_shape(shape),
            bounds::WEIBULL_SHAPE_RANGE,
        )?;
        Ok(Self::from_base(Base::Weibull { scale, shape }))
    }

    /// The plain law `base`, its parameters checked as its constructor
    /// checks them.
    pub(crate) fn checked(base: Base) -> Result<Self, DistError> {
        match base {
            Base::Exp { rate } => Self::exp(rate),
            Base::ShiftedExp { shift, rate } => Self::shifted_exp(shift, rate),
            Base::Pareto { scale, shape } => Self::pareto(scale, shape),
            Base::LogNormal { mu, sigma } => Self::lognormal(mu, sigma),
            Base::Weibull { scale, shape } => Self::weibull(scale, shape),
        }
    }

    fn from_base(base: Base) -> Self {
        Self {
            base,
            stragglers: None,
            groups: None,
            persist: 0.0,
        }
    }

    /// Adds stragglers: with probability `p_slow` ∈ [0, 1] a worker is slow for
    /// an iteration, and each of its draws in it is multiplied by `slowdown` ≥ 1.
    pub fn with_stragglers(self, p_slow: f64, slowdown: f64) -> Result<Self, DistError> {
        check("p_slow", p_slow, (0.0..=1.0).contains(&p_slow), "a number in [0, 1]")?;
        check(
            "slowdown",
            slowdown,
            (1.0..=MAX_SCALE).contains(&slowdown),
            "a number from 1 to 1e100",
        )?;
        Ok(Self {
            stragglers: Some(Stragglers { p_slow, slowdown }),
            ..self
        })
    }

    /// Adds correlated slowdowns: consecutive groups of `size` ≥ 1 workers,
    /// each `slowdown` ≥ 1 times slower together with probability `p` ∈ [0, 1].
    pub fn with_groups(self, size: usize, p: f64, slowdown: f64) -> Result<Self, DistError> {
        check(
            "group",
            size as f64,
            (1..=MAX_GROUP).contains(&size),
            "a whole number from 1 to 16777216",
        )?;
        check("p_group", p, (0.0..=1.0).contains(&p), "a number in [0, 1]")?;
        check(
            "group_slowdown",
            slowdown,
            (1.0..=MAX_SCALE).contains(&slowdown),
            "a number from 1 to 1e100",
        )?;
        Ok(Self {
            groups: Some(Groups { size, p, slowdown }),
            ..self
        })
    }

    /// Makes the slow/normal states persist across iterations with lag-1
    /// autocorrelation `rho` ∈ [0, 1) (see [`next_state`]). Needs a
    /// straggler mixture or groups.
    pub(crate) fn with_persist(self, rho: f64) -> Result<Self, DistError> {
        check("persist", rho, (0.0..1.0).contains(&rho), "a number in [0, 1)")?;
        if self.stragglers.is_none() && self.groups.is_none() {
            return Err(DistError::PersistAlone);
        }
        Ok(Self { persist: rho, ..self })
    }

    /// The law of `factor`·X (`factor` > 0 and finite): the time of a share
    /// of work `factor` times as large under a time-proportional model.
    pub fn scaled(&self, factor: f64) -> Result<Self, DistError> {
        check("factor", factor, factor > 0.0, "a finite number > 0")?;
        let base = self.base.scaled(factor);
        Ok(Self { base, ..*self })
    }

    /// The base law.
    pub fn base(&self) -> Base {
        self.base
    }

    /// The straggler mixture `(p_slow, slowdown)`, if any.
    pub fn stragglers(&self) -> Option<(f64, f64)> {
        self.stragglers.map(|s| (s.p_slow, s.slowdown))
    }

    /// The correlated group slowdowns, if any.
    pub fn groups(&self) -> Option<Groups> {
        self.groups
    }

    /// RHO, the persistence of the slow/normal states (0: none).
    pub fn persist(&self) -> f64 {
        self.persist
    }

    /// Whether workers of this law carry a state that a trial must keep:
    /// across iterations (`persist`), or shared within a group.
    pub(crate) fn is_stateful(&self) -> bool {
        self.persist > 0.0 || self.groups.is_some()
    }

    /// The same law without groups and persistence: one worker's own law
    /// given that its group is not slowed.
    pub fn independent(&self) -> Self {
        Self {
            groups: None,
            persist: 0.0,
            ..*self
        }
    }

    /// The base law's draw times the worker's own slowdown when `slow`.
    #[inline]
    pub(crate) fn sample_in_state<R: Rng + ?Sized>(&self, rng: &mut R, slow: bool) -> f64 {
        let x = self.base.sample(rng);
        match self.stragglers {
            Some(Stragglers { slowdown, .. }) if slow => x * slowdown,
            _ => x,
        }
    }

    /// The polynomial tail index: P(X > t) ~ t^(−index). The Pareto shape;
    /// infinite for the light-tailed laws (a straggler mixture scales the
    /// time, which keeps the index).
    pub(crate) fn tail_index(&self) -> f64 {
        match self.base {
            Base::Pareto { shape, .. } => shape,
            _ => f64::INFINITY,
        }
    }

    /// The smallest value the law can take.
    pub fn support_min(&self) -> f64 {
        match self.base {
            Base::Exp { .. } | Base::LogNormal { .. } | Base::Weibull { .. } => 0.0,
            Base::ShiftedExp { shift, .. } => shift,
            Base::Pareto { scale, .. } => scale,
        }
    }

    /// `P(X ≤ x)`.
    pub fn cdf(&self, x: f64) -> f64 {
        1.0 - self.sf(x)
    }

    /// `P(X > x)`, computed directly so that it stays accurate in the far tail.
    pub fn sf(&self, x: f64) -> f64 {
        self.mix(x, |b, y| b.sf(y))
    }

    /// The density at `x`.
    pub fn pdf(&self, x: f64) -> f64 {
        let own = |x: f64| match self.stragglers {
            None => self.base.pdf(x),
            Some(Stragglers { p_slow, slowdown }) => {
                (1.0 - p_slow) * self.base.pdf(x) + p_slow * self.base.pdf(x / slowdown) / slowdown
            }
        };
        match self.groups {
            None => own(x),
            Some(Groups { p, slowdown, .. }) => (1.0 - p) * own(x) + p * own(x / slowdown) / slowdown,
        }
    }

    fn mix(&self, x: f64, f: impl Fn(&Base, f64) -> f64) -> f64 {
        let own = |x: f64| match self.stragglers {
            None => f(&self.base, x),
            Some(Stragglers { p_slow, slowdown }) => {
                (1.0 - p_slow) * f(&self.base, x) + p_slow * f(&self.base, x / slowdown)
            }
        };
        match self.groups {
            None => own(x),
            Some(Groups { p, slowdown, .. }) => (1.0 - p) * own(x) + p * own(x / slowdown),
        }
    }

    /// The mean; `f64::INFINITY` for Pareto with `shape ≤ 1`.
    ///
    /// Log-normal `exp(μ + σ²/2)`, Weibull `λ·Γ(1 + 1/k)`.
    pub fn mean(&self) -> f64 {
        let base = match self.base {
            Base::Exp { rate } => 1.0 / rate,
            Base::ShiftedExp { shift, rate } => shift + 1.0 / rate,
            Base::Pareto { scale, shape } if shape > 1.0 => shape * scale / (shape - 1.0),
            Base::Pareto { .. } => f64::INFINITY,
            Base::LogNormal { mu, sigma } => (mu + 0.5 * sigma * sigma).exp(),
            Base::Weibull { scale, shape } => (scale.ln() + ln_gamma(1.0 + 1.0 / shape)).exp(),
        };
        let own = match self.stragglers {
            None => base,
            Some(Stragglers { p_slow, slowdown }) => base * (1.0 - p_slow + p_slow * slowdown),
        };
        match self.groups {
            None => own,
            Some(Groups { p, slowdown, .. }) => own * (1.0 - p + p * slowdown),
        }
    }

    /// The `p`-quantile, `inf{x : F(x) ≥ p}`, for `p` in [0, 1].
    ///
    /// Closed form for the base laws; for a mixture a bisection between the
    /// base quantile and the largest slowdown times it, to full precision.
    pub fn quantile(&self, p: f64) -> f64 {
        // The largest factor that has a positive probability.
        let factor = |p: f64, f: f64| if p > 0.0 { f } else { 1.0 };
        let own = self.stragglers.map_or(1.0, |s| factor(s.p_slow, s.slowdown));
        let group = self.groups.map_or(1.0, |g| factor(g.p, g.slowdown));
        let slowdown = own * group;
        if slowdown == 1.0 {
            return self.base.quantile(p);
        }
        if p >= 1.0 {
            return f64::INFINITY;
        }
        // The mixture is stochastically between the base law and its scaled copy.
        let (mut lo, mut hi) = (self.base.quantile(p), slowdown * self.base.quantile(p));
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if self.cdf(mid) >= p {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }
}

impl Base {
    /// The law of `factor`·X.
    pub(crate) fn scaled(self, factor: f64) -> Base {
        match self {
            Base::Exp { rate } => Base::Exp { rate: rate / factor },
            Base::ShiftedExp { shift, rate } => Base::ShiftedExp {
                shift: shift * factor,
                rate: rate / factor,
            },
            Base::Pareto { scale, shape } => Base::Pareto {
                scale: scale * factor,
                shape,
            },
            // ln(cX) = ln c + ln X.
            Base::LogNormal { mu, sigma } => Base::LogNormal {
                mu: mu + factor.ln(),
                sigma,
            },
            // (cX/(cλ))^k = (X/λ)^k.
            Base::Weibull { scale, shape } => Base::Weibull {
                scale: scale * factor,
                shape,
            },
        }
    }

    /// `(shift, rate)` where the law is shift + Exp(rate), whose sums and
    /// order statistics have closed forms (Gamma sums, harmonic spacings).
    pub(crate) fn shifted_exponential(self) -> Option<(f64, f64)> {
        match self {
            Base::Exp { rate } => Some((0.0, rate)),
            Base::ShiftedExp { shift, rate } => Some((shift, rate)),
            Base::Pareto { .. } | Base::LogNormal { .. } | Base::Weibull { .. } => None,
        }
    }

    /// `ln f(x)`, in closed form so that it does not underflow where the
    /// density does.
    pub(crate) fn ln_pdf(self, x: f64) -> f64 {
        match self {
            Base::Exp { rate } if x >= 0.0 => rate.ln() - rate * x,
            Base::ShiftedExp { shift, rate } if x >= shift => rate.ln() - rate * (x - shift),
            Base::Pareto { scale, shape } if x >= scale => shape.ln() + shape * scale.ln() - (shape + 1.0) * x.ln(),
            Base::LogNormal { mu, sigma } if x > 0.0 => {
                let z = (x.ln() - mu) / sigma;
                -0.5 * z * z - x.ln() - sigma.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
            }
            Base::Weibull { scale, shape } if x > 0.0 => {
                let l = (x / scale).ln();
                shape.ln() - scale.ln() + (shape - 1.0) * l - (shape * l).exp()
            }
            _ => f64::NEG_INFINITY,
        }
    }

    fn sf(&self, x: f64) -> f64 {
        match *self {
            Base::Exp { rate } => (-rate * x.max(0.0)).exp(),
            Base::ShiftedExp { shift, rate } => (-rate * (x - shift).max(0.0)).exp(),
            Base::Pareto { scale, shape } => (scale / x.max(scale)).powf(shape),
            Base::LogNormal { .. } if x <= 0.0 => 1.0,
            Base::LogNormal { mu, sigma } => 0.5 * erfc((x.ln() - mu) / (sigma * SQRT_2)),
            Base::Weibull { scale, shape } => (-(x.max(0.0) / scale).powf(shape)).exp(),
        }
    }

    /// `P(X ≤ x)`, computed directly so that it keeps its relative accuracy
    /// near the minimum (where `1 − sf` would lose its digits).
    pub(crate) fn cdf(&self, x: f64) -> f64 {
        match *self {
            Base::Exp { rate } if x > 0.0 => -(-rate * x).exp_m1(),
            Base::ShiftedExp { shift, rate } if x > shift => -(-rate * (x - shift)).exp_m1(),
            Base::Pareto { scale, shape } if x > scale => -(shape * (scale / x).ln()).exp_m1(),
            Base::LogNormal { mu, sigma } if x > 0.0 => 0.5 * erfc(-(x.ln() - mu) / (sigma * SQRT_2)),
            Base::Weibull { scale, shape } if x > 0.0 => -(-(x / scale).powf(shape)).exp_m1(),
            _ => 0.0,
        }
    }

    fn pdf(&self, x: f64) -> f64 {
        match *self {
            Base::Exp { rate } if x >= 0.0 => rate * (-rate * x).exp(),
            Base::ShiftedExp { shift, rate } if x >= shift => rate * (-rate * (x - shift)).exp(),
            Base::Pareto { scale, shape } if x >= scale => shape / x * (scale / x).powf(shape),
            Base::LogNormal { mu, sigma } if x > 0.0 => {
                let z = (x.ln() - mu) / sigma;
                (-0.5 * z * z).exp() / (x * sigma * (2.0 * std::f64::consts::PI).sqrt())
            }
            Base::Weibull { scale, shape } if x > 0.0 => {
                let r = (x / scale).powf(shape);
                shape / x * r * (-r).exp()
            }
            _ => 0.0,
        }
    }

    fn quantile(&self, p: f64) -> f64 {
        if p >= 1.0 {
            return f64::INFINITY;
        }
        let p = p.max(0.0);
        match *self {
            Base::Exp { rate } => -(-p).ln_1p() / rate,
            Base::ShiftedExp { shift, rate } => shift - (-p).ln_1p() / rate,
            Base::Pareto { scale, shape } => scale * (1.0 - p).powf(-1.0 / shape),
            Base::LogNormal { mu, sigma } => {
                // Φ⁻¹(p) from whichever tail keeps the digits of p.
                let z = if p < 0.5 {
                    -SQRT_2 * erfc_inv(2.0 * p)
                } else {
                    SQRT_2 * erfc_inv(2.0 * (1.0 - p))
                };
                crate::rng::exp(mu + sigma * z)
            }
            Base::Weibull { scale, shape } => scale * (-(-p).ln_1p()).powf(1.0 / shape),
        }
    }
}

impl Base {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match *self {
            Base::Exp { rate } => <Exp1 as Distribution<f64>>::sample(&Exp1, rng) / rate,
            Base::ShiftedExp { shift, rate } => shift + <Exp1 as Distribution<f64>>::sample(&Exp1, rng) / rate,
            Base::Pareto { scale, shape } => {
                let u: f64 = OpenClosed01.sample(rng);
                scale * u.powf(-1.0 / shape)
            }
            Base::LogNormal { mu, sigma } => {
                let z: f64 = StandardNormal.sample(rng);
                crate::rng::exp(mu + sigma * z)
            }
            // (X/λ)^k is a standard exponential.
            Base::Weibull { scale, shape } => scale * <Exp1 as Distribution<f64>>::sample(&Exp1, rng).powf(1.0 / shape),
        }
    }
}

/// One draw of a worker that draws once, from the stationary law: the base
/// draw, then a uniform for its own state, then one for its group's (the
/// engine draws each state once for all the draws of a worker's iteration
/// and a group's once for all its workers; see `engine::trial`).
impl Distribution<f64> for Dist {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let x = self.base.sample(rng);
        let x = match self.stragglers {
            Some(Stragglers { p_slow, slowdown }) if rng.random::<f64>() < p_slow => x * slowdown,
            _ => x,
        };
        match self.groups {
            Some(Groups { p, slowdown, .. }) if rng.random::<f64>() < p => x * slowdown,
            _ => x,
        }
    }
}

#[cfg(test)]
mod tests;
