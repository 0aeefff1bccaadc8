//! The parameters of a study, as the library names them in its errors.
//!
//! A library error names the parameter by its key (`comm_time`, `load_model`,
//! …), which is also the key of a scenario file. A front end that spells
//! parameters otherwise (the command line's `--comm-time`) renders the same
//! error through [`Described::describe`] with its own table of names, so no
//! message is ever rewritten by string replacement.

use std::fmt;

/// A parameter of a study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    /// Number of workers.
    N,
    /// The worker-time law of i.i.d. workers, or a trace.
    Dist,
    /// Classes of workers.
    Workers,
    /// Random placement of the worker classes.
    ShufflePlacement,
    /// The load model.
    LoadModel,
    /// Compute time per unit of work of the `affine` load model.
    UnitTime,
    /// Monte Carlo trials.
    Trials,
    /// The master seed.
    Seed,
    /// The schemes.
    Scheme,
    /// Straggler tolerance.
    S,
    /// Message split.
    M,
    /// Recovery threshold.
    K,
    /// Row blocks of A (polynomial, entangled) or the inner split (matdot).
    P,
    /// Column blocks of B (polynomial, entangled).
    Q,
    /// Constant full-gradient transfer time.
    CommTime,
    /// Law of the full-gradient transfer time.
    CommDist,
    /// The master's link.
    Link,
    /// Decoding time.
    DecodeTime,
    /// How the master decides it can decode.
    Decoder,
    /// The generator of the rank decoder's codes.
    Generator,
    /// Degree of approximate gradient coding's regular graph.
    D,
    /// A user's encoding matrix (the `custom` scheme).
    Code,
    /// The deadline of the `timeout` scheme.
    Timeout,
    /// The share of tasks after which `speculative` copies stragglers.
    SpeculateAfter,
    /// The factor on that time at which `speculative` copies start.
    SpeculateFactor,
    /// Partitions per worker of the partial-straggler codes.
    Parts,
    /// Consecutive iterations per trial (per training run, for training).
    Iterations,
    /// The model a training study trains.
    Problem,
    /// The training data: a CSV file or a synthetic spec.
    Data,
    /// The target column of the training data.
    Target,
    /// The share of rows held out for the test metric.
    TestFraction,
    /// L2 regularisation of the training objective.
    L2,
    /// The base step size of gradient descent.
    Step,
    /// How the step changes over the iterations.
    Schedule,
    /// Independent training runs per configuration.
    Repeats,
    /// The training objective to reach.
    TargetLoss,
    /// The test metric to reach.
    TargetMetric,
    /// The cluster size a plan's work per worker is counted at.
    RefN,
    /// The most work a plan lets one worker do, in uncoded shares.
    MaxLoad,
    /// What a plan ranks by.
    Objective,
    /// The price of a GPU-hour.
    GpuHourPrice,
    /// Iterations of one training run, for its cost.
    IterationsPerRun,
    /// The time unit of the worker-time law.
    TimeUnit,
    /// How gradients are summed: the master, or an all-reduce collective.
    Aggregation,
    /// The latency α of one message of a collective.
    Latency,
    /// Each rank's link bandwidth, for a collective.
    Bandwidth,
    /// The size of one full gradient.
    GradientSize,
    /// Gradient buckets overlapped with the work.
    Buckets,
    /// The hybrid-parallel layout dp=D,pp=P,tp=T.
    Parallel,
    /// Microbatches per replica per iteration.
    Microbatches,
    /// The pipeline schedule (gpipe, 1f1b, interleaved:V).
    PipelineSchedule,
    /// A backward op's time over its forward op's.
    BackwardRatio,
    /// The transfer between neighbouring pipeline stages.
    P2pTime,
    /// Each pipeline stage's relative work.
    StageWork,
    /// The law of a microbatch's relative work.
    MicrobatchWork,
    /// The optimizer step after the gradients' sum.
    OptimizerTime,
}

