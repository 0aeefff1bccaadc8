//! `gcsim fit FILE`: fit the worker-time laws to a trace's recorded times and
//! print the `--dist` string of the best one; for a trace with a `load`
//! column, test the load models and print the best `--load-model` with it.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::Args;

use gcsim::export::Format;
use gcsim::fit::load::{self, LoadTrace};
use gcsim::fit::nccl::NcclFit;
use gcsim::fit::{self, FitReport};
use gcsim::trace::Trace;

use super::notes::note;
use super::output::{self, Output};
use super::{Status, usage};

mod nccl;

/// What each `gcsim fit --format` value writes.
fn format_help(format: Format) -> &'static str {
    match format {
        Format::Table => {
            "Aligned columns, then the line `best: --dist STRING` (--nccl-tests: `flags: ...`) (the default on a terminal)"
        }
        Format::Csv => {
            "One row per fit (per load model, with loads; per size, with --nccl-tests) with a header row, rank 1 first; the best: (flags:) line goes to stderr"
        }
        Format::Json => {
            r#"{"file", "workers", "steps", "times", "ranked_by", "best", "fits": [...], "warnings"}; with loads {..., "loads": [...], "models": [...]}; with --nccl-tests {"file", "aggregation", "ranks", "latency", "bandwidth", "r_squared", "flags", "rows": [...], ...}"#
        }
        // The formats this command writes as every report command does.
        f => output::format_help(f),
    }
}

/// Fit exp, shifted-exp, Pareto, log-normal and Weibull laws to a trace (with loads: the load models).
#[derive(Debug, Clone, Args)]
#[command(after_help = "Pools every recorded time of the trace (a CSV file with columns
step,worker,time), fits each family by maximum likelihood, and ranks the fits
by Kolmogorov-Smirnov distance D = sup|F_n - F| (smallest first): the
log-likelihoods of families with data-dependent supports (shifted-exp, Pareto)
are not comparable with the others, so they and AIC are shown for information.
The table ends with `best: --dist STRING`, ready for the simulating commands.

Calibrating the load model: when the header also names a column `load` (the
worker's work as a multiple of the uncoded share, e.g. batch size / base
batch size; 2 or more distinct loads, each > 0; the time column may be
time_ms or time_us), fit tests the load models instead. Every model is tested on the times of each load, pooled over steps
and workers:
  moments  the per-load means and variances against the model's (fixed:
           mu, s2; scaled: l*mu, l^2*s2; additive: l*mu, l*s2 at whole
           loads; affine: mu + c*l, s2), fitted by minimum chi-square with
           a covariance clustered by step; Q ~ chi2(2k - p) for k loads and
           p parameters (needs finite fourth moments)
  ad       fixed, scaled and affine map the times to one base law (T, T/l,
           T - c*l): the k-sample Anderson-Darling statistic (Scholz &
           Stephens 1987) of those base times across loads, its p-value from
           499 permutations of whole steps between loads; affine's c is the
           one that minimises it, with a bootstrap standard error (200
           resamples of steps, fixed seed)
A model's p = min(1, 2*min(moments_p, ad_p)) (additive: moments_p); it fits
when p >= 0.01. Ranked: the models that fit first, fewer parameters first
(affine contains fixed), then larger p; then the rest by moments Q/df. Also
printed: the exponent b of variance ~ load^b (2 scaled, 1 additive, 0 fixed
and affine). The table ends with `best: --load-model M [--unit-time C] --dist
STRING`, the base law being the best family for the model's base times.
Times within a step are usually correlated: both tests treat steps, not
times, as independent when every load has 10 or more steps (else a warning:
the p-values are then too small if they are correlated). Persistently slow
workers are not allowed for (see gcsim trace).

All-reduce latency and bandwidth: with --nccl-tests FILE in place of the
trace, fit reads the table NVIDIA nccl-tests' all_reduce_perf prints (any
version: with or without the root column; NCCL log lines are skipped) and
fits time = a(p)*latency + b(p)*size/bandwidth over its sizes above 0 bytes
(ring: a = 2(p-1), b = 2(p-1)/p; the out-of-place times unless --in-place)
by least squares of the relative error (weights 1/time^2), so that every
size counts alike. p is --ranks, else the number of `# Rank` lines. The
table gives each size's fitted time and relative error, R2 and the largest
relative error, and ends with `flags: --aggregation A --latency S
--bandwidth B`. The hierarchical all-reduce is not fitted: fit ring to a run
inside one node and to a run with one rank per node.

