//! `gcsim train`: gradient descent on the simulated timeline, and which
//! configuration reaches the target first.

pub mod shard;

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use gcsim::engine::Progress;
use gcsim::export::Format;
use gcsim::param::Param;
use gcsim::shard::ShardId;
use gcsim::study::Study;
use gcsim::sweep::Expanded;
use gcsim::train::data::DataSource;
use gcsim::train::problem::Problem;
use gcsim::train::report::{TrainConfig, TrainReport, write_curves};
use gcsim::train::run::{DIVERGENCE_FACTOR, MAX_REPEATS, MAX_TRAIN_ITERATIONS, Trained, Trainer};
use gcsim::train::setup::{Recipe, Schedule, Setup};
use gcsim::train::summary::{self, Targets};
use gcsim_figures::plot::loss::loss_chart;

use super::common::ClusterArgs;
use super::figure::{FigureOptions, PlotArgs, check_destination, draw_chart};
use super::flags::named;
use super::flags::{CURVES, DATA, OUT, SCHEME};
use super::job::Engine;
use super::notes::note;
use super::output::{self, Output, write_atomically};
use super::progress::Bar;
use super::sweep::GridArgs;
use super::{Status, number, parse_count_u64, parse_threads, parse_workers};

/// What each `gcsim train --format` value writes.
fn format_help(format: Format) -> &'static str {
    match format {
        Format::Table => "One row per configuration, then the verdict (the default on a terminal)",
        Format::Csv => "One row per configuration with a header row (the default when piped)",
        Format::Json => r#"{"config": {...}, "rows": [...], "verdict": {...}}"#,
        // The formats this command writes as every report command does.
        f => output::format_help(f),
    }
}

/// Train a model by gradient descent on the simulated cluster: which scheme
/// reaches the target loss or test metric first?
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Every configuration trains the same model on the same data. Each iteration
draws the workers' times as `run` does (consecutive iterations, so stragglers
persist where --dist says persist=RHO), finds the messages the master uses
(the recovery rule, the real code's decoder, the deadline, the K mini-batches)
and forms the update from the partial gradients they carry: the exact full
gradient for the exact codes (decoded with their real encoding matrices), the
optimal least-squares decoding for approx-regular and inexact custom codes,
the sum over the received partitions scaled by n/(n-s) for ignore (n/|arrived|
for timeout), n/K times the K mini-batches' gradients for k-batch-sync, and
the stale gradients of each update for k-async and k-batch-async (whose
iterations are updates). Features are standardised with the training rows'
mean and standard deviation, and an intercept is added.

Examples:
  gcsim train --problem logistic --data data/breast-cancer.csv --n 20 \\
      --scheme uncoded,ignore,frc,crc,approx-regular,k-async --s 3 --d 4 \\
      --dist exp:rate=1,p_slow=0.05,slowdown=8,persist=0.9 --repeats 20 \\
      --target-metric 0.95 --plot tta.png
  gcsim train --problem least-squares --data data/diabetes.csv --n 10 \\
      --scheme uncoded,crc,mds --s 2 --load-model scaled --target-loss 1500
  gcsim train --data synthetic:rows=4000,features=20,noise=0.5 --n 40 \\
      --scheme ignore,crc --s 0..8 --iterations 300 --curves curves.csv"
)]
pub struct TrainArgs {
    /// Number of workers (or give the cluster as --workers classes).
    #[arg(long, short, value_name = "N", value_parser = parse_workers, allow_negative_numbers = true)]
    pub n: Option<usize>,

    #[command(flatten)]
    pub grid: GridArgs,

