//! `gcsim merge FILES...`: combine the partial results of `--shard I/K` runs
//! into the output a single run gives, byte for byte.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use gcsim::engine;
use gcsim::report;
use gcsim::shard::{self, ShardFile};

use super::common::{FormatArg, resolve_output};
use super::figure::{Figure, FigureKind, MetricArg};
use super::job::{finish_report, write_report};
use super::progress::Bar;

/// Combine shard files into one result.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Every shard of the run must be given once: merge refuses shards of another
configuration or seed, duplicated shards and missing ones. The merged output is
the output of the same run without --shard.

Examples:
  gcsim sweep --n 100 --s 0..50 --trials 100000000 --shard 1/4 --out part1.json   # ... 4/4
  gcsim merge part*.json --out result.csv
  gcsim merge part*.json --plot speedup.png"
)]
pub struct MergeArgs {
    /// The shard files written by `--shard I/K --out FILE`.
    #[arg(value_name = "FILES", required = true)]
    pub files: Vec<PathBuf>,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,

    /// Write the merged result to FILE (.csv, .json or .txt), atomically.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Draw a sweep figure of the merged result (.png or .svg).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// What the figure shows.
    #[arg(long, value_enum, default_value_t = MetricArg::Speedup, value_name = "METRIC")]
    pub plot_metric: MetricArg,

    /// Worker threads, for a quantile refinement pass if one is needed [default: all cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

impl MergeArgs {
    /// Reads, checks and merges the shards, then writes the result.
    pub fn execute(self) -> Result<()> {
        let mut files = Vec::new();
        for path in &self.files {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read the shard"))?;
            files.push((name.clone(), ShardFile::parse(&name, &text)?));
        }
        let (study, config) = shard::same_run(&files)?;
        let mut config = config.clone();
        let parts: Vec<_> = files.iter().map(|(_, f)| f.part()).collect();
        let output = resolve_output(self.format, self.out.as_ref(), std::io::stdout().is_terminal())?;
        let figure = match &self.plot {
            Some(p) if config.command == "run" => bail!(
                "--plot {}: a merged run has no survival curve; plot a sweep",
                p.display()
            ),
            Some(p) => Some(Figure::new(p.clone(), FigureKind::Sweep(self.plot_metric.into()))?),
            None => None,
        };
        if self.threads == Some(0) {
            bail!("--threads 0 is out of range; accepted: a whole number >= 1");
        }
        let pool = super::job::thread_pool(self.threads)?;
        let bar = Bar::new(self.quiet, study.trials());
        let outcome = pool.install(|| engine::merge_shards(&study, &parts, &bar))?;
        if outcome.passes > 1 {
            eprintln!(
                "note: the percentiles needed {} passes; the extra ones ran here over every trial",
                outcome.passes
            );
        }
        for note in &config.skipped {
            eprintln!("note: skipped {note}");
        }
        config.warnings.clear();
        let report = finish_report(report::rows(&study, &outcome), config);
        write_report(&report, output)?;
        if let Some(figure) = figure {
            figure.draw(&study, &report.config, &report.rows, Some(&outcome))?;
        }
        Ok(())
    }
}
