//! The command line's names for the library's parameters and its own
//! options, and the one place where a library error is rendered with them.
//!
//! The library names a parameter by its key (`comm_time`); the command line
//! spells it `--comm-time`, and the Python module, which runs these commands
//! too, `comm_time`. Every message that names an argument names it by a
//! [`Flag`], written as the process's front end spells it ([`Spelling`], set
//! once by [`set_spelling`]), and errors from the library that
//! name parameters implement [`Described`] and are rendered by [`render`]
//! with the same spelling, so no message is ever rewritten by string
//! replacement.

use std::error::Error;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use gcsim::codes::CodeError;
use gcsim::collective::CollectiveError;
use gcsim::comm::CommError;
use gcsim::load::LoadModelError;
use gcsim::param::{Described, Param};
use gcsim::plan::PlanError;
use gcsim::scheme::SchemeError;
use gcsim::study::StudyError;
use gcsim::sweep::SweepError;
use gcsim::trace::TraceAnalysisError;
use gcsim::train::run::TrainError;
use gcsim::train::setup::RecipeError;

/// How a front end spells an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// As a flag: `--load-model` (the binary, and the default).
    Flags,
    /// As a keyword argument: `load_model` (the Python module).
    Keywords,
}

/// Whether this process spells arguments as keywords: one front end runs
/// per process, so the setting is global.
static KEYWORDS: AtomicBool = AtomicBool::new(false);

/// Sets how every later message spells arguments. The Python module calls
/// it when it loads; the binary keeps the default, [`Spelling::Flags`].
pub fn set_spelling(spelling: Spelling) {
    KEYWORDS.store(spelling == Spelling::Keywords, Ordering::Relaxed);
}

/// How this process spells arguments (see [`set_spelling`]).
pub fn spelling() -> Spelling {
    if KEYWORDS.load(Ordering::Relaxed) {
        Spelling::Keywords
    } else {
        Spelling::Flags
    }
}

/// An argument of the command line, by its long name (`load-model`).
/// `Display` writes it as the front end spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Flag(&'static str);

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match spelling() {
            Spelling::Flags => write!(f, "--{}", self.0),
            Spelling::Keywords => {
                for (i, word) in self.0.split('-').enumerate() {
                    if i > 0 {
                        f.write_str("_")?;
                    }
                    f.write_str(word)?;
                }
                Ok(())
            }
        }
    }
}

