//! What a training study trains on: the data, split and standardised, the
//! objective, and the step and its schedule.

use super::data::{DataError, DataSource, Dataset, Standardizer};
use super::problem::{Objective, Problem};
use crate::dist::plain;
use crate::param::{Described, Naming, Param, keys};

/// The step size over the iterations (updates, for the asynchronous
/// strategies), from the base step η.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// η at every iteration.
    Constant,
    /// η/√(t + 1) at iteration t (counted from 0).
    InvSqrt,
    /// η/(1 + decay·t).
    Inverse {
        /// decay > 0.
        decay: f64,
    },
}

impl Schedule {
    /// The step at iteration `t` (from 0) for base step `base`.
    pub fn at(&self, base: f64, t: u64) -> f64 {
        match *self {
            Schedule::Constant => base,
            Schedule::InvSqrt => base / ((t + 1) as f64).sqrt(),
            Schedule::Inverse { decay } => base / (1.0 + decay * t as f64),
        }
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Constant => f.write_str("constant"),
            Schedule::InvSqrt => f.write_str("inv-sqrt"),
            Schedule::Inverse { decay } => write!(f, "inverse:decay={decay}"),
        }
    }
}

impl std::str::FromStr for Schedule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let accepted = "accepted: constant, inv-sqrt (step/sqrt(t+1)) or inverse:decay=D (step/(1+D*t), D > 0)";
        // Names in any case: `Constant` is `constant`.
        match s.trim().to_ascii_lowercase().as_str() {
            "constant" => Ok(Schedule::Constant),
            "inv-sqrt" => Ok(Schedule::InvSqrt),
            other => {
                let decay = other
                    .strip_prefix("inverse:decay=")
                    .ok_or_else(|| format!("unknown schedule `{s}`; {accepted}"))?;
                match decay.trim().parse::<f64>() {
                    Ok(d) if d.is_finite() && d > 0.0 => Ok(Schedule::Inverse { decay: d }),
                    _ => Err(format!("`{s}`: the decay must be a finite number > 0; {accepted}")),
                }
            }
        }
    }
}

/// The learning problem every configuration trains on.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The training rows (standardised, with the intercept column).
    pub train: Dataset,
    /// The held-out rows, standardised with the training statistics.
    pub test: Dataset,
    /// Least squares or logistic regression.
    pub problem: Problem,
    /// The training objective, with its L2 term.
    pub objective: Objective,
    /// The base step η.
    pub step: f64,
    /// How the step changes.
    pub schedule: Schedule,
}

/// What `Setup::prepare` reads: the data and how to train on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    /// The model.
    pub problem: Problem,
    /// The data.
    pub data: DataSource,
    /// A CSV file's target column (the last if `None`).
    pub target: Option<String>,
    /// The share of rows held out, in [0, 1).
    pub test_fraction: f64,
    /// L2 regularisation λ ≥ 0.
    pub l2: f64,
    /// The base step, or `None` for 1/L.
    pub step: Option<f64>,
    /// The schedule.
    pub schedule: Schedule,
    /// The seed of the split and of synthetic data.
    pub seed: u64,
}

/// Why a recipe cannot be prepared. Parameters are named by their keys
/// (`l2`); a front end renders them with its own names through
/// [`Described`].
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    /// A value out of range.
    #[error("{}", self.describe(&keys))]
    OutOfRange {
        /// The parameter.
        param: Param,
        /// The value given.
        value: f64,
        /// What it accepts.
        accepted: &'static str,
    },
    /// A target column named for synthetic data.
    #[error("{}", self.describe(&keys))]
    TargetOfSynthetic,
    /// No step given, and the objective has no finite smoothness constant.
    #[error("{}", self.describe(&keys))]
    NoDefaultStep {
        /// The smoothness constant L found.
        smoothness: f64,
    },
    /// The split leaves no row for the test metric.
    #[error("{}", self.describe(&keys))]
    NoTestRows {
        /// The rows of the data.
        rows: usize,
    },
    /// The data give no finite standardised features or starting loss.
    #[error("{}", self.describe(&keys))]
    NotFinite {
        /// What is not finite.
        what: &'static str,
    },
    /// The data.
    #[error(transparent)]
    Data(#[from] DataError),
}

impl RecipeError {
    /// The parameter at fault: the target for a missing target column,
    /// the data for other data errors.
    pub fn param(&self) -> Param {
        match self {
            RecipeError::OutOfRange { param, .. } => *param,
            RecipeError::TargetOfSynthetic | RecipeError::Data(DataError::NoTargetColumn { .. }) => Param::Target,
            RecipeError::NoDefaultStep { .. } => Param::Step,
            RecipeError::NoTestRows { .. } => Param::TestFraction,
            RecipeError::NotFinite { .. } | RecipeError::Data(_) => Param::Data,
        }
    }
}