    /// The model: least-squares (linear regression) or logistic (binary classification).
    #[arg(long, default_value = "logistic", value_name = "PROBLEM", value_parser = super::listed(
        [Problem::LeastSquares, Problem::Logistic],
        Problem::name,
        |p| match p {
            Problem::LeastSquares => "f(w) = (1/N) sum (x'w - y)^2 / 2 + l2/2 |w|^2; metric: test mean squared error",
            Problem::Logistic => "f(w) = (1/N) sum log(1 + e^(x'w)) - y x'w + l2/2 |w|^2, y in {0, 1}; metric: test accuracy",
        },
    ))]
    pub problem: Problem,

    /// The data: a CSV file with a header row (numeric columns; the target is
    /// the last column, or --target), or synthetic:rows=R,features=D,noise=S
    /// (least squares: y = x'w* + S·N(0,1); logistic: a two-Gaussian mixture).
    /// Example: --data data/breast-cancer.csv
    #[arg(long, default_value = "synthetic", value_name = "DATA")]
    pub data: DataSource,

    /// The target column of a CSV file [default: the last column].
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,

    /// The share of rows held out for the test metric, 0 < F < 1, at least
    /// one row (a fixed split by --seed).
    #[arg(long, default_value_t = 0.2, value_name = "F", value_parser = number("a number above 0 and below 1, e.g. 0.2"), allow_hyphen_values = true)]
    pub test_fraction: f64,

    /// L2 regularisation λ >= 0 of the training objective.
    #[arg(long, default_value_t = 0.0, value_name = "LAMBDA", value_parser = number("a finite number >= 0"), allow_hyphen_values = true)]
    pub l2: f64,

    /// Iterations of every run (updates, for k-async and k-batch-async).
    #[arg(long, default_value_t = 1000, value_name = "T", value_parser = parse_train_iterations, allow_negative_numbers = true)]
    pub iterations: u64,

    /// The base step size η > 0 [default: 1/L, L the objective's smoothness constant on the training rows].
    #[arg(long, value_name = "ETA", value_parser = number("a finite number > 0"), allow_hyphen_values = true)]
    pub step: Option<f64>,

    /// How the step changes: constant, inv-sqrt (η/√(t+1)) or inverse:decay=D (η/(1+D·t)).
    #[arg(long, default_value = "constant", value_name = "SCHEDULE")]
    pub schedule: Schedule,

    /// Independent runs per configuration (different draws, the same data and split).
    #[arg(long, default_value_t = 10, value_name = "R", value_parser = parse_repeats, allow_negative_numbers = true)]
    pub repeats: u64,

    /// Stop the clock when the training objective is at or below L.
    #[arg(long, value_name = "L", value_parser = number("a finite number"), allow_hyphen_values = true)]
    pub target_loss: Option<f64>,

    /// Stop the clock when the test metric reaches M: accuracy >= M (logistic),
    /// mean squared error <= M (least squares).
    #[arg(long, value_name = "M", value_parser = number("a finite number"), allow_hyphen_values = true)]
    pub target_metric: Option<f64>,

    /// Write every run's trajectory to FILE as CSV: strategy, repeat, iteration, time, loss, metric.
    #[arg(long, value_name = "FILE")]
    pub curves: Option<PathBuf>,

    /// Draw the training loss against wall-clock time to FILE (.png, .svg
    /// or .pdf): the mean over repeats with a 95% band, one line per
    /// configuration, inexact ones dotted. Example: --plot loss.pdf
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    #[command(flatten)]
    pub figure: PlotArgs,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    /// Master seed: the split, the synthetic data, the codes and the draws.
    #[arg(long, default_value_t = 0, value_name = "SEED", value_parser = parse_count_u64, allow_negative_numbers = true)]
    pub seed: u64,

    /// Worker threads, 1 to 1024 [default: all cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = parse_threads, allow_negative_numbers = true)]
    pub threads: Option<usize>,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_name = "FORMAT", value_parser = output::format_parser(format_help))]
    pub format: Option<Format>,

    /// Write the results to FILE (.csv, .json, .txt, .md or .tex), atomically.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Only these columns in the table and the CSV, by their CSV names, in
    /// this order (JSON keeps every field). Example: --columns strategy,time_to_target,final_loss
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub columns: Vec<String>,

    /// No progress bar and no notes on stderr (what was written, values
    /// skipped); warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,

    /// Train only the I-th of K contiguous parts of the repeats and write
    /// them to --out FILE.json; `gcsim merge` of the K files writes what
    /// train without --shard writes, byte for byte. `slurm` takes I and K
    /// from a Slurm job array's task. Example: --shard 2/4 --out part2.json
    #[arg(long, value_name = "I/K", value_parser = super::common::parse_shard, allow_hyphen_values = true)]
    pub shard: Option<ShardId>,
}