/// The flag of [`Param::N`].
pub const N: Flag = Flag("n");
/// The flag of [`Param::Dist`].
pub const DIST: Flag = Flag("dist");
/// The flag of [`Param::Workers`].
pub const WORKERS: Flag = Flag("workers");
/// The flag of [`Param::ShufflePlacement`].
pub const SHUFFLE_PLACEMENT: Flag = Flag("shuffle-placement");
/// The flag of [`Param::LoadModel`].
pub const LOAD_MODEL: Flag = Flag("load-model");
/// The flag of [`Param::UnitTime`].
pub const UNIT_TIME: Flag = Flag("unit-time");
/// The flag of [`Param::Trials`].
pub const TRIALS: Flag = Flag("trials");
/// The flag of [`Param::Seed`].
pub const SEED: Flag = Flag("seed");
/// The flag of [`Param::Scheme`].
pub const SCHEME: Flag = Flag("scheme");
/// The flag of [`Param::S`].
pub const S: Flag = Flag("s");
/// The flag of [`Param::M`].
pub const M: Flag = Flag("m");
/// The flag of [`Param::K`].
pub const K: Flag = Flag("k");
/// The flag of [`Param::P`].
pub const P: Flag = Flag("p");
/// The flag of [`Param::Q`].
pub const Q: Flag = Flag("q");
/// The flag of [`Param::CommTime`].
pub const COMM_TIME: Flag = Flag("comm-time");
/// The flag of [`Param::CommDist`].
pub const COMM_DIST: Flag = Flag("comm-dist");
/// The flag of [`Param::Link`].
pub const LINK: Flag = Flag("link");
/// The flag of [`Param::DecodeTime`].
pub const DECODE_TIME: Flag = Flag("decode-time");
/// The flag of [`Param::Decoder`].
pub const DECODER: Flag = Flag("decoder");
/// The flag of [`Param::Generator`].
pub const GENERATOR: Flag = Flag("generator");
/// The flag of [`Param::D`].
pub const D: Flag = Flag("d");
/// The flag of [`Param::Code`].
pub const CODE: Flag = Flag("code");
/// The flag of [`Param::Timeout`].
pub const TIMEOUT: Flag = Flag("timeout");
/// The flag of [`Param::SpeculateAfter`].
pub const SPECULATE_AFTER: Flag = Flag("speculate-after");
/// The flag of [`Param::SpeculateFactor`].
pub const SPECULATE_FACTOR: Flag = Flag("speculate-factor");
/// The flag of [`Param::Parts`].
pub const PARTS: Flag = Flag("parts");
/// The flag of [`Param::Iterations`].
pub const ITERATIONS: Flag = Flag("iterations");
/// The flag of [`Param::Problem`].
pub const PROBLEM: Flag = Flag("problem");
/// The flag of [`Param::Data`].
pub const DATA: Flag = Flag("data");
/// The flag of [`Param::Target`].
pub const TARGET: Flag = Flag("target");
/// The flag of [`Param::TestFraction`].
pub const TEST_FRACTION: Flag = Flag("test-fraction");
/// The flag of [`Param::L2`].
pub const L2: Flag = Flag("l2");
/// The flag of [`Param::Step`].
pub const STEP: Flag = Flag("step");
/// The flag of [`Param::Schedule`].
pub const SCHEDULE: Flag = Flag("schedule");
/// The flag of [`Param::Repeats`].
pub const REPEATS: Flag = Flag("repeats");
/// The flag of [`Param::TargetLoss`].
pub const TARGET_LOSS: Flag = Flag("target-loss");
/// The flag of [`Param::TargetMetric`].
pub const TARGET_METRIC: Flag = Flag("target-metric");
/// The flag of [`Param::RefN`].
pub const REF_N: Flag = Flag("ref-n");
/// The flag of [`Param::MaxLoad`].
pub const MAX_LOAD: Flag = Flag("max-load");
/// The flag of [`Param::Objective`].
pub const OBJECTIVE: Flag = Flag("objective");
/// The flag of [`Param::GpuHourPrice`].
pub const GPU_HOUR_PRICE: Flag = Flag("gpu-hour-price");
/// The flag of [`Param::IterationsPerRun`].
pub const ITERATIONS_PER_RUN: Flag = Flag("iterations-per-run");
/// The flag of [`Param::TimeUnit`].
pub const TIME_UNIT: Flag = Flag("time-unit");
/// The output file.
pub const OUT: Flag = Flag("out");
/// The output format.
pub const FORMAT: Flag = Flag("format");
/// The columns written.
pub const COLUMNS: Flag = Flag("columns");
/// The figure file.
pub const PLOT: Flag = Flag("plot");
/// The figure's data file.
pub const PLOT_DATA: Flag = Flag("plot-data");
/// The figure's size.
pub const PLOT_SIZE: Flag = Flag("plot-size");
/// A PNG figure's resolution.
pub const DPI: Flag = Flag("dpi");
/// The figure's font size.
pub const FONT_SIZE: Flag = Flag("font-size");
/// The flag of [`Param::Aggregation`].
pub const AGGREGATION: Flag = Flag("aggregation");
/// The flag of [`Param::Latency`].
pub const LATENCY: Flag = Flag("latency");
/// The flag of [`Param::Bandwidth`].
pub const BANDWIDTH: Flag = Flag("bandwidth");
/// The flag of [`Param::GradientSize`].
pub const GRADIENT_SIZE: Flag = Flag("gradient-size");
/// The flag of [`Param::Buckets`].
pub const BUCKETS: Flag = Flag("buckets");
/// The flag of [`Param::Parallel`].
pub const PARALLEL: Flag = Flag("parallel");
/// The flag of [`Param::Microbatches`].
pub const MICROBATCHES: Flag = Flag("microbatches");
/// The flag of [`Param::BackwardRatio`].
pub const BACKWARD_RATIO: Flag = Flag("backward-ratio");
/// The flag of [`Param::P2pTime`].
pub const P2P_TIME: Flag = Flag("p2p-time");
pub const ACTIVATION_SIZE: Flag = Flag("activation-size");
pub const P2P_BANDWIDTH: Flag = Flag("p2p-bandwidth");
/// The flag of [`Param::StageWork`].
pub const STAGE_WORK: Flag = Flag("stage-work");
/// The flag of [`Param::MicrobatchWork`].
pub const MICROBATCH_WORK: Flag = Flag("microbatch-work");
/// One sampled iteration of a pipeline job, as a Chrome trace.
pub const TIMELINE: Flag = Flag("timeline");
/// The flag of [`Param::OptimizerTime`].
pub const OPTIMIZER_TIME: Flag = Flag("optimizer-time");
/// A figure without its title.
pub const NO_TITLE: Flag = Flag("no-title");
/// A logarithmic y axis.
pub const LOG_Y: Flag = Flag("log-y");
/// This process's share of the trials.
pub const SHARD: Flag = Flag("shard");
/// A merge into one partial result.
pub const PARTIAL: Flag = Flag("partial");
/// Exact values instead of simulation.
pub const ANALYTIC: Flag = Flag("analytic");
/// A linear model's gradient (the schemes for linear computations).
pub const LINEAR: Flag = Flag("linear");
/// The training curves' file.
pub const CURVES: Flag = Flag("curves");
/// Replicates of a trace's steps.
pub const TRACE_BOOTSTRAP: Flag = Flag("trace-bootstrap");

