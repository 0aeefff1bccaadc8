//! Why a study is not valid, named by the front end's own parameter names.

use thiserror::Error;

use super::{MAX_CONFIGS, MAX_DRAWS_PER_TRIAL, MAX_ITERATIONS, MAX_TOTAL_DRAWS};
use crate::codes::CodeError;
use crate::param::{Described, Naming, Param, keys};
use crate::scheme::SchemeKind;

/// Why a study is not valid.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}", self.describe(&keys))]
pub enum StudyError {
    /// n = 0.
    NoWorkers,
    /// trials = 0.
    NoTrials,
    /// Nothing to simulate.
    Empty,
    /// Too many configurations.
    TooManyConfigs(usize),
    /// More workers than one trial may draw.
    TooManyWorkers(usize),
    /// One trial would not fit in memory.
    TrialTooLarge {
        /// The largest load.
        load: f64,
        /// The number of workers.
        n: usize,
        /// Draws per trial.
        draws: u64,
    },
    /// The messages of one trial would not fit in memory.
    TooManyMessages {
        /// The scheme that sends the most.
        scheme: String,
        /// The number of workers.
        n: usize,
        /// Messages per trial.
        messages: u64,
    },
    /// The messages of one trial are within the limit, but this process
    /// cannot allocate them (a memory limit, `ulimit -v`).
    MessagesOutOfMemory {
        /// The scheme that sends the most.
        scheme: String,
        /// The number of workers.
        n: usize,
        /// Messages per trial.
        messages: u64,
        /// The bytes asked for.
        bytes: u64,
    },
    /// Worker classes that do not add up to n.
    ClassCount {
        /// Sum of the class counts.
        classes: usize,
        /// The cluster size.
        n: usize,
    },
    /// A code that the rank decoder cannot build.
    Code(CodeError),
    /// An approximate scheme whose matrix (its error is simulated with it)
    /// cannot be built.
    ApproxCode {
        /// The scheme.
        scheme: String,
        /// Why.
        reason: CodeError,
    },
    /// The custom scheme without its matrix.
    NoCustomMatrix,
    /// A generator without the rank decoder, which is what it chooses for.
    GeneratorWithoutRank,
    /// A custom scheme without its matrix, or a matrix whose shape is not
    /// the custom schemes'.
    CustomMatrix(String),
    /// The rank decoder on a scheme it does not decode (inexact, or a
    /// strategy of several messages).
    RankDoesNotAct(SchemeKind),
    /// A generator where no scheme has one to choose.
    GeneratorDoesNotAct(SchemeKind),
    /// Replay under additive loads.
    ReplayAdditive,
    /// Iterations per trial out of range.
    Iterations(u64),
    /// The whole study would run for days.
    TooMuchWork {
        /// Total draws.
        draws: u128,
        /// Trials.
        trials: u64,
        /// Draws per trial.
        per_trial: u64,
    },
    /// A scheme or a model that does not go with a collective.
    UnderCollective {
        /// The collective's algorithm.
        aggregation: &'static str,
        /// What does not go with it.
        conflict: super::Conflict,
    },
    /// Something that does not go with a hybrid-parallel layout.
    UnderParallel(super::ParallelConflict),
}

impl Described for StudyError {
    fn describe(&self, name: Naming) -> String {
        use Param as P;
        match self {
            StudyError::NoWorkers => format!("{} 0 is out of range; accepted: a whole number >= 1", name(P::N)),
            StudyError::NoTrials => format!("{} 0 is out of range; accepted: a whole number >= 1", name(P::Trials)),
            StudyError::Empty => "no configuration to simulate: every value of the sweep was skipped".into(),
            StudyError::TooManyConfigs(count) => format!(
                "{count} configurations is more than the limit of {MAX_CONFIGS}; narrow {}, {} or {}",
                name(P::S),
                name(P::M),
                name(P::K)
            ),
            StudyError::TooManyWorkers(n) => format!(
                "{} {n} is more than the limit of {MAX_DRAWS_PER_TRIAL} workers (one draw each per trial); use a smaller {}",
                name(P::N),
                name(P::N)
            ),
            StudyError::RankDoesNotAct(kind) => format!(
                "{d} rank does not act on {kind}, which decodes by its own rule (the rank decoder decodes the exact schemes that send one message per worker); drop {d} rank or {kind}",
                d = name(P::Decoder)
            ),
            StudyError::GeneratorDoesNotAct(kind) => format!(
                "{g} chooses the code of comm-efficient and mds; {kind} has one code: drop {g}",
                g = name(P::Generator)
            ),
            StudyError::TooManyMessages { scheme, n, messages } => format!(
                "{scheme} on n={n} workers sends {messages} messages per trial, more than the limit of {MAX_DRAWS_PER_TRIAL} (about 50 bytes each, held per thread); use a smaller {} or {}",
                name(P::S),
                name(P::N)
            ),
            StudyError::MessagesOutOfMemory {
                scheme,
                n,
                messages,
                bytes,
            } => format!(
                "{scheme} on n={n} workers holds {messages} messages per trial, about {} MB, which with a run's other buffers is more than this process can allocate (its memory limit); use a smaller {} or {}",
                bytes.div_ceil(1 << 20),
                name(P::S),
                name(P::N)
            ),
            StudyError::TrialTooLarge { load, n, draws } => format!(
                "additive load {load} on n={n} workers needs {draws} draws per trial, more than the limit of {MAX_DRAWS_PER_TRIAL}; use a smaller load (larger {}) or another {}",
                name(P::K),
                name(P::LoadModel)
            ),
            StudyError::ClassCount { classes, n } => format!(
                "the {} classes add up to {classes} workers, but {} is {n}",
                name(P::Workers),
                name(P::N)
            ),
            StudyError::Code(reason) => format!("{} rank: {}", name(P::Decoder), reason.describe(name)),
            StudyError::ApproxCode { scheme, reason } => format!(
                "{scheme} (its approximation error is simulated with its matrix): {}",
                reason.describe(name)
            ),
            StudyError::NoCustomMatrix => format!("the custom scheme needs its matrix: give {} FILE", name(P::Code)),
            StudyError::CustomMatrix(reason) => format!("{}: {reason}", name(P::Code)),
            StudyError::GeneratorWithoutRank => format!(
                "{} chooses the code of the rank decoder: give {} rank too",
                name(P::Generator),
                name(P::Decoder)
            ),
            StudyError::ReplayAdditive => format!(
                "replay gives each worker one recorded time per step, but {} additive needs an independent draw per unit of work; use {} trace:path=FILE or another load model",
                name(P::LoadModel),
                name(P::Dist)
            ),
            StudyError::Iterations(t) => format!(
                "{} {t} is out of range; accepted: a whole number from 1 to {MAX_ITERATIONS}",
                name(P::Iterations)
            ),
            StudyError::TooMuchWork {
                draws,
                trials,
                per_trial,
            } => format!(
                "{draws} worker draws ({trials} trials x {per_trial} per trial) is more than the limit of {MAX_TOTAL_DRAWS} (about a day on two cores); lower {} or {}",
                name(P::Trials),
                name(P::Iterations)
            ),
            StudyError::UnderParallel(conflict) => parallel_reason(conflict, name),
            StudyError::UnderCollective { aggregation, conflict } => {
                format!(
                    "{} {aggregation}: {}",
                    name(P::Aggregation),
                    conflict_reason(*conflict, name)
                )
            }
        }
    }
}

