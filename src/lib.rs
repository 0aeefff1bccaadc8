//! The command line: clap types, converted once into the library's validated
//! types (fd's `Opts` → `Config`).

pub mod codes;
pub mod collective;
pub mod common;
pub mod completions;
pub mod figure;
pub mod fit;
pub mod flags;
pub mod job;
pub mod man;
pub mod merge;
pub mod notes;
pub mod output;
pub mod parallel;
pub mod plan;
pub mod progress;
pub mod run;
pub mod scenario;
pub mod sweep;
pub mod trace;
pub mod train;
pub mod verify;
pub mod whatif;

use std::str::FromStr;

use anyhow::Result;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};

use flags::{CODE, N};
use gcsim::report::{self, RunConfig};
use gcsim::scheme::SchemeKind;
use gcsim::study::Study;

/// Monte Carlo straggler-latency simulator for coded distributed computing.
///
/// Draws per-worker times, applies each gradient-coding scheme's load and
/// recovery rule, and reports the iteration time (mean with its 95% interval,
/// p50/p90/p99/p999) and the speedup over uncoded on the same draws.
#[derive(Debug, Parser)]
#[command(
    name = "gcsim",
    version,
    propagate_version = true,
    // Help wrapped to the terminal, at most 100 columns however wide it is;
    // the examples are written within 80.
    max_term_width = 100,
    after_help = "Examples:
  gcsim sweep --n 100 --s 0..50
  gcsim run --n 100 --scheme crc --s 20 --dist exp:rate=1 --load-model scaled
  gcsim sweep --n 100 --s 0..10 --scheme uncoded,frc,crc --out results.csv
  gcsim fit data/trace-llm-64w.csv    # then --dist with the printed best: line
  gcsim trace data/trace-llm-64w.csv  # who straggles, how persistently
  gcsim train --data data/breast-cancer.csv --n 20 --s 3 \\
      --scheme uncoded,ignore,crc --target-metric 0.95   # which is first at 95%

Run `gcsim <command> --help` for every option of a command."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate one configuration.
    Run(Box<run::RunArgs>),
    /// Simulate schemes over ranges of s, m, k on common random numbers.
    Sweep(Box<sweep::SweepArgs>),
    /// Check the Monte Carlo engine against every exact formula; exit 1 on a mismatch.
    Verify(verify::VerifyArgs),
    /// Run a study from a scenario file; write CSV, JSON and figures to output/`<name>`/.
    Scenario(scenario::ScenarioArgs),
    /// Combine the partial results of --shard runs into one result.
    Merge(merge::MergeArgs),
    /// Rank every configuration of every allowed scheme by an objective: which code, which s?
    Plan(Box<plan::PlanArgs>),
    /// Build a scheme's encoding matrix and check that it decodes from every allowed set, and how stably.
    Codes(codes::CodesArgs),
    /// Fit worker-time laws (and the load model, given loads) to a measured trace and print the best flags.
    Fit(fit::FitArgs),
    /// Analyse a measured trace: stragglers per worker, their persistence, and a fitted --dist.
    Trace(trace::TraceArgs),
    /// Replay a measured pipeline job's per-op trace: its slowdown from stragglers and whose fault it is.
    Whatif(whatif::WhatIfArgs),
    /// Train a model by gradient descent on the simulated cluster: which scheme reaches the target first?
    Train(Box<train::TrainArgs>),
    /// Print a completion script for bash, zsh, fish, powershell or elvish.
    Completions(completions::CompletionsArgs),
    /// Write the manual page (roff) to stdout, or every page to a directory.
    Man(man::ManArgs),
}

impl Command {
    /// Whether `--quiet` was given (commands without the flag are not quiet).
    pub fn quiet(&self) -> bool {
        match self {
            Command::Run(a) => a.common.quiet,
            Command::Sweep(a) => a.common.quiet,
            Command::Plan(a) => a.common.quiet,
            Command::Train(a) => a.quiet,
            Command::Codes(a) => a.quiet,
            Command::Merge(a) => a.quiet,
            Command::Scenario(a) => a.quiet,
            Command::Fit(a) => a.quiet,
            Command::Trace(a) => a.quiet,
            Command::Whatif(a) => a.quiet,
            Command::Verify(_) | Command::Completions(_) | Command::Man(_) => false,
        }
    }
}

