//! Load models: how a worker's time grows with its load ℓ.
//!
//! - `fixed`: T = X, the model of the harmonic-number formulas of Tandon et
//!   al. 2017;
//! - `scaled`: T = ℓ·X (with a shifted exponential X, Lee et al. 2017);
//! - `additive`: T = X₁ + … + X_⌊ℓ⌋ + frac(ℓ)·X_⌊ℓ⌋+1, one independent draw
//!   per unit of work;
//! - `affine`: T = c·ℓ + X, a deterministic compute time per unit plus a
//!   straggling delay that does not grow with the work.
//!
//! All but `additive` are increasing functions of one draw X per worker, so
//! they preserve the order in which workers finish: one sorted draw serves
//! every load of a sweep.

use std::fmt;

use rand::Rng;
use rand_distr::Distribution;
use thiserror::Error;

use crate::dist::Dist;
use crate::param::{Described, Naming, Param, keys};

/// How a worker's time depends on its load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LoadModel {
    /// T = X.
    Fixed,
    /// T = ℓ·X.
    Scaled,
    /// T = sum of ℓ independent unit draws (fractional part pro rata).
    Additive,
    /// T = c·ℓ + X.
    Affine {
        /// Deterministic time per unit of work, c ≥ 0.
        unit_time: f64,
    },
}

/// Why a load model could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}", self.describe(&keys))]
pub enum LoadModelError {
    /// `affine` without a unit time.
    MissingUnitTime,
    /// A unit time with another model.
    UnusedUnitTime(&'static str),
    /// A negative, NaN or infinite unit time.
    BadUnitTime(f64),
    /// A name that is not a load model.
    UnknownName(String),
}

impl Described for LoadModelError {
    fn describe(&self, name: Naming) -> String {
        let (model, unit) = (name(Param::LoadModel), name(Param::UnitTime));
        match self {
            LoadModelError::MissingUnitTime => {
                format!("{model} affine needs {unit} C, the compute time per unit of work (e.g. {unit} 0.145)")
            }
            LoadModelError::UnusedUnitTime(other) => {
                format!("{unit} applies only to {model} affine (got {model} {other})")
            }
            LoadModelError::BadUnitTime(c) => format!(
                "{unit} {} is out of range; accepted: a number from 0 to 1e100 (rescale the time unit for values outside)",
                crate::dist::plain(*c)
            ),
            LoadModelError::UnknownName(other) => {
                format!(
                    "unknown load model `{}`; accepted: fixed, scaled, additive, affine",
                    crate::param::one_line(other)
                )
            }
        }
    }
}

impl LoadModel {
    /// Names accepted by `--load-model`.
    pub const NAMES: [&'static str; 4] = ["fixed", "scaled", "additive", "affine"];

    /// Builds a model from its name and the optional `--unit-time`.
    pub fn new(name: &str, unit_time: Option<f64>) -> Result<Self, LoadModelError> {
        let model = match (name, unit_time) {
            ("fixed", _) => LoadModel::Fixed,
            ("scaled", _) => LoadModel::Scaled,
            ("additive", _) => LoadModel::Additive,
            ("affine", None) => return Err(LoadModelError::MissingUnitTime),
            ("affine", Some(c)) if !(0.0..=crate::dist::MAX_SCALE).contains(&c) => {
                return Err(LoadModelError::BadUnitTime(c));
            }
            ("affine", Some(c)) => LoadModel::Affine { unit_time: c },
            (other, _) => return Err(LoadModelError::UnknownName(other.to_string())),
        };
        if unit_time.is_some() && model.unit_time().is_none() {
            return Err(LoadModelError::UnusedUnitTime(model.name()));
        }
        Ok(model)
    }

    /// The model's name.
    pub fn name(&self) -> &'static str {
        match self {
            LoadModel::Fixed => "fixed",
            LoadModel::Scaled => "scaled",
            LoadModel::Additive => "additive",
            LoadModel::Affine { .. } => "affine",
        }
    }

    /// The unit time c of `affine`.
    pub fn unit_time(&self) -> Option<f64> {
        match self {
            LoadModel::Affine { unit_time } => Some(*unit_time),
            _ => None,
        }
    }

    /// Whether T is an increasing function of a single draw X per worker.
    pub fn is_monotone(&self) -> bool {
        !matches!(self, LoadModel::Additive)
    }

    /// T as a function of one draw `x` at load `load`, for monotone models.
    ///
    /// # Panics
    /// For `additive`, which has no single-draw form.
    #[inline]
    pub fn apply(&self, load: f64, x: f64) -> f64 {
        match *self {
            LoadModel::Fixed => x,
            LoadModel::Scaled => load * x,
            LoadModel::Affine { unit_time } => unit_time * load + x,
            LoadModel::Additive => panic!("additive load has no single-draw form"),
        }
    }