/// Every flag of this module, for the test that each is one the command line has.
#[cfg(test)]
const ALL: &[Flag] = &[
    N,
    DIST,
    WORKERS,
    SHUFFLE_PLACEMENT,
    LOAD_MODEL,
    UNIT_TIME,
    TRIALS,
    SEED,
    SCHEME,
    S,
    M,
    K,
    P,
    Q,
    COMM_TIME,
    COMM_DIST,
    LINK,
    DECODE_TIME,
    DECODER,
    GENERATOR,
    D,
    CODE,
    TIMEOUT,
    SPECULATE_AFTER,
    SPECULATE_FACTOR,
    PARTS,
    ITERATIONS,
    PROBLEM,
    DATA,
    TARGET,
    TEST_FRACTION,
    L2,
    STEP,
    SCHEDULE,
    REPEATS,
    TARGET_LOSS,
    TARGET_METRIC,
    REF_N,
    MAX_LOAD,
    OBJECTIVE,
    GPU_HOUR_PRICE,
    ITERATIONS_PER_RUN,
    TIME_UNIT,
    AGGREGATION,
    LATENCY,
    BANDWIDTH,
    GRADIENT_SIZE,
    BUCKETS,
    PARALLEL,
    MICROBATCHES,
    BACKWARD_RATIO,
    P2P_TIME,
    STAGE_WORK,
    MICROBATCH_WORK,
    OPTIMIZER_TIME,
    TIMELINE,
    OUT,
    FORMAT,
    COLUMNS,
    PLOT,
    PLOT_DATA,
    PLOT_SIZE,
    DPI,
    FONT_SIZE,
    NO_TITLE,
    LOG_Y,
    SHARD,
    PARTIAL,
    ANALYTIC,
    LINEAR,
    CURVES,
    TRACE_BOOTSTRAP,
];

