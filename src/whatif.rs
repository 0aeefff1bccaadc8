//! `gcsim whatif TRACE`: how much faster a measured pipeline job would run
//! without stragglers, and whose fault the difference is (the what-if
//! analysis of Lin et al., OSDI 2025).

mod mitigate;

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;

use gcsim::export::{Export, Format};
use gcsim::whatif::{Analysis, AttributionRow, LayoutSpec, OpTrace, StepTimelines, check_step};
use gcsim_figures::plot::heatmap::worker_grid;

use super::figure::{FigureOptions, PlotArgs, check_destination, draw_heatmap};
use super::flags::{OUT, STEP, TIMELINE};
use super::notes::note;
use super::output::{self, Output};
use super::{Status, usage};

/// What each `gcsim whatif --format` value writes.
fn format_help(format: Format) -> &'static str {
    match format {
        Format::Table => {
            "S, the replay error, M_S and M_W, then the largest attributions by op type, stage, dp rank and step (the default on a terminal)"
        }
        Format::Csv => "One row per attribution (by,key,slowdown), the job's S first",
        Format::Json => {
            r#"{"file", "layout", "slowdown", "replay_error", "launch_slowdown", "by_optype", "by_dp_rank", "by_stage", "by_step", "*_per_step", "m_s", "m_w", "ideal", "step_measured", "step_replay", "step_ideal", "worker_scores", ...}"#
        }
        f => output::format_help(f),
    }
}

/// Replay a measured pipeline job's per-op trace, and its ideal run without stragglers: the slowdown S and whose fault it is.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Reads a per-op trace in the schema of the what-if artifact of Lin et al.
(OSDI 2025): Parquet as the artifact stores it, or CSV with a header row, with
the columns dp_rank, stage, rank, step, optype, start_ts, duration (seconds),
seq_id, mc, gmc, mb_id; op types forward-compute, backward-compute,
forward-send, forward-recv, backward-send, backward-recv, params-all-gather,
grads-reduce-scatter, separate-grads-all-reduce, embedding-grads-all-reduce,
layernorm-grads-all-reduce, optimizer-clip-main-grad, optimizer, gc. One rank
per (dp rank, stage) is recorded; every step and dp rank must record the same
ops.

The dependency graph is built from the first step's dp rank 0 and applied to
every (step, dp rank): each stage's compute ops in their recorded order, each
send/recv type its own stream, the k-th send meeting the k-th receive of the
neighbouring stage, then gc, the layer-norm and embedding all-reduces, the
reduce-scatters, the clip and the optimizer; the data-parallel collectives and
the clip wait for every dp rank of the step. An interleaved pipeline (vpp > 1,
several model chunks per stage in column mc) is read the same way, as the
artifact reads it: a send or receive whose peer global chunk (gmc +/- 1) does
not exist waits for nobody, and the last stage's forward sends meet stage 0's
receives (the backward the other way).

Reported: S = mean replayed step / mean ideal step, where the replay takes
the measured durations and the ideal gives compute ops their type's mean
duration and communication its type's median transfer time (excluding the
wait for peers); the replay error (mean measured step / mean replayed step,
minus 1); S_t, S_dp, S_stage and S per step: the ideal with only that group's
ops at their measured times; M_S and M_W: the share of the slowdown removed
by idealising the last stage, or the worst 3% of ranks by min(S_dp, S_stage).

--plot draws min(S_dp, S_stage) per worker, dp ranks across and stages up
(Fig. 14 of Lin et al.), on ColorBrewer's Reds from 1 (no straggling) to 1.5
or the largest value, each cell's value written in it where it fits;
--plot-data writes one row per cell (series `stage S`, x the dp rank, y the
value). --timeline writes one step (--step, by default the step with the
largest S) as a Chrome trace for ui.perfetto.dev: process 0 the replay with
the measured durations and no launch delay (the run S compares; with the
launch delays the replay is the trace itself), process 1 the ideal run;
per (dp rank, stage) worker a thread of its compute ops, then threads of its
communication, where it overlaps; one event per op, named <optype>_<seq>_<stage>,
with the args optype, seq, step, dp_rank and stage; times in microseconds
from the step's start.

--mitigate fits the job to the hybrid-parallel model of `gcsim run
--parallel` (each rank's log-normal time with its persistent offset, each
stage's work, the microbatches' shared work from the covariance across
stages, the backward ratio; the pipeline transfer, the gradient sum and the
other ops at their ideal times; an interleaved job on --schedule
interleaved:V), prints its flags, checks its mean step
against the measured one, and simulates it (--trials steps on --seed) with
the slowest rank fixed, the stages rebalanced, the microbatches balanced,
frc and crc s=1 across replicas, the slowest replica dropped, and a timeout
across replicas at the fitted step's median and 90th percentile: mean,
interval, speedup, GPU-hours per run of --iterations-per-run steps (every
GPU counted) and the share of the data in a step's update.

