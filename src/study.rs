//! A validated study: one cluster, one law, one load model, the schemes to
//! compare, and how many trials with which seed.

use std::fmt;
use std::sync::Arc;

use thiserror::Error;

use crate::comm::Comm;
use crate::dist::{Base, Dist};
use crate::load::LoadModel;
use crate::scheme::{Params, Scheme, SchemeKind};
use crate::trace::Trace;

/// Who the workers are: where each worker's time comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Workers {
    /// n independent workers of one law.
    Iid(Dist),
    /// Classes of workers in index order (`count` workers of each law, the
    /// first class first), so that frc's groups of consecutive workers and
    /// crc's cyclic placement see the layout; with `shuffle`, a uniformly
    /// random placement of the same classes in every trial.
    Classes {
        /// `(count, law)` per class.
        classes: Vec<(usize, Dist)>,
        /// Random placement per trial.
        shuffle: bool,
    },
    /// Each worker's time bootstrapped from all recorded times of a trace.
    Trace(Arc<Trace>),
    /// Each trial replays one recorded step: the workers take that step's
    /// recorded times (drawn with replacement among the trace's workers
    /// when n differs from their number), so correlated and persistent
    /// stragglers stay in.
    Replay(Arc<Trace>),
}

impl Workers {
    /// The law of worker `i` of `n`, where each worker has one.
    pub fn law_of(&self, i: usize) -> Option<&Dist> {
        match self {
            Workers::Iid(d) => Some(d),
            Workers::Classes { classes, .. } => {
                let mut start = 0;
                classes.iter().find_map(|(count, d)| {
                    start += count;
                    (i < start).then_some(d)
                })
            }
            Workers::Trace(_) | Workers::Replay(_) => None,
        }
    }

    /// The polynomial tail index of worker `i`'s time: the Pareto shape,
    /// infinite for the light-tailed laws and for recorded times.
    pub fn tail_index(&self, i: usize) -> f64 {
        match self.law_of(i).map(Dist::base) {
            Some(Base::Pareto { shape, .. }) => shape,
            _ => f64::INFINITY,
        }
    }
}

impl fmt::Display for Workers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Workers::Iid(d) => write!(f, "{d}"),
            Workers::Classes { classes, shuffle } => {
                let parts: Vec<String> = classes.iter().map(|(c, d)| format!("{c}:{d}")).collect();
                write!(f, "{}", parts.join(" + "))?;
                if *shuffle {
                    write!(f, " (shuffled)")?;
                }
                Ok(())
            }
            Workers::Trace(t) => write!(f, "trace:path={}", t.file()),
            Workers::Replay(t) => write!(f, "replay:path={}", t.file()),
        }
    }
}

/// Most worker draws one trial may hold in memory (additive loads draw one
/// value per unit of work per worker): 2²⁴ values, 128 MiB per thread.
pub const MAX_DRAWS_PER_TRIAL: u64 = 1 << 24;

/// Most worker draws a whole study may make: about a day on two cores.
pub const MAX_TOTAL_DRAWS: u64 = 20_000_000_000_000;

/// Most configurations one study compares.
pub const MAX_CONFIGS: usize = 10_000;

/// Why a study is not valid.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StudyError {
    /// n = 0.
    #[error("--n 0 is out of range; accepted: a whole number >= 1")]
    NoWorkers,
    /// trials = 0.
    #[error("--trials 0 is out of range; accepted: a whole number >= 1")]
    NoTrials,
    /// Nothing to simulate.
    #[error("no configuration to simulate: every value of the sweep was skipped")]
    Empty,
    /// Too many configurations.
    #[error("{0} configurations is more than the limit of {MAX_CONFIGS}; narrow --s, --m or --k")]
    TooManyConfigs(usize),
    /// More workers than one trial may draw.
    #[error(
        "--n {0} is more than the limit of {MAX_DRAWS_PER_TRIAL} workers (one draw each per trial); use a smaller --n"
    )]
    TooManyWorkers(usize),
    /// One trial would not fit in memory.
    #[error(
        "additive load {load} on n={n} workers needs {draws} draws per trial, more than the limit of {MAX_DRAWS_PER_TRIAL}; use a smaller load (larger --k) or another --load-model"
    )]
    TrialTooLarge {
        /// The largest load.
        load: f64,
        /// The number of workers.
        n: usize,
        /// Draws per trial.
        draws: u64,
    },
    /// Worker classes that do not add up to n.
    #[error("the --workers classes add up to {classes} workers, but --n is {n}")]
    ClassCount {
        /// Sum of the class counts.
        classes: usize,
        /// The cluster size.
        n: usize,
    },
    /// A code that `--decoder rank` cannot build.
    #[error("--decoder rank: {0}")]
    Code(String),
    /// Replay under additive loads.
    #[error(
        "replay gives each worker one recorded time per step, but --load-model additive needs an independent draw per unit of work; use --dist trace:path=FILE or another load model"
    )]
    ReplayAdditive,
    /// The whole study would run for days.
    #[error(
        "{draws} worker draws ({trials} trials x {per_trial} per trial) is more than the limit of {MAX_TOTAL_DRAWS} (about a day on two cores); lower --trials"
    )]
    TooMuchWork {
        /// Total draws.
        draws: u128,
        /// Trials.
        trials: u64,
        /// Draws per trial.
        per_trial: u64,
    },
}

