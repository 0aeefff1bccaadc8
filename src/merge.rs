//! `gcsim merge FILES...`: combine the partial results of `--shard I/K` runs
//! into the output a single run gives, byte for byte, reading one file at a
//! time (see [`gcsim::shard::fold`]); with `--partial`, into one partial
//! result that later merges extend.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use gcsim::export::Format;
use gcsim::report;
use gcsim::shard::ShardFile;
use gcsim::shard::fold::Union;
use gcsim_figures::plot::sweep::Metric;

use super::figure::{Figure, FigureKind, metric_parser};
use super::job::{Engine, bootstrap_note, finish_report, widen_for_trace, write_report};
use super::notes::note;
use super::output::{self, Output};
use super::progress::Bar;
use super::{Status, usage};

/// Combine shard files into one result.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Every shard of the run must be given once: merge refuses shards of another
configuration or seed, duplicated shards and missing ones. The merged output is
the output of the same run without --shard. Files are read one at a time, so
the memory a merge needs does not grow with the number of shards.

--partial writes the union of the shards given (any subset) as one file that
stands for them all: a later merge takes it in place of those shards, with the
other shards or other partial merges, and gives the same bytes.

Examples:
  gcsim sweep --n 100 --s 0..50 --trials 100000000 --shard 1/4 \\
      --out part1.json                                  # ... 4/4
  gcsim merge part*.json --out result.csv
  gcsim merge parts/ --plot speedup.png           # every .json file in parts/
  gcsim merge --partial part1.json part2.json --out done.json
  gcsim merge --partial done.json part3.json --out done.json  # extend it
  gcsim merge done.json part4.json --out result.csv

Parts of `plan --shard I/K` (whole cluster sizes), of `train --shard I/K`
(repeats) and of `codes --shard I/K` (straggler patterns) are recognised by
their format and merge to what the command without --shard writes; a
scenario's parts merge with `gcsim scenario FILE --merge`.

In a Slurm job array, --shard slurm takes I/K from the task (see scripts/slurm/)."
)]
pub struct MergeArgs {
    /// The shard files written by `--shard I/K --out FILE`, and partial
    /// merges written by `merge --partial`; a directory stands for every
    /// `.json` file in it (for arrays of thousands of shards, beyond the
    /// shell's argument limit).
    #[arg(value_name = "FILES", required = true)]
    pub files: Vec<PathBuf>,

    /// Write the union of the given shards (any subset of the run's) to
    /// --out as a partial merge: a .json file that later merges take in
    /// place of those shards. Example: --partial --out done.json
    #[arg(long)]
    pub partial: bool,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_name = "FORMAT", value_parser = output::format_parser(output::format_help))]
    pub format: Option<Format>,

    /// Write the merged result to FILE (.csv, .json, .txt, .md or .tex), atomically.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Only these columns in the table and the CSV, by their CSV names, in
    /// this order (JSON keeps every field). Example: --columns scheme,s,mean,p99
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub columns: Vec<String>,

    /// Draw a sweep figure of the merged result (.png, .svg or .pdf), as
    /// `sweep --plot`. Example: --plot speedup.pdf
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// What the figure shows.
    #[arg(long, default_value_t = Metric::Speedup, value_name = "METRIC", value_parser = metric_parser())]
    pub plot_metric: Metric,

    /// A logarithmic y axis (values <= 0 are left out of the figure and
    /// of --plot-data). Example: --plot-metric p99 --log-y
    #[arg(long)]
    pub log_y: bool,

    #[command(flatten)]
    pub figure: super::figure::PlotArgs,

    /// Worker threads (1 to 1024), for a quantile refinement pass if one is needed [default: all cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = super::parse_threads, allow_negative_numbers = true)]
    pub threads: Option<usize>,

    /// No progress bar and no notes on stderr (what was written, values
    /// skipped); warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The files to merge: each path given, a directory as its `.json` files