Examples:
  gcsim whatif trace-ST.parquet --meta meta-ST.yaml
  gcsim whatif trace-SE.parquet --meta meta-SE.yaml --format json --out se.json
  gcsim whatif job.csv --layout dp=2,pp=4
  gcsim whatif trace-SE.parquet --meta meta-SE.yaml --plot se.png \\
      --plot-data se.csv
  gcsim whatif trace-ST.parquet --meta meta-ST.yaml --timeline st.json --step 23
  gcsim whatif trace-SE.parquet --meta meta-SE.yaml --mitigate"
)]
pub struct WhatIfArgs {
    /// The per-op trace (Parquet or CSV).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,

    /// The job's metadata (the artifact's YAML: dp_size, pp_size, tp_size, dsp_size, vpp_size, world_size).
    #[arg(long, value_name = "FILE", conflicts_with = "layout")]
    pub meta: Option<PathBuf>,

    /// The job's layout as dp=D,pp=P, optionally with tp=T, cp=C and vpp=V; sizes not given come from the trace (tp and cp default to 1).
    #[arg(long, value_name = "SIZES")]
    pub layout: Option<String>,

    /// Output format [default: table on a terminal, else csv; with --out, from its extension].
    #[arg(long, value_name = "FORMAT", value_parser = output::format_parser(format_help))]
    pub format: Option<Format>,

    /// Write the report to FILE (atomically) instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Draw min(S_dp, S_stage) per worker as a heatmap, dp rank x stage
    /// (.png, .svg or .pdf). Example: --plot heatmap.png
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    #[command(flatten)]
    pub figure: PlotArgs,

    /// Write one step's replayed and ideal timelines as a Chrome trace
    /// (.json, for ui.perfetto.dev). Example: --timeline step.json
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,

    /// The step --timeline writes [default: the step with the largest S].
    #[arg(long, value_name = "STEP", allow_negative_numbers = true)]
    pub step: Option<i64>,

    /// Fit the job to the hybrid-parallel model and simulate it under each mitigation (fix the slowest rank, rebalance the stages, balance the microbatches, frc/crc s=1 across replicas, drop the slowest replica, a timeout across replicas). Written as a table or JSON, never CSV: the table by default, piped too.
    #[arg(long)]
    pub mitigate: bool,

    /// Simulated steps per mitigation (with --mitigate).
    #[arg(long, value_name = "N", default_value_t = 20_000, requires = "mitigate", value_parser = crate::parse_trials, allow_negative_numbers = true)]
    pub trials: u64,

    /// Seed of the simulations (with --mitigate).
    #[arg(long, value_name = "SEED", default_value_t = 0, requires = "mitigate")]
    pub seed: u64,

    /// Steps of one training run, over which the mitigations' GPU-hours are counted (with --mitigate).
    #[arg(long, value_name = "N", default_value_t = mitigate::STEPS, requires = "mitigate", value_parser = crate::parse_trials, allow_negative_numbers = true)]
    pub iterations_per_run: u64,

    /// No notes on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A validated `whatif`.
pub struct WhatIfJob {
    trace: OpTrace,
    layout: LayoutSpec,
    output: Output,
    /// Steps and seed of the mitigations' simulations, with --mitigate,
    /// and the steps of a run.
    mitigate: Option<(u64, u64, u64)>,
    quiet: bool,
    plot: Option<PathBuf>,
    figure: FigureOptions,
    /// The `--timeline` file, and the `--step` it writes.
    timeline: Option<(PathBuf, Option<i64>)>,
}

/// The analysis, with the mitigations when asked for.
#[derive(Serialize)]
struct Report {
    #[serde(flatten)]
    analysis: Analysis,
    #[serde(skip_serializing_if = "Option::is_none")]
    mitigations: Option<mitigate::Mitigations>,
}

impl Export for Report {
    type Row = AttributionRow;

    fn rows(&self) -> &[AttributionRow] {
        self.analysis.rows()
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        self.analysis.write_table(out)?;
        match &self.mitigations {
            Some(m) => m.write_table(out),
            None => Ok(()),
        }
    }
}

impl TryFrom<WhatIfArgs> for WhatIfJob {
    type Error = anyhow::Error;

