//! Synthetic data for `--data synthetic:rows=R,features=D,noise=S`.
//!
//! Least squares: x_i ~ N(0, I_D), w* ~ N(0, I_D) (drawn first, from the
//! same stream), y_i = x_iᵀw* + noise·ε_i with ε_i ~ N(0, 1).
//!
//! Logistic regression follows the artificial data of Tandon,
//! Lei, Dimakis & Karampatziakis, "Gradient Coding" (ICML 2017), in their
//! public code (github.com/rashisht1/gradient_coding at 1ba5035,
//! `src/generate_data.py` lines 23–35 and `src/util.py` lines 37–46):
//! β ∈ {−1, +1}^D uniform; a row comes from one of two Gaussians with equal
//! probability, x = (10/√D)·z ± (1.5/D)·β with z ~ N(0, I_D); its label is
//! y ~ Bernoulli(σ(xᵀβ)). Tandon's code encodes the label as ±1 and
//! draws the count of each component once per partition; here the label is
//! 0/1 and each row draws its own component, the same law row by row.
//! `noise` is a temperature: y ~ Bernoulli(σ(xᵀβ / noise)), so noise = 1
//! is Tandon's generator, noise → 0 gives y = 1 exactly when xᵀβ > 0 (noise = 0
//! is that limit) and a larger noise gives noisier labels.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use thiserror::Error;

use super::{Dataset, dot, sigmoid};
use crate::rng::trial_rng;
use crate::train::problem::Problem;

/// Mixed into the seed of a synthetic data set.
const SYNTHETIC_STREAM: u64 = 0x5359_4E54_4800_0002;

/// Tandon et al.'s separation of the two means: μ = ±(ALPHA/D)·β.
const TANDON_ALPHA: f64 = 1.5;

/// Tandon et al.'s within-component standard deviation times √D.
const TANDON_SCALE: f64 = 10.0;

/// The most cells a synthetic data set may hold (800 MB of f64).
const MAX_CELLS: usize = 100_000_000;

impl Dataset {
    /// Synthetic data for `problem` (formulas in the module doc of `synthetic.rs`), a function
    /// of `(problem, spec, seed)` alone. Features are named `x1`, `x2`, ...
    ///
    /// # Panics
    /// If `spec` is out of range (see [`Synthetic::new`]).
    pub fn synthetic(problem: Problem, spec: Synthetic, seed: u64) -> Dataset {
        let spec = Synthetic::new(spec.rows, spec.features, spec.noise).expect("a valid synthetic spec");
        let (rows, d) = (spec.rows, spec.features);
        let mut rng = trial_rng(seed ^ SYNTHETIC_STREAM, 0);
        let normal = |rng: &mut Xoshiro256PlusPlus| -> f64 { StandardNormal.sample(rng) };
        let mut features = Vec::with_capacity(rows * d);
        let mut targets = Vec::with_capacity(rows);
        match problem {
            Problem::LeastSquares => {
                let w: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
                for _ in 0..rows {
                    let start = features.len();
                    features.extend((0..d).map(|_| normal(&mut rng)));
                    let signal = dot(&features[start..], &w);
                    targets.push(signal + spec.noise * normal(&mut rng));
                }
            }
            Problem::Logistic => {
                let beta: Vec<f64> = (0..d).map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 }).collect();
                let (scale, shift) = (TANDON_SCALE / (d as f64).sqrt(), TANDON_ALPHA / d as f64);
                for _ in 0..rows {
                    let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
                    let start = features.len();
                    for &b in &beta {
                        let z = normal(&mut rng);
                        features.push(scale * z + sign * shift * b);
                    }
                    let margin = dot(&features[start..], &beta);
                    let u: f64 = rng.random();
                    let label = if spec.noise == 0.0 {
                        margin > 0.0
                    } else {
                        u < sigmoid(margin / spec.noise)
                    };
                    targets.push(if label { 1.0 } else { 0.0 });
                }
            }
        }
        Dataset {
            names: (1..=d).map(|j| format!("x{j}")).collect(),
            features,
            targets,
            d,
        }
    }
}

/// The synthetic data of `--data synthetic:rows=R,features=D,noise=S`.
/// Defaults: rows = 2000, features = 20, noise = 1 (for logistic
/// regression noise = 1 is Tandon et al.'s generator; see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Synthetic {
    /// Rows, >= 2.
    pub rows: usize,
    /// Features, >= 1.
    pub features: usize,
    /// Label noise, finite and >= 0: the sd of the additive noise (least squares) or the temperature (logistic).
    pub noise: f64,
}

impl Default for Synthetic {
    fn default() -> Self {
        Synthetic {
            rows: 2000,
            features: 20,
            noise: 1.0,
        }
    }
}