/// Why `conflict` does not go with a collective, and what to do.
fn conflict_reason(conflict: super::Conflict, name: Naming) -> String {
    use super::Conflict as C;
    let master = format!("{} master", name(Param::Aggregation));
    match conflict {
        C::Scheme(kind @ (SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled)) => {
            format!("{kind} codes a matrix product, whose blocks are gathered at a master, not summed; use {master}")
        }
        C::Scheme(kind) => format!(
            "{kind} has no sum over a set of participants fixed by a recovery rule (asynchronous updates, speculative copies, several messages per worker and partial results go to a master); use a gradient code (uncoded, ignore, frc, crc, comm-efficient, mds, approx-regular) or {master}"
        ),
        C::RankDecoder => format!(
            "{} rank decodes at a master; a collective sums the first set the recovery rule accepts: drop {} rank or use {master}",
            name(Param::Decoder),
            name(Param::Decoder)
        ),
        C::Transfer => format!(
            "{} and {} are transfers to a master; a collective's time comes from {}, {} and {}: drop them or use {master}",
            name(Param::CommTime),
            name(Param::CommDist),
            name(Param::Latency),
            name(Param::Bandwidth),
            name(Param::GradientSize)
        ),
        C::SharedLink => format!(
            "{} shared is the master's link; a collective has none: drop it or use {master}",
            name(Param::Link)
        ),
        C::DecodeTime => format!(
            "{} is the master's decoding; under a collective each participant scales its message before the sum: drop it or use {master}",
            name(Param::DecodeTime)
        ),
    }
}

/// Why `conflict` does not go with a hybrid-parallel layout, and what to do.
fn parallel_reason(conflict: &super::ParallelConflict, name: Naming) -> String {
    use super::ParallelConflict as C;
    let parallel = name(Param::Parallel);
    match conflict {
        C::Range(param, reason) => format!("{} {reason}", name(*param)),
        C::Scheme(kind) => format!(
            "{kind} does not code across the replicas of {parallel}; accepted there: uncoded, ignore, frc, crc, mds, timeout"
        ),
        C::Microbatches {
            scheme,
            load,
            microbatches,
        } => format!(
            "{scheme} gives each replica load {load}, {} x {microbatches} microbatches, which is not a whole number from 1 to {}; choose {} so that it is",
            crate::param::plain(*load),
            crate::parallel::MAX_MICROBATCHES,
            name(Param::Microbatches)
        ),
        C::Replay => format!(
            "a replayed trace records one time per worker and step, but {parallel} draws one per rank and microbatch; use {} trace:path=FILE (its times drawn per microbatch)",
            name(Param::Dist)
        ),
        C::LoadModel => format!(
            "under {parallel} a replica's load is its number of microbatches, each drawn; drop {}",
            name(Param::LoadModel)
        ),
        C::Master(param) => format!(
            "{} acts on a master's messages; under {parallel} the stages' gradients are summed by {} (or at no cost): drop {}",
            name(*param),
            name(Param::Aggregation),
            name(*param)
        ),
        C::TooLarge(draws) => format!(
            "one trial of {parallel} needs {draws} draws (ranks x microbatches), more than the limit of {MAX_DRAWS_PER_TRIAL}; use fewer {} or ranks",
            name(Param::Microbatches)
        ),
    }
}
