//! Why a plan cannot be made, named by the front end's own parameter names.

use thiserror::Error;

use super::MAX_PLAN_CONFIGS;
use crate::param::{Described, Naming, Param, keys};
use crate::study::{MAX_CONFIGS, MAX_TOTAL_DRAWS, StudyError};

/// Why a plan cannot be made.
#[derive(Debug, Error)]
#[error("{}", self.describe(&keys))]
pub enum PlanError {
    /// `ref_n` with a load model it does not apply to.
    RefNAdditive,
    /// `objective = cost` without what a run's cost needs.
    CostNeedsRun,
    /// No candidate passes the constraints.
    NoCandidate {
        /// The cluster size.
        n: usize,
        /// The bound.
        max_load: f64,
        /// Uncoded's load at n: N0/n.
        smallest: f64,
    },
    /// The whole request is too large, found before any of it is evaluated.
    TooManyCandidates {
        /// The cluster sizes requested.
        sizes: String,
        /// The cluster size at which the count passed the limit.
        n: usize,
    },
    /// Too many candidates at one cluster size.
    TooManyAtN {
        /// The cluster size.
        n: usize,
    },
    /// The simulations of all cluster sizes together would run for days.
    TooMuchWork {
        /// The cluster sizes requested.
        sizes: String,
        /// Total draws over the simulated cluster sizes.
        draws: u128,
        /// Trials per cluster size.
        trials: u64,
    },
    /// Workers whose times cannot be rescaled by N0/n.
    Rescale(#[from] crate::workers::WorkersError),
    /// A study that cannot run.
    Study(#[from] StudyError),
}

impl Described for PlanError {
    fn describe(&self, name: Naming) -> String {
        use Param as P;
        match self {
            PlanError::RefNAdditive => format!(
                "{} rescales the work per worker, which {} additive counts in whole units; use scaled, affine or fixed",
                name(P::RefN),
                name(P::LoadModel)
            ),
            PlanError::CostNeedsRun => format!(
                "{} cost ranks by the GPU-hours of a run (times {}): give {} N and the time unit ({} s|ms|us; a trace is in seconds)",
                name(P::Objective),
                name(P::GpuHourPrice),
                name(P::IterationsPerRun),
                name(P::TimeUnit)
            ),
            PlanError::NoCandidate { n, max_load, smallest } => format!(
                "no configuration at n={n} has load at most {} {}; the smallest is {} (uncoded{})",
                name(P::MaxLoad),
                crate::param::plain(*max_load),
                crate::dist::plain(*smallest),
                if *smallest == 1.0 {
                    String::new()
                } else {
                    format!(", counted in shares of the {} cluster", name(P::RefN))
                }
            ),
            PlanError::TooManyCandidates { sizes, n } => format!(
                "{} {sizes} gives more than the limit of {MAX_PLAN_CONFIGS} candidate configurations in all (passed at n={n}); narrow {}, {} or {}",
                name(P::N),
                name(P::N),
                name(P::Scheme),
                name(P::MaxLoad)
            ),
            PlanError::TooManyAtN { n } => format!(
                "n={n} gives more than the limit of {MAX_CONFIGS} candidate configurations at one cluster size; narrow {} or {}",
                name(P::Scheme),
                name(P::MaxLoad)
            ),
            PlanError::TooMuchWork { sizes, draws, trials } => format!(
                "simulating every cluster size of {} {sizes} takes {draws} worker draws ({trials} trials each), more than the limit of {MAX_TOTAL_DRAWS} (about a day on two cores); lower {} or narrow {}",
                name(P::N),
                name(P::Trials),
                name(P::N)
            ),
            PlanError::Rescale(e) => format!("{}: the workers' times scaled by N0/n: {e}", name(P::RefN)),
            PlanError::Study(e) => e.describe(name),
        }
    }
}
