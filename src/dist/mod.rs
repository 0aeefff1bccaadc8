//! Worker-time distributions.
//!
//! A [`Dist`] is a base law (exponential, shifted exponential, Pareto type I,
//! log-normal or Weibull) optionally mixed with stragglers: with probability `p_slow` a draw is
//! multiplied by `slowdown`, so
//! `F(x) = (1 − p_slow)·F₀(x) + p_slow·F₀(x / slowdown)`.
//!
//! The same type carries the sampler and the exact `cdf`, `sf`, `pdf`,
//! `quantile` and `mean` that the analytic layer uses, so the simulation and
//! the theory share one definition of every law (the rand_distr template:
//! private fields, `new` returning `Result`).

mod parse;

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

/// A straggler mixture: with probability `p_slow` a draw is `slowdown` times slower.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stragglers {
    p_slow: f64,
    slowdown: f64,
}

/// A validated worker-time distribution: a [`Base`] law, optionally with stragglers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dist {
    base: Base,
    stragglers: Option<Stragglers>,
}

/// The largest time scale gcsim computes in: a law's scale (or rate's
/// inverse, or e^mu) within [1/MAX_SCALE, MAX_SCALE]. Far outside it the
/// squares behind standard errors under- or overflow (times near 1e-154
/// gave std_err 0, near 1e154 none); such a law is in the wrong time unit.
pub const MAX_SCALE: f64 = 1e100;

/// What a time-scale parameter accepts.
const SCALE_RANGE: &str = "a number from 1e-100 to 1e100 (rescale the time unit for values outside)";