/// The flag that sets `param`.
pub fn flag(param: Param) -> Flag {
    match param {
        Param::N => N,
        Param::Dist => DIST,
        Param::Workers => WORKERS,
        Param::ShufflePlacement => SHUFFLE_PLACEMENT,
        Param::LoadModel => LOAD_MODEL,
        Param::UnitTime => UNIT_TIME,
        Param::Trials => TRIALS,
        Param::Seed => SEED,
        Param::Scheme => SCHEME,
        Param::S => S,
        Param::M => M,
        Param::K => K,
        Param::P => P,
        Param::Q => Q,
        Param::CommTime => COMM_TIME,
        Param::CommDist => COMM_DIST,
        Param::Link => LINK,
        Param::DecodeTime => DECODE_TIME,
        Param::Decoder => DECODER,
        Param::Generator => GENERATOR,
        Param::D => D,
        Param::Code => CODE,
        Param::Timeout => TIMEOUT,
        Param::SpeculateAfter => SPECULATE_AFTER,
        Param::SpeculateFactor => SPECULATE_FACTOR,
        Param::Parts => PARTS,
        Param::Iterations => ITERATIONS,
        Param::Problem => PROBLEM,
        Param::Data => DATA,
        Param::Target => TARGET,
        Param::TestFraction => TEST_FRACTION,
        Param::L2 => L2,
        Param::Step => STEP,
        Param::Schedule => SCHEDULE,
        Param::Repeats => REPEATS,
        Param::TargetLoss => TARGET_LOSS,
        Param::TargetMetric => TARGET_METRIC,
        Param::RefN => REF_N,
        Param::MaxLoad => MAX_LOAD,
        Param::Objective => OBJECTIVE,
        Param::GpuHourPrice => GPU_HOUR_PRICE,
        Param::IterationsPerRun => ITERATIONS_PER_RUN,
        Param::TimeUnit => TIME_UNIT,
        Param::Aggregation => AGGREGATION,
        Param::Latency => LATENCY,
        Param::Bandwidth => BANDWIDTH,
        Param::GradientSize => GRADIENT_SIZE,
        Param::Buckets => BUCKETS,
        Param::Parallel => PARALLEL,
        Param::Microbatches => MICROBATCHES,
        Param::PipelineSchedule => SCHEDULE,
        Param::BackwardRatio => BACKWARD_RATIO,
        Param::P2pTime => P2P_TIME,
        Param::StageWork => STAGE_WORK,
        Param::MicrobatchWork => MICROBATCH_WORK,
        Param::OptimizerTime => OPTIMIZER_TIME,
    }
}

/// `param` as the front end spells it.
pub fn named(param: Param) -> String {
    flag(param).to_string()
}

/// One error of a chain, with the command line's names where it names parameters.
fn describe(err: &(dyn Error + 'static)) -> String {
    macro_rules! described {
        ($($ty:ty),+) => {
            $(if let Some(e) = err.downcast_ref::<$ty>() {
                return e.describe(&named);
            })+
        };
    }
    described!(
        StudyError,
        CodeError,
        SchemeError,
        SweepError,
        LoadModelError,
        CommError,
        PlanError,
        TraceAnalysisError,
        RecipeError,
        TrainError,
        CollectiveError
    );
    err.to_string()
}

/// The whole error on one line, each cause after a colon (as anyhow's `{:#}`),
/// parameters named by their flags.
pub fn render(err: &anyhow::Error) -> String {
    let parts: Vec<String> = err.chain().map(describe).collect();
    // One line whatever a message echoes of the user's input.
    gcsim::param::one_line(&parts.join(": "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn library_errors_name_flags() {
        let err = anyhow::Error::from(StudyError::NoTrials);
        assert_eq!(
            render(&err),
            "--trials 0 is out of range; accepted: a whole number >= 1"
        );
        let err: anyhow::Result<()> = Err(SchemeError::OutOfRange {
            scheme: gcsim::scheme::SchemeKind::Crc,
            param: Param::S,
            value: 30,
            n: 20,
            accepted: "0..19".into(),
        })
        .context("invalid configuration");
        assert_eq!(
            render(&err.unwrap_err()),
            "invalid configuration: --s 30 is out of range for crc with n=20; accepted: 0..19"
        );
        let plain = anyhow::anyhow!("no parameter here").context("outer");
        assert_eq!(render(&plain), format!("{plain:#}"));
    }

    #[test]
    fn every_flag_is_an_argument_of_the_command_line() {
        use clap::CommandFactory;
        let cli = super::super::Cli::command();
        let longs: Vec<&str> = cli
            .get_subcommands()
            .flat_map(|c| c.get_arguments())
            .filter_map(|a| a.get_long())
            .collect();
        for f in ALL {
            assert!(longs.contains(&f.0), "--{} is no flag of any command", f.0);
        }
        assert_eq!(flag(Param::LoadModel).to_string(), "--load-model");
        assert_eq!(named(Param::Scheme), "--scheme");
    }

    #[test]
    fn code_errors_name_flags() {
        let err = anyhow::Error::from(StudyError::Code(CodeError::TooLarge { n: 5000 }));
        assert!(
            render(&err).starts_with("--decoder rank: --n 5000 is too large"),
            "{}",
            render(&err)
        );
    }
}