    fn try_from(args: WhatIfArgs) -> Result<Self> {
        // The mitigations have no CSV: piped without --format or --out,
        // they are written as the table a terminal shows.
        let format = match (args.format, &args.out) {
            (None, None) if args.mitigate => Some(Format::Table),
            (format, _) => format,
        };
        let output = Output::resolve(format, args.out.as_deref())?;
        if args.mitigate && !matches!(output.format, Format::Table | Format::Json) {
            bail!("--mitigate writes a table or JSON (--format table or json); the CSV holds the attributions only");
        }
        if args.mitigate && args.trials < 2 {
            bail!("--trials {}: give 2 or more simulated steps", args.trials);
        }
        let others = [(OUT, args.out.as_deref()), (TIMELINE, args.timeline.as_deref())];
        let figure = args.figure.options(args.plot.as_deref(), false, &others)?;
        if let Some(plot) = &args.plot {
            check_destination(plot)?;
        }
        let timeline = check_timeline(args.timeline, args.step)?;
        super::output::names::input("TRACE", &args.trace)?;
        let layout = match (&args.meta, &args.layout) {
            (Some(meta), _) => {
                super::output::names::input("--meta", meta)?;
                LayoutSpec::from_yaml(meta)?
            }
            (None, Some(text)) => LayoutSpec::parse(text)?,
            (None, None) => LayoutSpec {
                source: "the trace".into(),
                ..Default::default()
            },
        };
        let trace = OpTrace::read(&args.trace)?;
        let mitigate = args
            .mitigate
            .then_some((args.trials, args.seed, args.iterations_per_run));
        if let Some(step) = args.step {
            check_step(&trace.step, step)?;
        }
        Ok(WhatIfJob {
            trace,
            layout,
            output,
            mitigate,
            quiet: args.quiet,
            plot: args.plot,
            figure,
            timeline,
        })
    }
}

/// Checks `--timeline` (a writable .json file) and that `--step` goes with it.
fn check_timeline(path: Option<PathBuf>, step: Option<i64>) -> Result<Option<(PathBuf, Option<i64>)>> {
    let Some(path) = path else {
        if step.is_some() {
            anyhow::bail!("{STEP} picks the step that {TIMELINE} writes: give {TIMELINE} FILE.json too");
        }
        return Ok(None);
    };
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if ext.as_deref() != Some("json") {
        anyhow::bail!(
            "{TIMELINE} {}: a Chrome trace is JSON; give a .json file",
            path.display()
        );
    }
    output::check(TIMELINE, &path)?;
    Ok(Some((path, step)))
}

impl WhatIfJob {
    /// Analyses the trace and writes the report.
    pub fn execute(self) -> Result<Status> {
        let (analysis, timelines) = match &self.timeline {
            Some((_, step)) => Analysis::with_timelines(&self.trace, &self.layout, *step)
                .map(|(a, t)| (a, Some(t)))
                .map_err(usage)?,
            None => (Analysis::new(&self.trace, &self.layout).map_err(usage)?, None),
        };
        if analysis.clipped_delays > 0 {
            eprintln!(
                "warning: {} ops started more than 10 ms before an op they depend on ended (taken as clock error)",
                analysis.clipped_delays
            );
        }
        let mitigations = match self.mitigate {
            Some((trials, seed, steps)) => {
                let Some(fit) = &analysis.model else {
                    let l = &analysis.layout;
                    if l.vpp > 1 {
                        bail!(
                            "{}: --mitigate: the interleaved job (vpp={}) does not run a multiple of pp={} microbatches per chunk, which the hybrid model's interleaved schedule needs",
                            analysis.file,
                            l.vpp,
                            l.pp
                        );
                    }
                    bail!(
                        "{}: --mitigate: the trace has no compute op to fit the model to",
                        analysis.file
                    );
                };
                let measured = analysis.step_measured.iter().sum::<f64>() / analysis.step_measured.len() as f64;
                let layout = &analysis.layout;
                let gpus_per_rank = f64::from(layout.world) / f64::from(layout.dp * layout.pp);
                let result = mitigate::Mitigations::run(fit, measured, gpus_per_rank, (trials, seed, steps));
                // The simulations ran quietly; the notes are the command's again.
                super::notes::set_quiet(self.quiet);
                Some(result?)
            }
            None => None,
        };
        let file = analysis.file.clone();
        let report = Report { analysis, mitigations };
        if let Some(path) = self.output.write(&report)? {
            note!("wrote the what-if analysis of {file} to {}", path.display());
        }
        if let Some(plot) = &self.plot {
            draw_heatmap(&worker_grid(&report.analysis), plot, &self.figure)?;
        }
        if let (Some((path, _)), Some(timelines)) = (&self.timeline, timelines) {
            write_timelines(&timelines, path)?;
        }
        Ok(Status::Success)
    }
}

/// Writes a step's timelines as a Chrome trace, atomically.
fn write_timelines(timelines: &StepTimelines, path: &std::path::Path) -> Result<()> {
    output::write_atomically(path, |out| timelines.write_chrome_trace(out))?;
    note!(
        "wrote the replayed and ideal timelines of step {} to {}",
        timelines.step,
        path.display()
    );
    Ok(())
}