/// Everything one simulation needs, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    n: usize,
    workers: Workers,
    load_model: LoadModel,
    schemes: Vec<Scheme>,
    trials: u64,
    seed: u64,
    comm: Comm,
    decoder: Decoder,
}

/// How the master decides that it can decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decoder {
    /// The scheme's recovery rule (any k of n; frc's groups).
    #[default]
    Threshold,
    /// The rank condition of the scheme's real encoding matrix
    /// ([`crate::codes::Code::is_decodable`]), on the arrived set.
    Rank,
}

impl Study {
    /// Validates a study of `n` i.i.d. workers of law `dist`. Every scheme
    /// must be built for the same `n`.
    pub fn new(
        n: usize,
        dist: Dist,
        load_model: LoadModel,
        schemes: Vec<Scheme>,
        trials: u64,
        seed: u64,
    ) -> Result<Self, StudyError> {
        Self::with_workers(n, Workers::Iid(dist), load_model, schemes, trials, seed)
    }

    /// Validates a study of `n` workers described by `workers`.
    pub fn with_workers(
        n: usize,
        workers: Workers,
        load_model: LoadModel,
        schemes: Vec<Scheme>,
        trials: u64,
        seed: u64,
    ) -> Result<Self, StudyError> {
        if n == 0 {
            return Err(StudyError::NoWorkers);
        }
        if trials == 0 {
            return Err(StudyError::NoTrials);
        }
        if schemes.is_empty() {
            return Err(StudyError::Empty);
        }
        if schemes.len() > MAX_CONFIGS {
            return Err(StudyError::TooManyConfigs(schemes.len()));
        }
        assert!(
            schemes.iter().all(|s| s.n() == n),
            "schemes are built for the study's n"
        );
        if let Workers::Classes { classes, .. } = &workers {
            let total: usize = classes.iter().map(|c| c.0).sum();
            if total != n {
                return Err(StudyError::ClassCount { classes: total, n });
            }
        }
        if matches!(workers, Workers::Replay(_)) && load_model == LoadModel::Additive {
            return Err(StudyError::ReplayAdditive);
        }
        let study = Self {
            n,
            workers,
            load_model,
            schemes,
            trials,
            seed,
            comm: Comm::default(),
            decoder: Decoder::Threshold,
        };
        if n as u64 > MAX_DRAWS_PER_TRIAL {
            return Err(StudyError::TooManyWorkers(n));
        }
        let per_trial = study.draws_per_trial();
        if per_trial > MAX_DRAWS_PER_TRIAL {
            return Err(StudyError::TrialTooLarge {
                load: study.max_load(),
                n,
                draws: per_trial,
            });
        }
        let draws = per_trial as u128 * trials as u128;
        if draws > MAX_TOTAL_DRAWS as u128 {
            return Err(StudyError::TooMuchWork {
                draws,
                trials,
                per_trial,
            });
        }
        Ok(study)
    }

    /// Number of workers.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The same study with a communication and decoding model.
    pub fn with_comm(self, comm: Comm) -> Self {
        Self { comm, ..self }
    }

