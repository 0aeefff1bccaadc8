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

use thiserror::Error;

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
    fn monotone_transforms() {
        assert_eq!(LoadModel::Scaled.apply(3.0, 2.0), 6.0);
        assert_eq!(LoadModel::Affine { unit_time: 0.5 }.apply(4.0, 1.0), 3.0);
        assert_eq!(LoadModel::Fixed.apply(4.0, 1.0), 1.0);
    }
}