impl Described for RecipeError {
    fn describe(&self, name: Naming) -> String {
        match self {
            RecipeError::OutOfRange { param, value, accepted } => {
                format!(
                    "{} {} is out of range; accepted: {accepted}",
                    name(*param),
                    plain(*value)
                )
            }
            RecipeError::TargetOfSynthetic => format!(
                "{} names a column of a CSV file; synthetic data has its own target",
                name(Param::Target)
            ),
            RecipeError::NoDefaultStep { smoothness } => {
                let step = name(Param::Step);
                format!(
                    "{step}: the objective's smoothness constant is {smoothness} on these data (no default step 1/L); give {step}"
                )
            }
            RecipeError::NoTestRows { rows } => format!(
                "{} leaves none of the {rows} rows for the test metric; accepted: a share that holds out at least one row, e.g. 0.2",
                name(Param::TestFraction)
            ),
            RecipeError::NotFinite { what } => format!(
                "{}: {what} is not finite (values too large for float64); rescale the data",
                name(Param::Data)
            ),
            RecipeError::Data(e) => e.to_string(),
        }
    }
}

/// Accepted by [`Param::TestFraction`].
const FRACTION: &str = "a number above 0 and below 1, e.g. 0.2";
/// Accepted by [`Param::L2`].
const NON_NEGATIVE: &str = "a finite number >= 0";
/// Accepted by [`Param::Step`].
const POSITIVE: &str = "a finite number > 0";

impl Recipe {
    /// Checks the values of the recipe that need no data: the test
    /// fraction, the L2 weight and the step.
    pub fn check(&self) -> Result<(), RecipeError> {
        let out = |param, value, accepted| Err(RecipeError::OutOfRange { param, value, accepted });
        if !(self.test_fraction > 0.0 && self.test_fraction < 1.0) {
            return out(Param::TestFraction, self.test_fraction, FRACTION);
        }
        if !(self.l2.is_finite() && self.l2 >= 0.0) {
            return out(Param::L2, self.l2, NON_NEGATIVE);
        }
        if let Some(step) = self.step.filter(|s| !(s.is_finite() && *s > 0.0)) {
            return out(Param::Step, step, POSITIVE);
        }
        if self.target.is_some() && matches!(self.data, DataSource::Synthetic(_)) {
            return Err(RecipeError::TargetOfSynthetic);
        }
        Ok(())
    }
}

impl Setup {
    /// Reads or draws the data, splits it by the seed, checks the targets
    /// for the problem, standardises the features with the training rows'
    /// statistics (adding the intercept), and takes the step (1/L where
    /// none is given).
    pub fn prepare(recipe: &Recipe) -> Result<Setup, RecipeError> {
        recipe.check()?;
        let data = match &recipe.data {
            DataSource::File(path) => Dataset::read_csv(path, recipe.target.as_deref())?,
            DataSource::Synthetic(spec) => Dataset::synthetic(recipe.problem, *spec, recipe.seed),
        };
        let (mut train, mut test) = data.split(recipe.test_fraction, recipe.seed);
        if test.rows() == 0 {
            return Err(RecipeError::NoTestRows { rows: data.rows() });
        }
        recipe.problem.prepare_targets(&mut train, &mut test)?;
        let standardizer = Standardizer::fit(&train);
        let (train, test) = (standardizer.apply(&train), standardizer.apply(&test));
        let finite = |d: &Dataset| d.features.iter().all(|x| x.is_finite());
        if !(finite(&train) && finite(&test)) {
            return Err(RecipeError::NotFinite {
                what: "a standardised feature",
            });
        }
        let objective = Objective::new(recipe.problem, recipe.l2, train.rows());
        if !objective.loss(&train, &vec![0.0; train.d]).is_finite() {
            return Err(RecipeError::NotFinite {
                what: "the training loss at w = 0",
            });
        }
        let step = match recipe.step {
            Some(step) => step,
            None => {
                let l = objective.smoothness(&train);
                if !(l > 0.0 && l.is_finite()) {
                    return Err(RecipeError::NoDefaultStep { smoothness: l });
                }
                1.0 / l
            }
        };
        Ok(Setup {
            train,
            test,
            problem: recipe.problem,
            objective,
            step,
            schedule: recipe.schedule,
        })
    }
}