/// A validated command, ready to execute: each subcommand's arguments
/// converted once (`TryFrom`) into its clap-free configuration.
pub enum Config {
    /// `run` or `sweep`.
    Job(Box<job::Job>),
    /// `verify`.
    Verify(verify::VerifyJob),
    /// `scenario`.
    Scenario(Box<scenario::ScenarioJob>),
    /// `merge`.
    Merge(Box<merge::MergeJob>),
    /// `merge` of `plan --shard` parts.
    PlanMerge(Box<plan::shard::PlanMergeJob>),
    /// `merge` of `train --shard` parts.
    TrainMerge(Box<train::shard::TrainMergeJob>),
    /// `merge` of `codes --shard` parts.
    CodesMerge(Box<codes::shard::CodesMergeJob>),
    /// `plan`.
    Plan(Box<plan::PlanJob>),
    /// `codes`.
    Codes(Box<codes::CodesJob>),
    /// `fit`.
    Fit(Box<fit::FitJob>),
    /// `trace`.
    Trace(Box<trace::TraceJob>),
    /// `whatif`.
    Whatif(Box<whatif::WhatIfJob>),
    /// `train`.
    Train(Box<train::TrainJob>),
    /// `completions`.
    Completions(completions::CompletionsArgs),
    /// `man`.
    Man(man::ManArgs),
}

impl TryFrom<Command> for Config {
    type Error = anyhow::Error;

    /// Validates everything the command line says; every error is a
    /// [`UsageError`]. Sets the notes' `--quiet` switch first.
    fn try_from(command: Command) -> Result<Self> {
        notes::set_quiet(command.quiet());
        // Every file the command reads or writes, while its flags are checked.
        let _names = output::names::Registry::open();
        let config = match command {
            Command::Run(args) => (*args).try_into().map(|j| Config::Job(Box::new(j))),
            Command::Sweep(args) => (*args).try_into().map(|j| Config::Job(Box::new(j))),
            Command::Verify(args) => args.try_into().map(Config::Verify),
            Command::Scenario(args) => args.try_into().map(|j| Config::Scenario(Box::new(j))),
            // Dispatched on the first file's `format`.
            Command::Merge(args) => merge_config(args),
            Command::Plan(args) => (*args).try_into().map(|j| Config::Plan(Box::new(j))),
            Command::Codes(args) => args.try_into().map(|j| Config::Codes(Box::new(j))),
            Command::Fit(args) => args.try_into().map(|j| Config::Fit(Box::new(j))),
            Command::Trace(args) => args.try_into().map(|j| Config::Trace(Box::new(j))),
            Command::Whatif(args) => args.try_into().map(|j| Config::Whatif(Box::new(j))),
            Command::Train(args) => (*args).try_into().map(|j| Config::Train(Box::new(j))),
            Command::Completions(args) => Ok(Config::Completions(args)),
            Command::Man(args) => Ok(Config::Man(args)),
        };
        config.map_err(usage)
    }
}

impl Config {
    /// Where the report goes, for the commands the Python module runs
    /// (`run`, `sweep`, `plan`, `train`), which may send it to memory (see
    /// [`output::Output::memory`]); `None` for the others.
    #[allow(dead_code, reason = "the Python module's, which compiles these modules too")]
    pub fn output_mut(&mut self) -> Option<&mut output::Output> {
        match self {
            Config::Job(job) => Some(&mut job.output),
            Config::Plan(job) => Some(&mut job.output),
            Config::Train(job) => Some(&mut job.output),
            _ => None,
        }
    }

    /// Does the work and writes the results, every file moved into place
    /// only once all are written (see [`output::transaction`]).
    pub fn execute(self) -> Result<Status> {
        output::transaction(|| self.execute_now())
    }

