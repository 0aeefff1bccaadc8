//! `gcsim trace FILE`: who straggles in a measured trace, how often and for
//! how long, and the two-state straggler model fitted to it as a `--dist`;
//! `gcsim trace import` ([`import`]) makes a trace from measured data.

pub mod import;

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use gcsim::engine::Progress;
use gcsim::export::Format;
use gcsim::trace::{Trace, TraceReport};
use gcsim_figures::plot::PlotError;
use gcsim_figures::plot::heatmap::trace_grid;

use super::figure::{FigureOptions, PlotArgs, check_destination, draw_heatmap};
use super::notes::note;
use super::output::{self, Output};
use super::progress::Bar;
use super::{Status, parse_workers, usage};

/// What each `gcsim trace --format` value writes.
fn format_help(format: Format) -> &'static str {
    match format {
        Format::Table => {
            "Per-worker columns, the trace-wide statistics and the model, then `fitted: --dist STRING` (the default on a terminal)"
        }
        Format::Csv => "One row per worker with a header row; the fitted: line goes to stderr",
        Format::Json => {
            r#"{"file", "workers", "steps", "s", "per_worker": [...], "mean_cross_correlation", "mean_autocorrelation", "model": {...}, "fitted", "warnings", "notes"}"#
        }
        // The formats this command writes as every report command does.
        f => output::format_help(f),
    }
}

/// Analyse a measured trace: stragglers per worker, their persistence, and a fitted --dist.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Reads a trace (a CSV file with columns step,worker,time) and reports, per
worker: the mean time and its rank (1 = slowest), the share of steps in which
it is among the s slowest of the step, P(among them at t+1 | among them at
t), and the lag-1 autocorrelation of its times; trace-wide: the mean Pearson
correlation between workers' time series (step-wide slowdowns) and the mean
autocorrelation.

It then fits the two-state straggler model: each worker's slow/normal state
is a Markov chain across steps with stationary probability p_slow and lag-1
autocorrelation persist, and a slow step takes slowdown times a draw of the
base law. Method: a two-state hidden Markov model fitted by Baum-Welch (EM)
to ln(time / step median), the slow state's log time shifted by
ln(slowdown); a slow state counts when its cluster is separable (Ashman's
D >= 2) and BIC prefers it, else p_slow, slowdown and persist are absent.
Standard errors: a bootstrap over workers (200 resamples, fixed seed). The
base law is the best `gcsim fit` family for the normal-state times. The
table ends with `fitted: --dist STRING`, ready for the simulating commands
(persist is left out when it is 0 or below).

`gcsim trace import` converts measured step times (PyTorch profiler traces,
a CSV file of any layout) into a trace; see `gcsim trace import --help`.

Examples:
  gcsim trace data/trace-llm-64w.csv
  gcsim trace data/trace-llm-8w.csv --s 2 --plot heatmap.png
  gcsim trace data/trace-llm-64w.csv --format json --out trace.json
  gcsim trace import --from pytorch rank*.pt.trace.json --out job.csv",
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true,
    subcommand_negates_reqs = true
)]
pub struct TraceArgs {
    /// Make a trace from measured data instead of analysing one.
    #[command(subcommand)]
    pub command: Option<TraceCommand>,

    /// The trace: CSV with a header naming the columns step, worker and
    /// time (or time_ms, time_us, time_s); a file named `import` is `./import`.
    #[arg(value_name = "FILE", required = true)]
    pub file: Option<PathBuf>,

    /// Count a worker as slow in a step when it is among the S slowest, 1 <= S <= workers [default: max(1, n/10)].
    #[arg(long, value_name = "S", value_parser = parse_workers, allow_negative_numbers = true)]
    pub s: Option<usize>,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_name = "FORMAT", value_parser = output::format_parser(format_help))]
    pub format: Option<Format>,

    /// Write the analysis to FILE (.csv, .json, .txt, .md or .tex), atomically.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Draw a heatmap of workers x steps, coloured by time / step median
    /// (.png, .svg or .pdf). Example: --plot heatmap.pdf
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    #[command(flatten)]
    pub figure: PlotArgs,

    /// No notes on stderr (what was written; the fitted --dist beside CSV);
    /// warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,
}