/// Why a `synthetic:...` spec is not accepted.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SyntheticError {
    /// Not `synthetic` or `synthetic:key=value,...`.
    #[error("`{0}` is not a synthetic spec; accepted: synthetic or synthetic:rows=R,features=D,noise=S")]
    Syntax(String),
    /// A key other than rows, features, noise.
    #[error("unknown key `{0}` for synthetic data; accepted: rows, features, noise")]
    UnknownKey(String),
    /// The same key twice.
    #[error("key `{0}` is given twice")]
    DuplicateKey(String),
    /// A value that does not parse.
    #[error("`{key}={value}` is not a number; accepted: {accepted}")]
    NotANumber {
        /// The key.
        key: &'static str,
        /// The value as given.
        value: String,
        /// What the key takes.
        accepted: &'static str,
    },
    /// More cells than memory should hold.
    #[error("synthetic data of rows={rows} × features={features} is too large; accepted: rows × features <= 100000000")]
    TooLarge {
        /// Rows asked for.
        rows: usize,
        /// Features asked for.
        features: usize,
    },
    /// A value out of range.
    #[error("`{key}={value}` is out of range; accepted: {accepted}")]
    OutOfRange {
        /// The key.
        key: &'static str,
        /// The value.
        value: String,
        /// What the key takes.
        accepted: &'static str,
    },
}

/// What `rows` takes.
const ROWS_ACCEPTED: &str = "a whole number >= 2";
/// What `features` takes.
const FEATURES_ACCEPTED: &str = "a whole number >= 1";
/// What `noise` takes.
const NOISE_ACCEPTED: &str = "a finite number >= 0";

impl Synthetic {
    /// A validated spec: rows >= 2, features >= 1, rows·features at most
    /// 10^8 cells, noise finite and >= 0.
    pub fn new(rows: usize, features: usize, noise: f64) -> Result<Synthetic, SyntheticError> {
        if rows < 2 {
            return Err(SyntheticError::OutOfRange {
                key: "rows",
                value: rows.to_string(),
                accepted: ROWS_ACCEPTED,
            });
        }
        if features < 1 {
            return Err(SyntheticError::OutOfRange {
                key: "features",
                value: features.to_string(),
                accepted: FEATURES_ACCEPTED,
            });
        }
        if rows.saturating_mul(features) > MAX_CELLS {
            return Err(SyntheticError::TooLarge { rows, features });
        }
        if !(noise.is_finite() && noise >= 0.0) {
            return Err(SyntheticError::OutOfRange {
                key: "noise",
                value: noise.to_string(),
                accepted: NOISE_ACCEPTED,
            });
        }
        Ok(Synthetic { rows, features, noise })
    }
}

impl FromStr for Synthetic {
    type Err = SyntheticError;

    /// Parses `synthetic` or `synthetic:rows=R,features=D,noise=S`, any keys in any order.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let body = match s.strip_prefix("synthetic") {
            Some("") => "",
            Some(rest) => rest
                .strip_prefix(':')
                .ok_or_else(|| SyntheticError::Syntax(s.to_string()))?,
            None => return Err(SyntheticError::Syntax(s.to_string())),
        };
        let default = Synthetic::default();
        let (mut rows, mut features, mut noise) = (None, None, None);
        for pair in body.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| SyntheticError::Syntax(s.to_string()))?;
            let (key, value) = (key.trim(), value.trim());
            let whole = |key: &'static str, accepted: &'static str| {
                crate::range::whole(value)
                    .ok()
                    .and_then(|v| usize::try_from(v).ok())
                    .ok_or_else(|| SyntheticError::NotANumber {
                        key,
                        value: value.to_string(),
                        accepted,
                    })
            };
            let fresh = match key {
                "rows" => rows.replace(whole("rows", ROWS_ACCEPTED)?).is_none(),
                "features" => features.replace(whole("features", FEATURES_ACCEPTED)?).is_none(),
                "noise" => {
                    let v = crate::range::real(value).ok_or_else(|| SyntheticError::NotANumber {
                        key: "noise",
                        value: value.to_string(),
                        accepted: NOISE_ACCEPTED,
                    })?;
                    noise.replace(v).is_none()
                }
                other => return Err(SyntheticError::UnknownKey(other.to_string())),
            };
            if !fresh {
                return Err(SyntheticError::DuplicateKey(key.to_string()));
            }
        }
        Synthetic::new(
            rows.unwrap_or(default.rows),
            features.unwrap_or(default.features),
            noise.unwrap_or(default.noise),
        )
    }
}

impl fmt::Display for Synthetic {
    /// The canonical spec, which [`Synthetic::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "synthetic:rows={},features={},noise={}",
            self.rows, self.features, self.noise
        )
    }
}

/// What `--data` names: a CSV file or synthetic data.
#[derive(Debug, Clone, PartialEq)]
pub enum DataSource {
    /// A CSV file (see [`Dataset::read_csv`]).
    File(PathBuf),
    /// Synthetic data.
    Synthetic(Synthetic),
}

impl FromStr for DataSource {
    type Err = SyntheticError;

    /// `synthetic` or `synthetic:...` is synthetic; anything else is a path
    /// (so a file named `synthetic.csv` stays a file).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "synthetic" || s.trim_start().starts_with("synthetic:") {
            s.parse().map(DataSource::Synthetic)
        } else {
            Ok(DataSource::File(PathBuf::from(s)))
        }
    }
}

impl fmt::Display for DataSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataSource::File(p) => write!(f, "{}", p.display()),
            DataSource::Synthetic(s) => write!(f, "{s}"),
        }
    }
}