    fn execute_now(self) -> Result<Status> {
        match self {
            Config::Job(job) => job.execute(),
            Config::Verify(job) => job.execute(),
            Config::Scenario(job) => job.execute(),
            Config::Merge(job) => job.execute(),
            Config::PlanMerge(job) => job.execute(),
            Config::TrainMerge(job) => job.execute(),
            Config::CodesMerge(job) => job.execute(),
            Config::Plan(job) => job.execute(),
            Config::Codes(job) => job.execute(),
            Config::Fit(job) => job.execute(),
            Config::Trace(job) => job.execute(),
            Config::Whatif(job) => job.execute(),
            Config::Train(job) => job.execute(),
            Config::Completions(args) => args.execute(),
            Config::Man(args) => args.execute(),
        }
    }
}

/// The merge of the files `gcsim merge` was given, by the first file's
/// `format`: the parts of `train`, `plan` or `codes`, else of `run` and `sweep`.
fn merge_config(args: merge::MergeArgs) -> Result<Config> {
    merge::record_files(&args)?;
    if train::shard::given(&args)? {
        return args.try_into().map(|j| Config::TrainMerge(Box::new(j)));
    }
    if plan::shard::given(&args)? {
        return args.try_into().map(|j| Config::PlanMerge(Box::new(j)));
    }
    if codes::shard::given(&args)? {
        return args.try_into().map(|j| Config::CodesMerge(Box::new(j)));
    }
    args.try_into().map(|j| Config::Merge(Box::new(j)))
}

/// How a command that ran to the end went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Everything done, every check passed.
    Success,
    /// Done, but a check failed (`verify`, `codes`).
    ChecksFailed,
}

/// An error in what the user gave (a flag, a combination of flags, an input
/// file), whenever it is found. Any other error is a failure while running
/// or writing, and names the file it could not write.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// `err` as a [`UsageError`], with the same message.
pub fn usage(err: impl Into<anyhow::Error>) -> anyhow::Error {
    let err = err.into();
    if err.is::<UsageError>() {
        return err;
    }
    UsageError(flags::render(&err)).into()
}

/// A clap parser for a library enum named by `name` and parsed by `FromStr`:
/// `--help` lists each value with `help(value)`.
pub fn listed<T, const N: usize>(
    all: [T; N],
    name: fn(T) -> &'static str,
    help: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T>
where
    T: Copy + FromStr + Send + Sync + 'static,
    T::Err: std::fmt::Debug,
{
    AnyCase::new(all.map(|v| PossibleValue::new(name(v)).help(help(v))))
        .map(|s: String| s.parse::<T>().expect("clap passes only the listed names"))
}

/// clap's parser of listed names, taking each in any case (`CRC` is
/// `crc`): every name is lower-case, so no two differ only in case. It
/// yields the listed spelling; a name not listed in any case gets clap's
/// error, with its `tip:` naming the nearest.
#[derive(Clone)]
pub struct AnyCase(PossibleValuesParser);

impl AnyCase {
    /// A parser of `values`.
    pub fn new(values: impl IntoIterator<Item = PossibleValue>) -> Self {
        Self(PossibleValuesParser::new(values))
    }
}

impl TypedValueParser for AnyCase {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let listed = value.to_str().and_then(|given| {
            self.0
                .possible_values()
                .into_iter()
                .flatten()
                .find(|v| v.get_name().eq_ignore_ascii_case(given.trim()))
        });
        match listed {
            Some(v) => Ok(v.get_name().to_string()),
            None => self.0.parse_ref(cmd, arg, value),
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        self.0.possible_values()
    }
}

/// `--generator` values, each described.
pub fn generator_values() -> impl TypedValueParser<Value = gcsim::codes::Generator> {
    use gcsim::codes::Generator;
    listed(
        [Generator::Gaussian, Generator::Vandermonde, Generator::Chebyshev],
        Generator::name,
        |g| match g {
            Generator::Gaussian => {
                "I.i.d. standard normal entries (Kadhe et al. 2020): well conditioned; for polynomial the random Khatri-Rao code of Subramaniam et al. 2019"
            }
            Generator::Vandermonde => {
                "Powers of n points in [-1, 1] (Ye & Abbe's polynomial code; the classic MDS code; the papers' matmul codes): ill conditioned as n grows"
            }
            Generator::Chebyshev => {
                "Powers of the n Chebyshev nodes cos((2i+1)pi/2n): the same polynomial code at better-spread nodes, less ill conditioned"
            }
        },
    )
}

/// `--scheme` values, each described.
pub fn scheme_values() -> impl TypedValueParser<Value = SchemeKind> {
    listed(SchemeKind::ALL, SchemeKind::name, scheme_help)
}

/// What `--help` says of each scheme.
fn scheme_help(kind: SchemeKind) -> &'static str {
    kind.facts().help
}

