//! `gcsim trace import`: measured step times (PyTorch profiler traces, or a
//! CSV file of any layout) written as a gcsim trace, `step,worker,time` in
//! seconds; or a pipeline job's profiler traces written as a per-op trace
//! for `gcsim whatif`.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};

use gcsim::trace::import::columns::{self, ColumnMap};
use gcsim::trace::import::ops::{self, OpsImported};
use gcsim::trace::import::{Imported, pytorch};
use gcsim::trace::{TimeUnit, Trace, TraceError};
use gcsim::whatif::{Analysis, LayoutSpec, OpTrace};

use crate::Status;
use crate::output::{self, Stdout};

/// What the input files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Source {
    /// The PyTorch profiler's Chrome-trace JSON, one *.pt.trace.json per rank: the ProfilerStep#N events
    Pytorch,
    /// One CSV file; --columns names the step, worker and time columns
    Csv,
    /// A pipeline job's profiler traces, one per rank, as a per-op trace for gcsim whatif: each op's record_function range
    PytorchOps,
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

--from pytorch-ops --layout dp=D,pp=P[,tp=T][,cp=C][,vpp=V] writes a
per-op trace for gcsim whatif instead (CSV, one row per op, the columns of
the what-if artifact of Lin et al., OSDI 2025). The profiler does not know
the pipeline's ops: the job must name them. Wrap each op in
torch.profiler.record_function(NAME), NAME an op type (forward-compute,
backward-compute, forward-send, forward-recv, backward-send, backward-recv,
grads-reduce-scatter, params-all-gather, separate-grads-all-reduce,
embedding-grads-all-reduce, layernorm-grads-all-reduce,
optimizer-clip-main-grad, optimizer, gc; Megatron-LM's timers have these
names), or forward-send-backward-recv / backward-send-forward-recv (two
ops), optionally followed by mb=J (the microbatch; default: the order of
the chunk's ranges) and mc=C (the model chunk, needed when vpp > 1). Each
file must carry distributedInfo.rank, which places it: Megatron-LM's order,
rank = tp + T*(cp + C*(dp + D*stage)); the lowest rank of each (dp rank,
stage) is kept. An op's time is its GPU span (the gpu_user_annotation
copies of its range), or its CPU span when it launched no GPU work; its
step is the ProfilerStep#N holding its CPU start. Steps missing on a rank
are dropped. The result is read back and replayed as gcsim whatif would,
and the replay's slowdown S is printed.

Examples:
  gcsim trace import --from pytorch rank*.pt.trace.json --out job.csv
  gcsim plan --n 64 --dist replay:path=job.csv --load-model scaled
  gcsim trace import --from csv steps.csv \\
    --columns step=iteration,worker=rank,time=duration_ms --out job.csv
  gcsim trace import --from pytorch-ops --layout dp=2,pp=4 \\
    rank*.pt.trace.json --out ops.csv
  gcsim whatif ops.csv --layout dp=2,pp=4"
)]
pub struct ImportArgs {
    /// What the files are.
    #[arg(long, value_name = "SOURCE")]
    pub from: Source,

    /// The input: one or more *.pt.trace.json (pytorch, pytorch-ops), or one CSV file (csv).
    #[arg(value_name = "FILES", required = true)]
    pub files: Vec<PathBuf>,

    /// csv: the columns of the step, the worker and the time, as step=COL,worker=COL,time=COL [default: step=step,worker=worker,time=time].
    #[arg(long, value_name = "MAP")]
    pub columns: Option<ColumnMap>,

    /// csv: the time column's unit, s, ms or us [default: from the column name's ending _s, _ms or _us; else s].
    #[arg(long, value_name = "UNIT", value_parser = crate::listed(TimeUnit::ALL, TimeUnit::symbol, unit_help))]
    pub time_unit: Option<TimeUnit>,