fn in_scale(x: f64) -> bool {
    (1.0 / MAX_SCALE..=MAX_SCALE).contains(&x)
}

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

    /// Pareto type I with minimum `scale` > 0 and tail index `shape` > 0.
    pub fn pareto(scale: f64, shape: f64) -> Result<Self, DistError> {
        check("scale", scale, in_scale(scale), SCALE_RANGE)?;
        check("shape", shape, shape > 0.0, "a finite number > 0")?;
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

    /// Weibull with `P(X > x) = exp(−(x/scale)^shape)`, `scale` > 0, `shape` > 0.
    pub fn weibull(scale: f64, shape: f64) -> Result<Self, DistError> {
        check("scale", scale, in_scale(scale), SCALE_RANGE)?;
        check("shape", shape, shape > 0.0, "a finite number > 0")?;
        Ok(Self::from_base(Base::Weibull { scale, shape }))
    }

    fn from_base(base: Base) -> Self {
        Self { base, stragglers: None }
    }

    /// Adds stragglers: with probability `p_slow` ∈ [0, 1] a draw is multiplied
    /// by `slowdown` ≥ 1.
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

    /// The law of `factor`·X (`factor` > 0 and finite): the time of a share
    /// of work `factor` times as large under a time-proportional model.
    pub fn scaled(&self, factor: f64) -> Result<Self, DistError> {
        check("factor", factor, factor > 0.0, "a finite number > 0")?;
        let base = match self.base {
            Base::Exp { rate } => Base::Exp { rate: rate / factor },
            Base::ShiftedExp { shift, rate } => Base::ShiftedExp {
                shift: shift * factor,
                rate: rate / factor,
            },
            Base::Pareto { scale, shape } => Base::Pareto {
                scale: scale * factor,
                shape,
            },
            Base::LogNormal { mu, sigma } => Base::LogNormal {
                mu: mu + factor.ln(),
                sigma,
            },
            Base::Weibull { scale, shape } => Base::Weibull {
                scale: scale * factor,
                shape,
            },
        };
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

    /// The polynomial tail index: P(X > t) ~ t^(−index). The Pareto shape;
    /// infinite for the light-tailed laws (a straggler mixture scales the
    /// time, which keeps the index).
    pub fn tail_index(&self) -> f64 {
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
        match self.stragglers {
            None => self.base.pdf(x),
            Some(Stragglers { p_slow, slowdown }) => {
                (1.0 - p_slow) * self.base.pdf(x) + p_slow * self.base.pdf(x / slowdown) / slowdown
            }
        }
    }

    fn mix(&self, x: f64, f: impl Fn(&Base, f64) -> f64) -> f64 {
        match self.stragglers {
            None => f(&self.base, x),
            Some(Stragglers { p_slow, slowdown }) => {
                (1.0 - p_slow) * f(&self.base, x) + p_slow * f(&self.base, x / slowdown)
            }
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
        match self.stragglers {
            None => base,
            Some(Stragglers { p_slow, slowdown }) => base * (1.0 - p_slow + p_slow * slowdown),
        }
    }

    /// The `p`-quantile, `inf{x : F(x) ≥ p}`, for `p` in [0, 1].
    ///
    /// Closed form for the base laws; for a straggler mixture a bisection
    /// between the base quantile and `slowdown` times it, to full precision.
    pub fn quantile(&self, p: f64) -> f64 {
        let Some(Stragglers { p_slow, slowdown }) = self.stragglers else {
            return self.base.quantile(p);
        };
        if p_slow == 0.0 || slowdown == 1.0 {
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
                (mu + sigma * z).exp()
            }
            Base::Weibull { scale, shape } => scale * (-(-p).ln_1p()).powf(1.0 / shape),
        }
    }
}

impl Distribution<f64> for Dist {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let x = match self.base {
            Base::Exp { rate } => <Exp1 as Distribution<f64>>::sample(&Exp1, rng) / rate,
            Base::ShiftedExp { shift, rate } => shift + <Exp1 as Distribution<f64>>::sample(&Exp1, rng) / rate,
            Base::Pareto { scale, shape } => {
                let u: f64 = OpenClosed01.sample(rng);
                scale * u.powf(-1.0 / shape)
            }
            Base::LogNormal { mu, sigma } => {
                let z: f64 = StandardNormal.sample(rng);
                (mu + sigma * z).exp()
            }
            // (X/λ)^k is a standard exponential.
            Base::Weibull { scale, shape } => scale * <Exp1 as Distribution<f64>>::sample(&Exp1, rng).powf(1.0 / shape),
        };
        match self.stragglers {
            Some(Stragglers { p_slow, slowdown }) if rng.random::<f64>() < p_slow => x * slowdown,
            _ => x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn laws() -> Vec<Dist> {
        vec![
            Dist::exp(2.0).unwrap(),
            Dist::shifted_exp(1.5, 0.5).unwrap(),
            Dist::pareto(1.0, 2.5).unwrap(),
            Dist::exp(1.0).unwrap().with_stragglers(0.05, 8.0).unwrap(),
            Dist::pareto(2.0, 1.5).unwrap().with_stragglers(0.3, 4.0).unwrap(),
            Dist::lognormal(0.3, 0.8).unwrap(),
            Dist::lognormal(-2.0, 2.5).unwrap(),
            Dist::weibull(1.5, 0.6).unwrap(),
            Dist::weibull(2.0, 3.5).unwrap(),
            Dist::lognormal(0.0, 0.5).unwrap().with_stragglers(0.05, 8.0).unwrap(),
            Dist::weibull(1.0, 1.7).unwrap().with_stragglers(0.1, 5.0).unwrap(),
        ]
    }

    #[test]
    fn quantile_inverts_cdf() {
        for d in laws() {
            for p in [1e-6, 0.01, 0.3, 0.5, 0.9, 0.99, 0.999_999] {
                let x = d.quantile(p);
                assert!((d.cdf(x) - p).abs() < 1e-12, "{d}: F(Q({p})) = {}", d.cdf(x));
            }
        }
    }

    #[test]
    fn pdf_is_derivative_of_cdf() {
        for d in laws() {
            for p in [0.1, 0.5, 0.93] {
                let x = d.quantile(p);
                let h = 1e-6 * x;
                let numeric = (d.cdf(x + h) - d.cdf(x - h)) / (2.0 * h);
                assert!((numeric - d.pdf(x)).abs() < 1e-5 * d.pdf(x).max(1.0), "{d} at {x}");
            }
        }
    }

    #[test]
    fn means() {
        assert_eq!(Dist::exp(4.0).unwrap().mean(), 0.25);
        assert_eq!(Dist::shifted_exp(1.0, 2.0).unwrap().mean(), 1.5);
        assert_eq!(Dist::pareto(1.0, 3.0).unwrap().mean(), 1.5);
        assert_eq!(Dist::pareto(1.0, 1.0).unwrap().mean(), f64::INFINITY);
        let m = Dist::exp(1.0).unwrap().with_stragglers(0.05, 8.0).unwrap();
        assert!((m.mean() - 1.35).abs() < 1e-15);
        // exp(1 + 0.5²/2) and 2·Γ(1 + 1/2) = √π.
        assert!((Dist::lognormal(1.0, 0.5).unwrap().mean() - 1.125f64.exp()).abs() < 1e-14);
        let w = Dist::weibull(2.0, 2.0).unwrap().mean();
        assert!((w - std::f64::consts::PI.sqrt()).abs() < 1e-14, "{w}");
        // Shape 1 is the exponential with rate 1/scale.
        assert!((Dist::weibull(3.0, 1.0).unwrap().mean() - 3.0).abs() < 1e-14);
    }

    /// Reference values: the log-normal's quartiles are `exp(μ ± 0.6744897501960817σ)`
    /// (Φ⁻¹(0.75) to 16 digits); Weibull shape 1 is the exponential.
    #[test]
    fn new_laws_against_reference_values() {
        let d = Dist::lognormal(0.5, 2.0).unwrap();
        let q3 = (0.5 + 2.0 * 0.674_489_750_196_081_7f64).exp();
        assert!((d.quantile(0.75) - q3).abs() < 1e-13 * q3, "{}", d.quantile(0.75));
        assert!((d.cdf(0.5f64.exp()) - 0.5).abs() < 1e-15);
        // Φ(1) = 0.8413447460685429 (Abramowitz & Stegun table 26.1).
        let x = (0.5f64 + 2.0).exp();
        assert!((d.cdf(x) - 0.841_344_746_068_542_9).abs() < 1e-15, "{}", d.cdf(x));
        let w = Dist::weibull(2.0, 1.0).unwrap();
        let e = Dist::exp(0.5).unwrap();
        for x in [0.01, 1.0, 7.0, 40.0] {
            assert!((w.sf(x) - e.sf(x)).abs() < 1e-15 * e.sf(x), "{x}");
            assert!((w.pdf(x) - e.pdf(x)).abs() < 1e-15 * e.pdf(x).max(1e-300), "{x}");
        }
        assert_eq!(Dist::weibull(1.0, 2.0).unwrap().support_min(), 0.0);
    }

    /// Kolmogorov–Smirnov test of every sampler against its own CDF
    /// (rand_distr's `distr_test` pattern). With 20 000 draws the 0.1% critical
    /// value of √N·D is 1.95; a wrong rate, shift or mixture weight of even a
    /// few percent is far above it.
    #[test]
    fn samplers_match_their_cdf() {
        let n = 20_000;
        for (i, d) in laws().into_iter().enumerate() {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(42 + i as u64);
            let mut xs: Vec<f64> = (0..n).map(|_| d.sample(&mut rng)).collect();
            xs.sort_by(f64::total_cmp);
            let mut dmax: f64 = 0.0;
            for (j, &x) in xs.iter().enumerate() {
                let f = d.cdf(x);
                dmax = dmax.max((f - j as f64 / n as f64).abs());
                dmax = dmax.max(((j + 1) as f64 / n as f64 - f).abs());
            }
            let stat = dmax * (n as f64).sqrt();
            assert!(stat < 1.95, "{d}: KS statistic {stat}");
        }
    }

    #[test]
    fn scaling_scales_every_quantile() {
        for d in laws() {
            let s = d.scaled(2.5).unwrap();
            for p in [0.1, 0.5, 0.99] {
                assert!(
                    (s.quantile(p) - 2.5 * d.quantile(p)).abs() < 1e-9 * d.quantile(p),
                    "{d}"
                );
            }
        }
    }

    #[test]
    fn invalid_parameters_name_the_key() {
        let err = Dist::exp(0.0).unwrap_err();
        assert!(err.to_string().contains("rate"), "{err}");
        assert!(Dist::shifted_exp(-1.0, 1.0).is_err());
        assert!(Dist::pareto(1.0, f64::NAN).is_err());
        assert!(Dist::pareto(f64::INFINITY, 1.0).is_err());
        assert!(Dist::lognormal(0.0, 0.0).unwrap_err().to_string().contains("sigma"));
        assert!(Dist::lognormal(f64::NAN, 1.0).unwrap_err().to_string().contains("mu"));
        assert!(Dist::weibull(1.0, -1.0).unwrap_err().to_string().contains("shape"));
        assert!(Dist::weibull(0.0, 1.0).unwrap_err().to_string().contains("scale"));
        let base = Dist::exp(1.0).unwrap();
        assert!(base.with_stragglers(1.5, 2.0).is_err());
        assert!(base.with_stragglers(0.1, 0.5).is_err());
    }
}
