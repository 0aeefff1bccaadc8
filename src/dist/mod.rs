//! Worker-time distributions (SPEC §2).
//!
//! A [`Dist`] is a base law (exponential, shifted exponential or Pareto type I)
//! optionally mixed with stragglers: with probability `p_slow` a draw is
//! multiplied by `slowdown`, so
//! `F(x) = (1 − p_slow)·F₀(x) + p_slow·F₀(x / slowdown)`.
//!
//! The same type carries the sampler and the exact `cdf`, `sf`, `pdf`,
//! `quantile` and `mean` that the analytic layer uses, so the simulation and
//! the theory share one definition of every law (the rand_distr template:
//! private fields, `new` returning `Result`).

mod parse;

pub use parse::DistError;

use rand::Rng;
use rand::RngExt;
use rand_distr::{Distribution, Exp1, OpenClosed01};

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
        check("rate", rate, rate > 0.0, "a finite number > 0")?;
        Ok(Self::from_base(Base::Exp { rate }))
    }

    /// `shift` (≥ 0) plus an exponential with rate `rate` (> 0).
    pub fn shifted_exp(shift: f64, rate: f64) -> Result<Self, DistError> {
        check("shift", shift, shift >= 0.0, "a finite number >= 0")?;
        check("rate", rate, rate > 0.0, "a finite number > 0")?;
        Ok(Self::from_base(Base::ShiftedExp { shift, rate }))
    }

    /// Pareto type I with minimum `scale` > 0 and tail index `shape` > 0.
    pub fn pareto(scale: f64, shape: f64) -> Result<Self, DistError> {
        check("scale", scale, scale > 0.0, "a finite number > 0")?;
        check("shape", shape, shape > 0.0, "a finite number > 0")?;
        Ok(Self::from_base(Base::Pareto { scale, shape }))
    }

    fn from_base(base: Base) -> Self {
        Self { base, stragglers: None }
    }

    /// Adds stragglers: with probability `p_slow` ∈ [0, 1] a draw is multiplied
    /// by `slowdown` ≥ 1.
    pub fn with_stragglers(self, p_slow: f64, slowdown: f64) -> Result<Self, DistError> {
        check("p_slow", p_slow, (0.0..=1.0).contains(&p_slow), "a number in [0, 1]")?;
        check("slowdown", slowdown, slowdown >= 1.0, "a finite number >= 1")?;
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

    /// The smallest value the law can take.
    pub fn support_min(&self) -> f64 {
        match self.base {
            Base::Exp { .. } => 0.0,
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
    pub fn mean(&self) -> f64 {
        let base = match self.base {
            Base::Exp { rate } => 1.0 / rate,
            Base::ShiftedExp { shift, rate } => shift + 1.0 / rate,
            Base::Pareto { scale, shape } if shape > 1.0 => shape * scale / (shape - 1.0),
            Base::Pareto { .. } => f64::INFINITY,
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
        }
    }

    fn pdf(&self, x: f64) -> f64 {
        match *self {
            Base::Exp { rate } if x >= 0.0 => rate * (-rate * x).exp(),
            Base::ShiftedExp { shift, rate } if x >= shift => rate * (-rate * (x - shift)).exp(),
            Base::Pareto { scale, shape } if x >= scale => shape / x * (scale / x).powf(shape),
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
        let base = Dist::exp(1.0).unwrap();
        assert!(base.with_stragglers(1.5, 2.0).is_err());
        assert!(base.with_stragglers(0.1, 0.5).is_err());
    }
}