/// Iterations of a training run: 1 to [`MAX_TRAIN_ITERATIONS`].
fn parse_train_iterations(s: &str) -> Result<u64, String> {
    super::parse_range(s, 1, MAX_TRAIN_ITERATIONS)
}

/// Repeats: 1 to [`MAX_REPEATS`].
fn parse_repeats(s: &str) -> Result<u64, String> {
    super::parse_range(s, 1, MAX_REPEATS)
}

/// A validated training study.
pub struct TrainJob {
    study: Study,
    setup: Setup,
    targets: Targets,
    config: TrainConfig,
    pub(crate) output: Output,
    curves: Option<PathBuf>,
    plot: Option<PathBuf>,
    figure: FigureOptions,
    engine: Engine,
    /// With `--shard I/K`: which repeats to train, to a partial result.
    shard: Option<ShardId>,
}

impl TryFrom<TrainArgs> for TrainJob {
    type Error = anyhow::Error;

    fn try_from(args: TrainArgs) -> Result<Self> {
        let cluster = &args.cluster;
        let load_model = cluster.load_model()?;
        let grid = &args.grid;
        let custom = grid.custom(args.n)?;
        let (n, workers) = cluster.population(args.n.or(custom.as_ref().map(|m| m.b.nrows())))?;
        let targets = Targets::new(args.target_loss, args.target_metric)?;
        let output = match args.shard {
            Some(shard) => shard::shard_output(&args, shard)?,
            None => Output::resolve(args.format, args.out.as_deref())?
                .with_columns::<gcsim::train::summary::TrainRow>(&args.columns)?,
        };
        if let Some(path) = &args.curves {
            let csv = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
            if !csv {
                anyhow::bail!(
                    "{CURVES} {}: the curves are written as CSV; give a .csv file",
                    path.display()
                );
            }
            output::check(CURVES, path)?;
        }
        if let DataSource::File(path) = &args.data {
            output::names::input(DATA, path)?;
        }
        let figure = args.figure.options(
            args.plot.as_deref(),
            false,
            &[(OUT, args.out.as_deref()), (CURVES, args.curves.as_deref())],
        )?;
        if let Some(path) = &args.plot {
            check_destination(path)?;
        }
        if let Some(k) = grid.kinds(custom.is_some()).into_iter().find(|k| k.is_matmul()) {
            anyhow::bail!(
                "{SCHEME} {k} codes a matrix product C = A*B, not a gradient: train does not run it (use run, sweep or plan for its time, codes for its real code)"
            );
        }
        let Expanded { schemes, skipped } = grid.expand(n, custom.as_ref().map(|m| m.shape()))?;
        for s in &skipped {
            note!("note: skipped {s}");
        }
        let study = Study::with_workers(n, workers, load_model, schemes, args.repeats, args.seed)?
            .with_comm(cluster.comm()?)
            .with_custom(custom)?
            .with_decoder(cluster.decoder)?
            .with_generator(cluster.generator)?
            .with_iterations(args.iterations)?;
        let recipe = Recipe {
            problem: args.problem,
            data: args.data.clone(),
            target: args.target.clone(),
            test_fraction: args.test_fraction,
            l2: args.l2,
            step: args.step,
            schedule: args.schedule,
            seed: args.seed,
        };
        let setup = Setup::prepare(&recipe)?;
        let mut config = TrainConfig::new("train", &study, &recipe, &setup, targets, &named);
        config.time_unit = cluster.time_unit_of(study.workers());
        // Every configuration's partitions and codes, checked before any work.
        Trainer::new(&study, &setup)?;
        Ok(Self {
            study,
            setup,
            targets,
            config,
            output,
            curves: args.curves,
            plot: args.plot,
            figure,
            engine: Engine {
                threads: args.threads,
                quiet: args.quiet,
            },
            shard: args.shard,
        })
    }
}