/// The parameters of `--scheme speculative`, shared by `run` and `sweep`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SpeculateArgs {
    /// Speculative: the share Q in (0, 1] of tasks whose results have
    /// arrived before copies are considered [default: 0.75].
    #[arg(long, value_name = "Q", value_parser = number("a share of the tasks in (0, 1], e.g. 0.75"), allow_hyphen_values = true)]
    pub speculate_after: Option<f64>,

    /// Speculative: copies start at F times the arrival of the Q-th share,
    /// F >= 1 [default: 1].
    #[arg(long, value_name = "F", value_parser = number("a number from 1 to 1e6"), allow_hyphen_values = true)]
    pub speculate_factor: Option<f64>,
}

/// A number of workers: a whole number >= 1, with an error that says so.
pub fn parse_workers(s: &str) -> Result<usize, String> {
    parse_within(s, 1, usize::MAX as u64, ">= 1").map(|v| v as usize)
}

/// A whole number >= 0, with an error that says so.
pub fn parse_count(s: &str) -> Result<usize, String> {
    parse_within(s, 0, usize::MAX as u64, ">= 0").map(|v| v as usize)
}

/// A whole number >= 0 that may exceed `usize` (seeds, limits).
pub fn parse_count_u64(s: &str) -> Result<u64, String> {
    parse_at_least(s, 0)
}

/// A number of trials: a whole number >= 1.
pub fn parse_trials(s: &str) -> Result<u64, String> {
    parse_at_least(s, 1)
}

/// Iterations per trial: 1 to [`gcsim::study::MAX_ITERATIONS`].
pub fn parse_iterations(s: &str) -> Result<u64, String> {
    parse_range(s, 1, gcsim::study::MAX_ITERATIONS)
}

/// Most worker threads: more only wait on two or a hundred cores, and
/// starting a hundred thousand takes minutes.
pub const MAX_THREADS: u64 = 1024;

/// A number of worker threads: 1 to [`MAX_THREADS`].
pub fn parse_threads(s: &str) -> Result<usize, String> {
    parse_range(s, 1, MAX_THREADS).map(|t| t as usize)
}

/// A whole number from `min` to `u64::MAX`, with an error that says so.
fn parse_at_least(s: &str, min: u64) -> Result<u64, String> {
    parse_range(s, min, u64::MAX)
}

/// A whole number from `min` to `max`, with an error that says so.
pub fn parse_range(s: &str, min: u64, max: u64) -> Result<u64, String> {
    parse_within(s, min, max, &format!("from {min} to {max}"))
}

/// A whole number from `min` to `max`, written as people write them
/// (`1000000`, `1_000_000`, `1e6`; see [`gcsim::range::whole`]), with an
/// error that says why not and what is accepted (`a whole number {range}`).
fn parse_within(s: &str, min: u64, max: u64, range: &str) -> Result<u64, String> {
    use gcsim::range::{NotWhole, whole};
    let accepted = format!("accepted: a whole number {range}");
    match whole(s) {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        Ok(_) => Err(format!("`{s}` is out of range; {accepted}")),
        Err(NotWhole::TooLarge) => Err(format!("`{s}` is too large; {accepted}")),
        Err(NotWhole::Negative) => Err(format!("`{s}` is negative; {accepted}")),
        Err(NotWhole::NotWhole) => Err(format!(
            "`{s}` is not a whole number; {accepted}, written e.g. 1000000, 1_000_000 or 1e6"
        )),
    }
}

/// What a time flag accepts (`--comm-time`, `--decode-time`, `--unit-time`);
/// the library checks the same range.
pub const TIME_RANGE: &str = "a number from 0 to 1e100 (rescale the time unit for values outside)";
/// What `--gpu-hour-price` accepts.
pub const PRICE_RANGE: &str = "a finite number >= 0";