    /// The same study with another decoder; under [`Decoder::Rank`] every
    /// configuration's code must be constructible.
    pub fn with_decoder(self, decoder: Decoder) -> Result<Self, StudyError> {
        if decoder == Decoder::Rank {
            for s in self.schemes.iter().chain(std::iter::once(&self.baseline())) {
                crate::codes::Code::new(s, self.seed).map_err(|e| StudyError::Code(e.to_string()))?;
            }
        }
        Ok(Self { decoder, ..self })
    }

    /// How the master decides that it can decode.
    pub fn decoder(&self) -> Decoder {
        self.decoder
    }

    /// The communication and decoding model.
    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// The law of every worker, when they are i.i.d. of a parametric law.
    pub fn dist(&self) -> Option<&Dist> {
        match &self.workers {
            Workers::Iid(d) => Some(d),
            _ => None,
        }
    }

    /// Who the workers are.
    pub fn workers(&self) -> &Workers {
        &self.workers
    }

    /// The exact law of `scheme`'s iteration time, where the theory gives one
    /// (i.i.d. parametric workers; classes of workers under a one-draw load model).
    pub fn exact_law(&self, scheme: &Scheme) -> Option<crate::analytic::ExactLaw> {
        use crate::analytic::{ExactLaw, classes::ClassLaw, iteration_law};
        match &self.workers {
            Workers::Iid(d) => iteration_law(d, &self.load_model, scheme).map(ExactLaw::Iid),
            w @ Workers::Classes { .. } => {
                let infinite = crate::report::mean_is_infinite(self, scheme);
                ClassLaw::new(w, &self.load_model, scheme, infinite).map(ExactLaw::Classes)
            }
            Workers::Trace(_) | Workers::Replay(_) => None,
        }
    }

    /// The load model.
    pub fn load_model(&self) -> &LoadModel {
        &self.load_model
    }

    /// The configurations, in output order.
    pub fn schemes(&self) -> &[Scheme] {
        &self.schemes
    }

    /// Number of trials.
    pub fn trials(&self) -> u64 {
        self.trials
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The uncoded scheme on this cluster: the baseline of every speedup.
    pub fn baseline(&self) -> Scheme {
        Scheme::new(SchemeKind::Uncoded, self.n, Params::default()).expect("uncoded is valid for every n >= 1")
    }

    /// The largest per-worker load of any configuration (at least 1, the baseline's).
    pub fn max_load(&self) -> f64 {
        self.schemes.iter().map(Scheme::load).fold(1.0, f64::max)
    }

    /// Worker draws per trial: n, or n per unit of the largest load under
    /// `additive` (saturating: a product past `u64::MAX` is over every limit).
    pub fn draws_per_trial(&self) -> u64 {
        let units = match self.load_model {
            LoadModel::Additive => self.max_load().ceil() as u64,
            _ => 1,
        };
        (self.n as u64).saturating_mul(units)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(kind: SchemeKind, n: usize, params: Params) -> Scheme {
        Scheme::new(kind, n, params).unwrap()
    }

    /// Regression: n × load overflowed u64 under `additive` (2³² workers at
    /// load 2³²), wrapped to 0 draws per trial, passed the guard and aborted
    /// on allocation; and a huge n under `fixed` was blamed on an additive load.
    #[test]
    fn huge_clusters_are_errors() {
        let n = 1usize << 32;
        let ce = at(
            SchemeKind::CommEfficient,
            n,
            Params {
                s: Some(0),
                m: Some(n),
                k: None,
            },
        );
        let dist = Dist::exp(1.0).unwrap();
        let err = Study::new(n, dist, LoadModel::Additive, vec![ce], 1, 0).unwrap_err();
        assert_eq!(err, StudyError::TooManyWorkers(n));
        let uncoded = at(SchemeKind::Uncoded, n, Params::default());
        let err = Study::new(n, dist, LoadModel::Fixed, vec![uncoded], 1, 0).unwrap_err();
        assert!(
            err.to_string().starts_with("--n 4294967296 is more than the limit"),
            "{err}"
        );
        let big = 1usize << 20;
        let mds = at(
            SchemeKind::Mds,
            big,
            Params {
                k: Some(1),
                ..Params::default()
            },
        );
        let err = Study::new(big, dist, LoadModel::Additive, vec![mds], 1, 0).unwrap_err();
        assert!(matches!(err, StudyError::TrialTooLarge { .. }), "{err}");
    }
}