impl TrainJob {
    /// Trains every configuration, writes the result, the curves and the figure.
    pub fn execute(self) -> Result<Status> {
        if let Some(shard) = self.shard {
            let trainer = Trainer::new(&self.study, &self.setup)?;
            return shard::write_shard(&self.study, &trainer, &self.config, &self.output, self.engine, shard);
        }
        let (report, trained) = train(
            &self.study,
            &self.setup,
            &self.targets,
            self.config,
            self.engine,
            ("", &named(Param::Step)),
        )?;
        let problem = self.setup.problem;
        if let Some(path) = self.output.write(&report)? {
            note!("wrote {}", path.display());
        }
        if self.output.format == Format::Csv
            && let Some(line) = report.verdict_line()
        {
            note!("{line}");
        }
        if let Some(path) = &self.curves {
            write_atomically(path, |out| write_curves(&trained, problem, out))?;
        }
        if let Some(path) = &self.plot {
            draw_chart(&loss_chart(&report, &trained), path, &self.figure)?;
        }
        Ok(Status::Success)
    }
}

/// Trains every configuration of `study` on `setup` (a progress bar unless
/// quiet) and summarises the runs; warns of configurations whose runs
/// diverged, each line after `context`, naming the step `step`.
pub(super) fn train(
    study: &Study,
    setup: &Setup,
    targets: &Targets,
    config: TrainConfig,
    engine: Engine,
    (context, step): (&str, &str),
) -> Result<(TrainReport, Vec<Trained>)> {
    let trainer = Trainer::new(study, setup)?;
    let bar = Bar::counting(engine.quiet, study.trials(), "training", "repeats");
    bar.pass(1, study.trials());
    let trained = engine.pool()?.install(|| trainer.run(&|done| bar.advance(done)));
    bar.finish();
    let report = summarise(&trained, setup.problem, targets, config, (context, step));
    Ok((report, trained))
}

/// The report of every configuration's runs, `trained` towards `targets`;
/// warns of configurations whose runs diverged (with the step they ran at)
/// or stalled, each line after `context`, naming the step flag `step`.
pub(super) fn summarise(
    trained: &[Trained],
    problem: Problem,
    targets: &Targets,
    config: TrainConfig,
    (context, step): (&str, &str),
) -> TrainReport {
    let rows = summary::rows(trained, problem, targets);
    let verdict = summary::verdict(trained, &rows, problem, targets);
    let report = TrainReport { config, rows, verdict };
    let digits = &gcsim::export::Digits::TABLE;
    for r in report.rows.iter().filter(|r| r.diverged > 0.0) {
        eprintln!(
            "warning: {context}{}: {} of the runs diverged at step {} ({}): the training loss passed {} times its start or stopped being finite; give a smaller {step}",
            r.strategy,
            gcsim::export::short(r.diverged, digits),
            gcsim::export::short(report.config.step, digits),
            report.config.step_source,
            gcsim::export::short(DIVERGENCE_FACTOR, digits),
        );
    }
    for r in report.rows.iter().filter(|r| r.stalled > 0.0) {
        eprintln!(
            "warning: {context}{}: {} of the runs stopped at an iteration that never ended (the code could not decode the arrived messages; see `gcsim codes`)",
            r.strategy,
            gcsim::export::short(r.stalled, &gcsim::export::Digits::TABLE)
        );
    }
    report
}