impl Param {
    /// The key that names the parameter in library errors and scenario files.
    pub fn key(self) -> &'static str {
        match self {
            Param::N => "n",
            Param::Dist => "dist",
            Param::Workers => "workers",
            Param::ShufflePlacement => "shuffle_placement",
            Param::LoadModel => "load_model",
            Param::UnitTime => "unit_time",
            Param::Trials => "trials",
            Param::Seed => "seed",
            Param::Scheme => "schemes",
            Param::S => "s",
            Param::M => "m",
            Param::K => "k",
            Param::P => "p",
            Param::Q => "q",
            Param::CommTime => "comm_time",
            Param::CommDist => "comm_dist",
            Param::Link => "link",
            Param::DecodeTime => "decode_time",
            Param::Decoder => "decoder",
            Param::Generator => "generator",
            Param::D => "d",
            Param::Code => "code",
            Param::Timeout => "timeout",
            Param::SpeculateAfter => "speculate_after",
            Param::SpeculateFactor => "speculate_factor",
            Param::Parts => "parts",
            Param::Iterations => "iterations",
            Param::Problem => "problem",
            Param::Data => "data",
            Param::Target => "target",
            Param::TestFraction => "test_fraction",
            Param::L2 => "l2",
            Param::Step => "step",
            Param::Schedule => "schedule",
            Param::Repeats => "repeats",
            Param::TargetLoss => "target_loss",
            Param::TargetMetric => "target_metric",
            Param::RefN => "ref_n",
            Param::MaxLoad => "max_load",
            Param::Objective => "objective",
            Param::GpuHourPrice => "gpu_hour_price",
            Param::IterationsPerRun => "iterations_per_run",
            Param::TimeUnit => "time_unit",
            Param::Aggregation => "aggregation",
            Param::Latency => "latency",
            Param::Bandwidth => "bandwidth",
            Param::GradientSize => "gradient_size",
            Param::Buckets => "buckets",
            Param::Parallel => "parallel",
            Param::Microbatches => "microbatches",
            Param::PipelineSchedule => "schedule",
            Param::BackwardRatio => "backward_ratio",
            Param::P2pTime => "p2p_time",
            Param::StageWork => "stage_work",
            Param::MicrobatchWork => "microbatch_work",
            Param::OptimizerTime => "optimizer_time",
        }
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// How a front end spells a parameter.
pub(crate) type Naming<'a> = &'a dyn Fn(Param) -> String;

/// An error whose message names parameters: `describe` renders it with a
/// front end's names; `Display` renders it with the library's keys.
pub trait Described {
    /// The message, each parameter spelled by `name`.
    fn describe(&self, name: Naming) -> String;
}

/// The library's own spelling: the key.
pub fn keys(p: Param) -> String {
    p.key().to_string()
}

/// A number as a user would write it, for every message that echoes one:
/// `1e300` and `1e-320`, not three hundred digits; `inf`, `NaN` as given.
pub fn plain(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-5..1e16).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `text` on one line: control characters (a newline in a value the user
/// gave, echoed by an error) are written as escapes, `\n`.
pub fn one_line(text: &str) -> String {
    if !text.contains(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Most characters of a value an error quotes (see [`quoted`]).
pub const QUOTED_CHARS: usize = 80;

/// A value read from a file (a trace's field, a header), as an error
/// quotes it: in backticks, on one line (control characters escaped, a NUL
/// as `\0`, by [`one_line`]), and cut after [`QUOTED_CHARS`] characters
/// with an ellipsis and its whole length, so that a 10 MB field does not
/// flood the terminal: `` `1111…` (10000000 characters) ``.
pub fn quoted(text: &str) -> String {
    match cut(text) {
        (shown, None) => format!("`{shown}`"),
        (shown, Some(total)) => format!("`{shown}…` ({total} characters)"),
    }
}

/// [`quoted`] without the backticks, for a list the error runs into its
/// sentence: `step, worker, time`.
pub fn shown(text: &str) -> String {
    match cut(text) {
        (shown, None) => shown,
        (shown, Some(total)) => format!("{shown}… ({total} characters)"),
    }
}

/// `text`'s first [`QUOTED_CHARS`] characters on one line, and its length
/// in characters where it is longer.
fn cut(text: &str) -> (String, Option<usize>) {
    let mut shown = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == QUOTED_CHARS {
            return (shown, Some(text.chars().count()));
        }
        shown += &one_line(c.encode_utf8(&mut [0; 4]));
    }
    (shown, None)
}

#[cfg(test)]
mod one_line_tests {
    use super::{one_line, quoted, shown};

    #[test]
    fn quoted_values_are_escaped_and_cut() {
        assert_eq!(quoted("1.5"), "`1.5`");
        assert_eq!(quoted("1.\u{0}2"), "`1.\\02`");
        let long = "9".repeat(10_000_000);
        let q = quoted(&long);
        assert_eq!(q, format!("`{}…` (10000000 characters)", "9".repeat(80)));
        // Exactly 80 characters are shown whole.
        assert_eq!(quoted(&"é".repeat(80)), format!("`{}`", "é".repeat(80)));
        assert_eq!(
            shown(&"a, ".repeat(30)),
            format!("{}… (90 characters)", &"a, ".repeat(30)[..80])
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(one_line("plain `text`"), "plain `text`");
        assert_eq!(one_line("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert!(!one_line("x\n\u{1b}[31m").contains(char::is_control));
    }
}