Examples:
  gcsim fit data/trace-llm-64w.csv
  gcsim sweep --n 64 --s 0..16 --dist <the best: string>
  gcsim fit data/trace-llm-8w.csv --format json --out fits.json
  gcsim fit data/trace-load.csv
  gcsim fit --nccl-tests all_reduce_perf.txt --min-size 1M")]
pub struct FitArgs {
    /// The trace: CSV with a header naming the columns step, worker and time (and load, to fit the load model).
    #[arg(
        value_name = "FILE",
        required_unless_present = "nccl_tests",
        conflicts_with = "nccl_tests"
    )]
    pub file: Option<PathBuf>,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_name = "FORMAT", value_parser = output::format_parser(format_help))]
    pub format: Option<Format>,

    /// Write the fits to FILE (.csv, .json, .txt, .md or .tex), atomically.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// No notes on stderr (what was written; the best: line beside CSV);
    /// warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub nccl: nccl::NcclArgs,
}

/// The input as read: pooled times, times by load, or an all-reduce fitted.
enum Input {
    Pooled(Trace),
    Loads(LoadTrace),
    Nccl(Box<NcclFit>),
}

/// A trace read and a destination checked: ready to fit.
pub struct FitJob {
    input: Input,
    output: Output,
}

/// The permutations' and bootstrap's seed: fixed, so that p-values and
/// standard errors repeat.
const SEED: u64 = 0;

impl TryFrom<FitArgs> for FitJob {
    type Error = anyhow::Error;

    fn try_from(args: FitArgs) -> Result<Self> {
        let output = Output::resolve(args.format, args.out.as_deref())?;
        let Some(file) = &args.file else {
            return Ok(Self {
                input: Input::Nccl(Box::new(args.nccl.fit()?)),
                output,
            });
        };
        args.nccl.refuse_with_trace()?;
        super::output::names::input("FILE", file)?;
        let input = if load::names_load_column(file) {
            Input::Loads(LoadTrace::from_file(file)?)
        } else {
            Input::Pooled(Trace::from_file(file)?)
        };
        Ok(Self { input, output })
    }
}

impl FitJob {
    /// Fits every family (or tests every load model) and writes the ranked
    /// fits; a sample that cannot be fitted is a [`UsageError`](super::UsageError).
    pub fn execute(self) -> Result<Status> {
        match &self.input {
            Input::Pooled(trace) => {
                let (fits, left_out) = fit::fit_all_noting(trace.all())
                    .map_err(|e| usage(anyhow!("{}: {}", trace.file(), trace.fit_failure(&e))))?;
                let mut report = FitReport::new(trace.file(), trace.workers(), trace.steps(), fits);
                if let Some(first) = left_out.first() {
                    // A family the times put out of its law's range is named,
                    // with the row that did it where one time is far off.
                    let families: Vec<&str> = left_out
                        .iter()
                        .filter_map(|e| match e {
                            fit::FitError::Estimate { family, .. } => Some(*family),
                            _ => None,
                        })
                        .collect();
                    report.warnings.push(format!(
                        "{} left out of the ranking: {}",
                        families.join(", "),
                        trace.fit_failure(first)
                    ));
                }
                self.write(
                    &report,
                    &report.warnings,
                    &report.best_line(),
                    "fits",
                    report.fits.len(),
                )
            }
            Input::Loads(trace) => {
                let report = load::fit_loads(trace, SEED).map_err(usage)?;
                let best = report.best_line();
                self.write(&report, &report.warnings, &best, "load models", report.models.len())
            }
            Input::Nccl(fit) => self.write(&**fit, &fit.warnings, &fit.flags_line(), "sizes", fit.rows.len()),
        }
    }

    /// Prints the warnings, writes `report`, and puts the `best:` line where
    /// the format leaves room for it.
    fn write<R: gcsim::export::Export>(
        &self,
        report: &R,
        warnings: &[String],
        best: &str,
        what: &str,
        rows: usize,
    ) -> Result<Status> {
        for w in warnings {
            eprintln!("warning: {w}");
        }
        match self.output.write(report)? {
            Some(path) => {
                if !io::stdout().is_terminal() {
                    writeln!(io::stdout(), "{best}")?;
                }
                note!("wrote {rows} {what} to {}", path.display());
            }
            // Keeps the CSV on stdout parseable; JSON carries `best` itself.
            None if self.output.format == Format::Csv => note!("{best}"),
            None => {}
        }
        Ok(Status::Success)
    }
}
