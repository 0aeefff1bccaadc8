//! `gcsim fit FILE`: fit the worker-time laws to a trace's recorded times and
//! print the `--dist` string of the best one.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use gcsim::export::Format;
use gcsim::fit::{self, FitReport};
use gcsim::trace::Trace;

use super::UsageError;
use super::common::{FormatArg, resolve_output};
use super::job::persist;

/// `gcsim fit --format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FitFormatArg {
    /// Aligned columns, then the line `best: --dist STRING` (the default on a terminal).
    Table,
    /// One row per fit with a header row, rank 1 first; the best: line goes to stderr.
    Csv,
    /// {"file", "workers", "steps", "times", "ranked_by", "best", "fits": [...], "warnings"}.
    Json,
}

impl From<FitFormatArg> for FormatArg {
    fn from(f: FitFormatArg) -> Self {
        match f {
            FitFormatArg::Table => FormatArg::Table,
            FitFormatArg::Csv => FormatArg::Csv,
            FitFormatArg::Json => FormatArg::Json,
        }
    }
}

/// Fit exp, shifted-exp, Pareto, log-normal and Weibull laws to a trace.
#[derive(Debug, Clone, Args)]
#[command(after_help = "Pools every recorded time of the trace (a CSV file with columns
step,worker,time), fits each family by maximum likelihood, and ranks the fits
by Kolmogorov-Smirnov distance D = sup|F_n - F| (smallest first): the
log-likelihoods of families with data-dependent supports (shifted-exp, Pareto)
are not comparable with the others, so they and AIC are shown for information.
The table ends with `best: --dist STRING`, ready for the simulating commands.

Examples:
  gcsim fit data/trace-llm-64w.csv
  gcsim sweep --n 64 --s 0..16 --dist <the best: string>
  gcsim fit data/trace-llm-8w.csv --format json --out fits.json")]
pub struct FitArgs {
    /// The trace: CSV with a header naming the columns step, worker and time.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FitFormatArg>,

    /// Write the fits to FILE (.csv, .json or .txt), atomically.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl FitArgs {
    /// Reads the trace, fits every family and writes the ranked fits. Input
    /// errors (the trace, the sample, --out) are [`UsageError`]s.
    pub fn execute(self) -> Result<()> {
        let usage = |e: &dyn std::fmt::Display| anyhow::Error::new(UsageError(e.to_string()));
        let output = resolve_output(
            self.format.map(FormatArg::from),
            self.out.as_ref(),
            io::stdout().is_terminal(),
        )
        .map_err(|e| usage(&format_args!("{e:#}")))?;
        let trace = Trace::from_file(&self.file).map_err(|e| usage(&e))?;
        let fits = fit::fit_all(trace.all()).map_err(|e| usage(&format_args!("{}: {e}", trace.file())))?;
        let report = FitReport::new(trace.file(), trace.workers(), trace.steps(), fits);
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        let stdout = io::stdout();
        match output.file {
            Some(dest) => {
                let (path, mut tmp) = (dest.path.clone(), dest.temp()?);
                fit::write_report(&report, output.format, tmp.as_file_mut())
                    .and_then(|()| tmp.as_file_mut().sync_all())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                persist(tmp, &path)?;
                let mut out = stdout.lock();
                if stdout.is_terminal() {
                    fit::write_report(&report, Format::Table, &mut out)?;
                } else {
                    writeln!(out, "{}", report.best_line())?;
                }
                eprintln!("wrote {} fits to {}", report.fits.len(), path.display());
            }
            None => {
                let mut out = io::BufWriter::new(stdout.lock());
                fit::write_report(&report, output.format, &mut out)?;
                out.flush()?;
                if output.format == Format::Csv {
                    // Keeps the CSV on stdout parseable; JSON carries `best` itself.
                    eprintln!("{}", report.best_line());
                }
            }
        }
        Ok(())
    }
}