/// The parser of a float flag: a number as people write it
/// ([`gcsim::range::real`]: blanks trimmed, `2.5e-3`, `-inf`), or an error
/// that says what the flag accepts. The range itself is checked where the
/// value is used, with the same `accepted` text, so a number out of range
/// and a text that is no number are both answered with the range.
pub fn number(accepted: &'static str) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| gcsim::range::real(s).ok_or_else(|| format!("`{s}` is not a number; accepted: {accepted}"))
}

/// The user's encoding matrix of `--code FILE`, checked against `--n`
/// where both are given.
pub fn custom_code(
    path: Option<&std::path::Path>,
    n: Option<usize>,
) -> anyhow::Result<Option<gcsim::codes::custom::CustomMatrix>> {
    let Some(path) = path else { return Ok(None) };
    output::names::input(CODE, path)?;
    let m = gcsim::codes::custom::CustomMatrix::read(path)?;
    if let Some(n) = n
        && n != m.b.nrows()
    {
        anyhow::bail!(
            "{CODE} {} has {} rows (workers) but {N} is {n}; give the matching {N} or none",
            path.display(),
            m.b.nrows()
        );
    }
    Ok(Some(m))
}

/// The output's description of `study`.
pub fn run_config(command: report::Command, study: &Study, schemes: Vec<SchemeKind>) -> RunConfig {
    RunConfig {
        gcsim: env!("CARGO_PKG_VERSION").into(),
        command,
        mode: report::Mode::MonteCarlo,
        n: study.n(),
        sizes: None,
        microbatches: None,
        dist: study.workers().to_string(),
        load_model: study.load_model().name().into(),
        unit_time: study.load_model().unit_time(),
        schemes,
        s: None,
        m: None,
        k: None,
        d: None,
        code: None,
        timeout: None,
        speculate_after: None,
        speculate_factor: None,
        parts: None,
        p: None,
        q: None,
        trials: study.trials(),
        seed: study.seed(),
        quantile_definition: "inverse empirical CDF (type 1)".into(),
        skipped: Vec::new(),
        warnings: (study.workers().notes().into_iter())
            .chain(study.workers().resample_note(study.n()))
            .collect(),
        study: None,
        comm: study.comm().to_string(),
        time_unit: study.workers().is_measured().then_some(gcsim::units::TimeUnit::Seconds),
        costs: Default::default(),
        decoder: study.decoder().name().into(),
        generator: study.generator().map(|g| g.name().into()),
        iterations: study.iterations(),
        trace_bootstrap: None,
        aggregation: study.aggregation().collective().map(|c| c.to_string()),
        parallel: study.parallel().map(|p| p.describe()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// The example commands of `gcsim` and every subcommand, each on one
    /// line: ` \` continuations joined, comments, pipes and redirections cut.
    fn examples() -> Vec<String> {
        let cmd = Cli::command();
        let helps = std::iter::once(&cmd)
            .chain(cmd.get_subcommands())
            .filter_map(|c| c.get_after_help().map(|h| h.to_string()));
        let mut commands = Vec::new();
        for help in helps {
            let Some((_, examples)) = help.split_once("Examples:") else {
                continue;
            };
            let mut command = String::new();
            for line in examples.lines().map(str::trim) {
                command.push_str(line.strip_suffix('\\').unwrap_or(line));
                if line.ends_with('\\') {
                    continue;
                }
                let cut = command.find(['#', '|', '>']).unwrap_or(command.len());
                if command.starts_with("gcsim ") {
                    commands.push(command[..cut].trim().to_string());
                }
                command.clear();
            }
        }
        commands
    }

    /// Every example parses: wrapping one to fit a terminal broke none.
    #[test]
    fn every_example_parses() {
        let commands = examples();
        assert!(commands.len() > 50, "{commands:?}");
        for command in commands {
            // Placeholders such as `--dist <the best: string>`.
            if command.contains('<') {
                continue;
            }
            if let Err(e) = Cli::try_parse_from(command.split_whitespace()) {
                panic!("{command}: {e}");
            }
        }
    }
}