    /// pytorch-ops: the job's layout, dp=D,pp=P and any of tp=T, cp=C, vpp=V (sizes left out are 1).
    #[arg(long, value_name = "SIZES")]
    pub layout: Option<String>,

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

/// What was read: step times, or a per-op trace with its layout.
enum Read {
    Steps(Imported),
    Ops(OpsImported, LayoutSpec),
}

/// Data read and a destination checked: ready to write.
pub struct ImportJob {
    read: Read,
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
        if args.layout.is_some() && args.from != Source::PytorchOps {
            bail!("--layout places the ranks of --from pytorch-ops; a step-time trace has no layout");
        }
        let imported = match args.from {
            Source::PytorchOps => {
                if args.columns.is_some() || args.time_unit.is_some() {
                    bail!(
                        "--columns and --time-unit apply to --from csv; a PyTorch profiler trace names its own fields (ts and dur in microseconds)"
                    );
                }
                let Some(text) = &args.layout else {
                    bail!("--from pytorch-ops needs --layout dp=D,pp=P[,tp=T][,cp=C][,vpp=V] to place each rank");
                };
                let layout = LayoutSpec::parse(text)?;
                let ops = ops::import(&args.files, &layout)?;
                return Ok(Self {
                    read: Read::Ops(ops, layout),
                    files: args.files.len(),
                    out: args.out,
                });
            }
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
            read: Read::Steps(imported),
            files: args.files.len(),
            out: args.out,
        })
    }
}

impl ImportJob {
    /// Writes the trace, then says on stderr how it reads back (as a trace:
    /// complete steps, or why none; as a per-op trace: its replay's S).
    pub fn execute(self) -> Result<Status> {
        let notes = match &self.read {
            Read::Steps(imported) => imported.notes(),
            Read::Ops(ops, _) => ops.notes(),
        };
        for note in notes {
            eprintln!("note: {note}");
        }
        let mut text = Vec::new();
        match &self.read {
            Read::Steps(imported) => imported.write_csv(&mut text)?,
            Read::Ops(ops, _) => ops.write_csv(&mut text)?,
        }
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
        let files = format!("{} file{}", self.files, if self.files == 1 { "" } else { "s" });
        match &self.read {
            Read::Steps(imported) => {
                let (steps, workers) = imported.shape();
                eprintln!(
                    "imported {} step times ({steps} steps, {workers} workers) from {files} to {shown}",
                    imported.len()
                );
                steps_read_back(&shown, &text)?;
            }
            Read::Ops(ops, layout) => {
                let (steps, ranks) = ops.shape();
                eprintln!(
                    "imported {} ops ({steps} steps, {ranks} ranks) from {files} to {shown}",
                    ops.rows.len()
                );
                ops_read_back(&shown, &text, layout);
            }
        }
        Ok(Status::Success)
    }
}

/// Reads a written step-time trace back as `--dist trace:` would.
fn steps_read_back(shown: &str, text: &[u8]) -> Result<()> {
    match Trace::from_bytes(shown, text) {
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
    Ok(())
}

/// Reads a written per-op trace back and replays it as `gcsim whatif`
/// would: its S, and how closely the replay with the measured launch
/// delays reproduces the ops; or why whatif will refuse it.
fn ops_read_back(shown: &str, text: &[u8], layout: &LayoutSpec) {
    let analysed = std::str::from_utf8(text)
        .map_err(|e| e.to_string())
        .and_then(|t| OpTrace::from_csv(shown, t).map_err(|e| e.to_string()))
        .and_then(|trace| Analysis::new(&trace, layout).map_err(|e| e.to_string()));
    match analysed {
        Ok(a) => eprintln!(
            "read back by gcsim whatif: S = {:.4}, replay error {:.2}%, the replay with launch delays within {:.3} ms of every op",
            a.slowdown,
            100.0 * a.replay_error,
            1e3 * a.replay_check
        ),
        Err(e) => eprintln!("warning: gcsim whatif will refuse it: {e}"),
    }
}