    /// The draw `x` that [`LoadModel::apply`] takes to `time` at `load`: the
    /// time of the same worker at load 1 (`time`, `time/ℓ` or `time − c·ℓ`),
    /// for monotone models. `gcsim fit` maps a trace's times at every load to
    /// this common base law.
    ///
    /// # Panics
    /// For `additive`, which has no single-draw form.
    pub(crate) fn base_time(&self, load: f64, time: f64) -> f64 {
        match *self {
            LoadModel::Fixed => time,
            LoadModel::Scaled => time / load,
            LoadModel::Affine { unit_time } => time - unit_time * load,
            LoadModel::Additive => panic!("additive load has no single-draw form"),
        }
    }

    /// The mean and variance of T at load ℓ when X has mean `mean` (μ) and
    /// variance `variance` (σ²): fixed (μ, σ²); scaled (ℓμ, ℓ²σ²); affine
    /// (cℓ + μ, σ²); additive (ℓμ, (⌊ℓ⌋ + frac(ℓ)²)·σ²), ⌊ℓ⌋ independent
    /// draws and frac(ℓ) times one more, so ℓσ² at whole loads. Each is
    /// linear in (μ, σ²) and, under affine, in c.
    pub fn moments(&self, load: f64, mean: f64, variance: f64) -> (f64, f64) {
        match *self {
            LoadModel::Fixed => (mean, variance),
            LoadModel::Scaled => (load * mean, load * load * variance),
            LoadModel::Affine { unit_time } => (unit_time * load + mean, variance),
            LoadModel::Additive => {
                let frac = load.fract();
                (load * mean, (load.floor() + frac * frac) * variance)
            }
        }
    }

    /// One worker's time at load `load`, X drawn from `dist`: one draw for
    /// the monotone models, ⌈ℓ⌉ independent draws under additive (the last
    /// weighted by frac(ℓ)), as the engine draws them.
    pub fn sample<R: Rng + ?Sized>(&self, load: f64, dist: &Dist, rng: &mut R) -> f64 {
        if self.is_monotone() {
            return self.apply(load, dist.sample(rng));
        }
        let whole = load.floor() as u64;
        let frac = load - whole as f64;
        let sum: f64 = (0..whole).map(|_| dist.sample(rng)).sum();
        if frac > 0.0 { sum + frac * dist.sample(rng) } else { sum }
    }
}

impl fmt::Display for LoadModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadModel::Affine { unit_time } => write!(f, "affine(unit_time={unit_time})"),
            other => f.write_str(other.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_rejects() {
        assert_eq!(LoadModel::new("fixed", None).unwrap(), LoadModel::Fixed);
        assert_eq!(LoadModel::new("affine", Some(0.5)).unwrap().unit_time(), Some(0.5));
        assert_eq!(
            LoadModel::new("affine", None).unwrap_err(),
            LoadModelError::MissingUnitTime
        );
        assert!(LoadModel::new("affine", Some(-1.0)).is_err());
        assert!(LoadModel::new("affine", Some(f64::NAN)).is_err());
        assert!(
            LoadModel::new("scaled", Some(1.0))
                .unwrap_err()
                .to_string()
                .contains("unit_time applies only to load_model affine")
        );
    }

    #[test]
    fn base_time_inverts_apply() {
        for model in [
            LoadModel::Fixed,
            LoadModel::Scaled,
            LoadModel::Affine { unit_time: 0.3 },
        ] {
            for load in [0.5, 1.0, 2.0, 4.0] {
                let x = 1.7;
                let back = model.base_time(load, model.apply(load, x));
                assert!((back - x).abs() < 1e-12, "{model} at {load}: {back}");
            }
        }
    }

    /// The moments against the sample moments of [`LoadModel::sample`]
    /// (exponential X, μ = σ² = 1): within 5 standard errors.
    #[test]
    fn moments_match_the_sampler() {
        use rand::SeedableRng;
        let dist = Dist::exp(1.0).unwrap();
        let n = 40_000;
        for model in [
            LoadModel::Fixed,
            LoadModel::Scaled,
            LoadModel::Additive,
            LoadModel::Affine { unit_time: 0.5 },
        ] {
            for load in [0.5, 1.0, 2.5, 4.0] {
                let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
                let xs: Vec<f64> = (0..n).map(|_| model.sample(load, &dist, &mut rng)).collect();
                let mean = xs.iter().sum::<f64>() / n as f64;
                let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
                let (m, v) = model.moments(load, 1.0, 1.0);
                let se_mean = (v / n as f64).sqrt();
                // Var of the sample variance ≤ (μ₄ − σ⁴)/n; μ₄ ≤ 9σ⁴ for a sum of exponentials.
                let se_var = (8.0 * v * v / n as f64).sqrt();
                assert!(
                    (mean - m).abs() < 5.0 * se_mean,
                    "{model} at {load}: mean {mean} vs {m}"
                );
                assert!((var - v).abs() < 5.0 * se_var, "{model} at {load}: var {var} vs {v}");
            }
        }
    }

    #[test]
    fn monotone_transforms() {
        assert_eq!(LoadModel::Scaled.apply(3.0, 2.0), 6.0);
        assert_eq!(LoadModel::Affine { unit_time: 0.5 }.apply(4.0, 1.0), 3.0);
        assert_eq!(LoadModel::Fixed.apply(4.0, 1.0), 1.0);
    }
}
