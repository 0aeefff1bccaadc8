//! `gcsim trace import`: measured step times (PyTorch profiler traces, or a
//! CSV file of any layout) written as a gcsim trace, `step,worker,time` in
//! seconds.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};

use gcsim::trace::import::columns::{self, ColumnMap};
use gcsim::trace::import::{Imported, pytorch};
use gcsim::trace::{TimeUnit, Trace, TraceError};

use crate::Status;
use crate::output::{self, Stdout};

/// What the input files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Source {
    /// The PyTorch profiler's Chrome-trace JSON, one *.pt.trace.json per rank: the ProfilerStep#N events
    Pytorch,
    /// One CSV file; --columns names the step, worker and time columns
    Csv,
}

/// Convert measured step times (PyTorch profiler traces, a CSV file) into a trace.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Writes a trace for --dist trace:path=, --dist replay:path=, gcsim fit and
gcsim trace: CSV with the header step,worker,time, one row per step and
worker, by step, the time in seconds.

--from pytorch reads the traces torch.profiler.profile writes with
on_trace_ready=torch.profiler.tensorboard_trace_handler(DIR), one
*.pt.trace.json per rank (and per profiling cycle). Each prof.step() ends a
step, recorded as the event ProfilerStep#N with its duration in
microseconds; the step is N and the time is that duration (the CPU-side
event: the copies on the GPU streams, cat gpu_user_annotation, are
skipped). The worker is the file's distributedInfo.rank (written under
torch.distributed), or, when no file has one, the file's place in the list
(0, 1, ...); a note on stderr says which. Files are read as a stream,
whatever their size; gzip-compressed ones must be decompressed first.

--from csv reads one CSV file: --columns step=COL,worker=COL,time=COL names
its columns (a key left out means a column of that name); other columns
are ignored and a UTF-8 byte-order mark is skipped. The time's unit is
--time-unit when given, else the one the time column's name ends with
(_s, _ms, _us), else seconds. Steps and workers are whole numbers >= 0.

A step and worker found twice, a non-number, a mapped column the header
lacks, or a trace without step events is an error naming the file and,
where it applies, the line and column.

Examples:
  gcsim trace import --from pytorch rank*.pt.trace.json --out job.csv
  gcsim plan --n 64 --dist replay:path=job.csv --load-model scaled
  gcsim trace import --from csv steps.csv --columns step=iteration,worker=rank,time=duration_ms --out job.csv"
)]
pub struct ImportArgs {
    /// What the files are.
    #[arg(long, value_name = "SOURCE")]
    pub from: Source,

    /// The input: one or more *.pt.trace.json (pytorch), or one CSV file (csv).
    #[arg(value_name = "FILES", required = true)]
    pub files: Vec<PathBuf>,

    /// csv: the columns of the step, the worker and the time, as step=COL,worker=COL,time=COL [default: step=step,worker=worker,time=time].
    #[arg(long, value_name = "MAP")]
    pub columns: Option<ColumnMap>,

    /// csv: the time column's unit, s, ms or us [default: from the column name's ending _s, _ms or _us; else s].
    #[arg(long, value_name = "UNIT", value_parser = crate::listed(TimeUnit::ALL, TimeUnit::symbol, unit_help))]
    pub time_unit: Option<TimeUnit>,

    /// Write the trace to FILE, atomically [default: stdout].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// What `--help` says of each `--time-unit`.
fn unit_help(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Seconds => "Seconds",
        TimeUnit::Milliseconds => "Milliseconds",
        TimeUnit::Microseconds => "Microseconds",
    }
}

/// Data read and a destination checked: ready to write.
pub struct ImportJob {
    imported: Imported,
    files: usize,
    out: Option<PathBuf>,
}

impl TryFrom<ImportArgs> for ImportJob {
    type Error = anyhow::Error;

    fn try_from(args: ImportArgs) -> Result<Self> {
        if let Some(out) = &args.out {
            let csv = out
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
            if !csv {
                bail!("--out {}: the trace is written as CSV; give a .csv file", out.display());
            }
            output::check("--out", out)?;
        }
        for file in &args.files {
            output::names::input("FILES", file)?;
        }
        let imported = match args.from {
            Source::Pytorch => {
                if args.columns.is_some() || args.time_unit.is_some() {
                    bail!(
                        "--columns and --time-unit apply to --from csv; a PyTorch profiler trace names its own fields (dur in microseconds)"
                    );
                }
                pytorch::import(&args.files)?
            }
            Source::Csv => {
                let [file] = args.files.as_slice() else {
                    bail!(
                        "--from csv reads one FILE, {} were given; import each and join them, or use --from pytorch for profiler traces",
                        args.files.len()
                    );
                };
                columns::import(file, &args.columns.unwrap_or_default(), args.time_unit)?
            }
        };
        Ok(Self {
            imported,
            files: args.files.len(),
            out: args.out,
        })
    }
}

impl ImportJob {
    /// Writes the trace, then says on stderr how it reads back as a trace
    /// (complete steps, or why none).
    pub fn execute(self) -> Result<Status> {
        for note in self.imported.notes() {
            eprintln!("note: {note}");
        }
        let mut text = Vec::new();
        self.imported.write_csv(&mut text)?;
        let shown = self
            .out
            .as_ref()
            .map_or("stdout".to_string(), |p| p.display().to_string());
        match &self.out {
            Some(path) => output::write_atomically(path, |out| out.write_all(&text))?,
            None => {
                let mut out = BufWriter::new(Stdout::lock());
                out.write_all(&text)?;
                out.flush()?;
            }
        }
        let (steps, workers) = self.imported.shape();
        eprintln!(
            "imported {} step times ({steps} steps, {workers} workers) from {} file{} to {shown}",
            self.imported.len(),
            self.files,
            if self.files == 1 { "" } else { "s" }
        );
        match Trace::from_bytes(&shown, &text) {
            Ok(trace) => {
                if let Some(note) = trace.dropped_note() {
                    eprintln!("warning: {note}");
                }
            }
            Err(e @ TraceError::NoCompleteStep { .. }) => {
                eprintln!("warning: {e}; --dist trace: and replay: will refuse it")
            }
            Err(e) => bail!("the imported trace does not read back: {e}"),
        }
        Ok(Status::Success)
    }
}