/// What `gcsim trace` does besides analysing a trace.
#[derive(Debug, Clone, Subcommand)]
pub enum TraceCommand {
    /// Convert measured step times (PyTorch profiler traces, a CSV file) into a trace.
    Import(import::ImportArgs),
}

/// `gcsim trace`, validated: an analysis or an import.
pub enum TraceJob {
    /// `gcsim trace FILE`.
    Analyse(Box<Analysis>),
    /// `gcsim trace import`.
    Import(import::ImportJob),
}

/// A trace read and destinations checked: ready to analyse.
pub struct Analysis {
    trace: Trace,
    s: Option<usize>,
    output: Output,
    plot: Option<PathBuf>,
    figure: FigureOptions,
    quiet: bool,
}

/// The bootstrap's seed: fixed, so that the standard errors repeat.
const SEED: u64 = 0;

impl TryFrom<TraceArgs> for TraceJob {
    type Error = anyhow::Error;

    fn try_from(args: TraceArgs) -> Result<Self> {
        let file = match (args.command, args.file) {
            (Some(TraceCommand::Import(import)), _) => return import.try_into().map(TraceJob::Import),
            (None, Some(file)) => file,
            (None, None) => anyhow::bail!("give a trace FILE to analyse, or `gcsim trace import` to make one"),
        };
        let output = Output::resolve(args.format, args.out.as_deref())?;
        let figure = args
            .figure
            .options(args.plot.as_deref(), false, &[(super::flags::OUT, args.out.as_deref())])?;
        if let Some(plot) = &args.plot {
            check_destination(plot)?;
        }
        super::output::names::input("FILE", &file)?;
        let trace = Trace::from_file(&file)?;
        Ok(TraceJob::Analyse(Box::new(Analysis {
            trace,
            s: args.s,
            output,
            plot: args.plot,
            figure,
            quiet: args.quiet,
        })))
    }
}

impl TraceJob {
    /// Runs the analysis or the import.
    pub fn execute(self) -> Result<Status> {
        match self {
            TraceJob::Analyse(analysis) => analysis.execute(),
            TraceJob::Import(import) => import.execute(),
        }
    }
}

impl Analysis {
    /// Analyses the trace, writes the report and draws the heatmap; an `--s`
    /// out of range for the trace is a [`UsageError`](super::UsageError).
    pub fn execute(self) -> Result<Status> {
        let trace = &self.trace;
        let bar = Bar::counting(self.quiet, TraceReport::fits(), "fitting the slow-state model", "fits");
        bar.pass(1, TraceReport::fits());
        let report = TraceReport::with_progress(trace, self.s, SEED, &bar).map_err(usage);
        bar.finish();
        let report = report?;
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        match self.output.write(&report)? {
            Some(path) => {
                if !io::stdout().is_terminal() {
                    writeln!(io::stdout(), "{}", report.fitted_line())?;
                }
                note!("wrote the analysis of {} workers to {}", report.workers, path.display());
            }
            // Keeps the CSV on stdout parseable; JSON carries `fitted` and
            // the notes itself. Where nothing was fitted the notes say why.
            None if self.output.format == Format::Csv => {
                note!("{}", report.fitted_line());
                if report.fitted.is_none() {
                    report.notes.iter().for_each(|n| note!("note: {n}"));
                }
            }
            None => {}
        }
        if let Some(plot) = &self.plot {
            let grid = trace_grid(trace).ok_or_else(|| PlotError::Empty(plot.display().to_string()))?;
            draw_heatmap(&grid, plot, &self.figure)?;
        }
        Ok(Status::Success)
    }
}