/// in name order.
pub(super) fn shard_files(given: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in given {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let entries =
            std::fs::read_dir(path).with_context(|| format!("{}: cannot list the directory", path.display()))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
            .collect();
        if found.is_empty() {
            bail!(
                "{}: a directory given to merge must hold the shards' .json files; it has none",
                path.display()
            );
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// The files to merge (see `shard_files`), recorded as the command's
/// inputs and `--out` as its output, so that a result cannot replace a
/// shard it merges (see [`super::output::names`]); before any is read. A
/// `--partial` merge may write one of its inputs: folding shards into an
/// accumulating file (`merge --partial acc.json part-4.json --out
/// acc.json`) is what it is for, and the inputs are read before anything
/// is written.
pub fn record_files(args: &MergeArgs) -> Result<Vec<PathBuf>> {
    let files = shard_files(&args.files)?;
    if !args.partial {
        for file in &files {
            super::output::names::input("FILES", file)?;
        }
        if let Some(out) = &args.out {
            super::output::names::output(super::flags::OUT, out)?;
        }
    }
    Ok(files)
}

/// The text of the first file `gcsim merge` was given, with its path (by
/// whose `format` the merge is dispatched); `None` if none is given.
pub(super) fn first_text(args: &MergeArgs) -> Result<Option<(PathBuf, String)>> {
    let files = shard_files(&args.files)?;
    let Some(first) = files.into_iter().next() else {
        return Ok(None);
    };
    let text =
        std::fs::read_to_string(&first).with_context(|| format!("{}: cannot read the shard", first.display()))?;
    Ok(Some((first, text)))
}

/// Reads and parses one shard file.
fn read_shard(path: &std::path::Path) -> Result<(String, ShardFile)> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read the shard"))?;
    let file = ShardFile::parse(&name, &text)?;
    Ok((name, file))
}

/// The first shard file read and checked, the others still to read, and
/// where the result goes.
pub struct MergeJob {
    union: Union,
    rest: Vec<PathBuf>,
    partial: bool,
    output: Output,
    figure: Option<Figure>,
    engine: Engine,
}

impl TryFrom<MergeArgs> for MergeJob {
    type Error = anyhow::Error;

    fn try_from(args: MergeArgs) -> Result<Self> {
        let mut files = record_files(&args)?.into_iter();
        let first = files.next().context("no shard files given")?;
        let (name, file) = read_shard(&first)?;
        let union = Union::new(&name, file)?;
        let config = union.config();
        if args.partial {
            let Some(out) = args.out.as_deref() else {
                bail!("--partial writes a partial merge: give --out FILE.json");
            };
            if out.extension().is_none_or(|e| !e.eq_ignore_ascii_case("json")) {
                bail!(
                    "--partial writes its partial merge as JSON: give --out a .json file (not {})",
                    out.display()
                );
            }
            if let Some(f) = args.format.filter(|&f| f != Format::Json) {
                bail!("--partial writes its partial merge as JSON: drop --format {f}");
            }
            if !args.columns.is_empty() || args.plot.is_some() {
                bail!("--partial writes a partial merge, not a result: give --columns and --plot to the final merge");
            }
        }
        let output = Output::resolve(args.format, args.out.as_deref())?
            .with_columns_and::<gcsim::report::Row>(&args.columns, &config.extra_columns())?;
        let options = args.figure.options(
            args.plot.as_deref(),
            args.log_y,
            &[(super::flags::OUT, args.out.as_deref())],
        )?;
        let figure = match args.plot {
            Some(p) if config.command == report::Command::Run => bail!(
                "--plot {}: a merged run has no survival curve; plot a sweep",
                p.display()
            ),
            Some(p) => Some(Figure::new(p, FigureKind::Sweep(args.plot_metric), options)?),
            None => None,
        };
        Ok(Self {
            union,
            rest: files.collect(),
            partial: args.partial,
            output,
            figure,
            engine: Engine {
                threads: args.threads,
                quiet: args.quiet,
            },
        })
    }
}

impl MergeJob {
    /// Reads the other shards one at a time into the union (a file that
    /// does not fit, a repeated or a missing shard is a
    /// [`UsageError`](super::UsageError)), then writes the result, or the
    /// partial merge.
    pub fn execute(self) -> Result<Status> {
        let mut union = self.union;
        for path in &self.rest {
            let (name, file) = read_shard(path).map_err(usage)?;
            union.add(&name, file).map_err(usage)?;
        }
        if self.partial {
            return write_partial(union, &self.output);
        }
        let (study, config) = (union.study().clone(), union.config().clone());
        let bar = Bar::new(self.engine.quiet, study.trials());
        let outcome = self.engine.pool()?.install(|| union.finish(&bar)).map_err(usage)?;
        if outcome.passes > 1 {
            note!(
                "note: the percentiles needed {} passes; the extra ones ran here over every trial",
                outcome.passes
            );
        }
        for note in &config.skipped {
            note!("note: skipped {note}");
        }
        bootstrap_note(&study, &config);
        let counting = Bar::counting(self.engine.quiet, 0, "errors and tallies", "trials");
        let mut rows = report::rows_with_progress(&study, &outcome, &counting);
        widen_for_trace(&study, &config, &mut rows, self.engine)?;
        let report = finish_report(rows, config);
        write_report(&report, &self.output)?;
        if let Some(figure) = self.figure {
            figure.draw(&study, &report.config, &report.rows, Some(&outcome))?;
        }
        Ok(Status::Success)
    }
}

/// Writes the union's file to --out, and says which shards it covers.
fn write_partial(union: Union, output: &Output) -> Result<Status> {
    let missing = union.missing();
    let file = union.into_file();
    let dest = output.file.as_ref().context("--partial needs --out")?;
    dest.write(|out| serde_json::to_writer(out, &file).map_err(std::io::Error::other))?;
    let coverage = file.coverage().map_err(anyhow::Error::msg)?;
    let still = if missing.is_empty() {
        "none missing: merge it alone for the result".to_string()
    } else {
        format!(
            "{} still to merge",
            gcsim::shard::coverage::name_runs(&missing, coverage.count())
        )
    };
    note!(
        "wrote the partial merge of {} to {} ({still})",
        coverage.name(),
        dest.path().display()
    );
    Ok(Status::Success)
}
