//! `gcsim plan`: which scheme and tolerance should this cluster run?

use std::io::{self, Write};

use anyhow::{Result, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use gcsim::engine;
use gcsim::export::{self, Digits, Export, Format};
use gcsim::load::LoadModel;
use gcsim::parallel::Parallel;
use gcsim::param::Param;
use gcsim::plan::{self, Objective, PlanRequest, PlanRow};
use gcsim::range::{self, IntList};
use gcsim::scheme::{Planning, SchemeKind};
use gcsim::shard::ShardId;
use gcsim::study::MAX_DRAWS_PER_TRIAL;
use gcsim::units::{CostModel, TimeUnit};

use super::common::CommonArgs;
use super::flags::{ANALYTIC, LINEAR, M, MAX_LOAD, N, PARTS, REF_N, SCHEME, TIMEOUT, WORKERS};
use super::job::Engine;
use super::notes::note;
use super::output::Output;
use super::progress::Bar;
use super::{Status, usage};

mod parallel;
pub(crate) mod shard;
mod table;
use parallel::{PARALLEL_SCHEMES, layout};
use table::{table, table_footer, table_header};

/// Default of `--max-load`: a worker holds at most four uncoded shares.
pub const DEFAULT_MAX_LOAD: f64 = 4.0;
/// What `--max-load` accepts.
const MAX_LOAD_RANGE: &str = "a number >= 1 (uncoded has load 1), or inf for no bound";

/// Rank every admissible configuration of every allowed scheme by an objective.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("analytic", |a| a.hide(true)),
    mut_arg("shard", |a| a.help(
        "Evaluate only the I-th of K parts of the cluster sizes (whole sizes, see below) and write a partial result to --out FILE.json; gcsim merge combines the K files into this plan's output, byte for byte. `slurm` takes I and K from a Slurm job array's task. Example: --shard 2/4 --out part2.json"
    )),
    after_help = "Exact values are used where every candidate has one (i.i.d. exponential,
shifted-exponential, Pareto, log-normal or Weibull workers, with or without
stragglers, except additive loads with Pareto units or mixtures); otherwise all
candidates are simulated on common random numbers and each objective has a 95%
interval. With --parallel the schemes code across the layout's data-parallel
replicas (uncoded, ignore, frc, crc, mds; timeout when named, with
--timeout), each simulated; --buckets takes a list under a collective.

Examples:
  gcsim plan --n 100 --dist exp:rate=1,p_slow=0.05,slowdown=8 \\
      --load-model scaled
  gcsim plan --n 50 --dist shifted-exp:shift=1,rate=1 --load-model scaled \\
      --scheme mds --linear --objective p99
  gcsim plan --n 16,32,64,128 --ref-n 64 --dist shifted-exp:shift=1,rate=2 \\
      --load-model scaled
  gcsim plan --n 64 --dist replay:path=data/trace-llm-64w.csv \\
      --objective deadline:9 --max-load 4
  gcsim plan --n 40 --scheme crc,multi-message,speculative,k-batch-sync \\
      --dist exp:rate=1,p_slow=0.05,slowdown=8 --load-model scaled \\
      --trials 20000
  gcsim plan --parallel dp=16,pp=4 --microbatches 8 --scheme frc,crc,ignore \\
      --dist lognormal:mu=-1,sigma=0.2,p_slow=0.02,slowdown=1.5,persist=0.95

Sharded by cluster size (each n is its own study, so its rows do not change):
--shard I/K evaluates whole sizes, largest estimated cost first, each to the
shard with the least work so far (equal costs: size u of --n, from 0, to shard
u mod K + 1; shards beyond the number of sizes evaluate nothing), and writes them to --out
FILE.json; gcsim merge of all K parts writes what the plan without --shard
writes, for any --format and --out:
  gcsim plan --n 16,32,64,128 --ref-n 64 --dist exp:rate=1 --simulate \\
      --shard 1/3 --out plan-1.json                          # ... 3/3
  gcsim merge plan-*.json --out plan.csv
In a Slurm job array, --shard slurm takes I/K from the task (see scripts/slurm/)."
)]
pub struct PlanArgs {
    /// Cluster sizes: one, a list or a range (e.g. 100, or 16,32,64, or 50..200).
    #[arg(long, short, value_name = "N", value_parser = range::parse, allow_negative_numbers = true)]
    pub n: Option<IntList>,

    /// What to optimise: mean, p50, p90, p99, cost (per run, with the cost flags), or deadline:T
    /// (the probability of finishing by T).
    #[arg(long, default_value = "mean", value_name = "OBJECTIVE", value_parser = str::parse::<Objective>)]
    pub objective: Objective,

    /// The most work per worker, in units of the uncoded share (of the
    /// --ref-n cluster): a number >= 1, or inf for no bound. Beyond a few
    /// shares a worker's memory and the model's accuracy are in question.
    /// [default: 4]
    #[arg(long, value_name = "L", value_parser = super::number(MAX_LOAD_RANGE), allow_hyphen_values = true)]
    pub max_load: Option<f64>,

    /// The model's gradient is a matrix-vector product (linear regression,
    /// X·w): also search mds, which encodes only linear computations.
    #[arg(long)]
    pub linear: bool,

    /// Allowed schemes [default: every scheme that decodes the exact gradient
    /// of any model: uncoded, frc, crc, comm-efficient, and mds with --linear;
    /// name ignore, multi-message,
    /// speculative (at Q=0.75, F=1), k-batch-sync, k-async or k-batch-async
    /// (K = n, n/2, n/4, ..., 1), partial-frc or partial-crc (with --parts),
    /// timeout (with --timeout) to
    /// search them too; the recommendation says when the winner is inexact
    /// or stale. The matrix-product codes polynomial, matdot and entangled
    /// are searched only when named, over every split whose threshold is at
    /// most n (one split per distinct threshold, load and message)].
    #[arg(long, value_delimiter = ',', value_name = "SCHEMES", value_parser = super::scheme_values())]
    pub scheme: Vec<SchemeKind>,

    /// Message splits tried for comm-efficient (without a communication cost,
    /// m > 1 only adds work) [default: 1].
    #[arg(long, value_name = "RANGE", value_parser = range::parse)]
    pub m: Option<IntList>,

    /// Partitions per worker tried for partial-frc and partial-crc, e.g. 10
    /// or 4,8,16 (required with them).
    #[arg(long, value_name = "RANGE", value_parser = range::parse)]
    pub parts: Option<IntList>,

    /// Deadlines tried for timeout, a comma list of times >= 0 in the time
    /// unit, e.g. 1.5,2,3 (required with it).
    #[arg(long, value_name = "TIMES", value_parser = range::parse_times, allow_hyphen_values = true)]
    pub timeout: Option<range::TimeList>,

    /// N0: the law describes the uncoded share of the work at N0 workers, so at
    /// n workers each share is N0/n as large. For "how many workers, and which code?".
    #[arg(long, value_name = "N0", value_parser = super::parse_count, allow_negative_numbers = true)]
    pub ref_n: Option<usize>,

    /// Simulate every candidate, even where exact values exist (a cross-check).
    #[arg(long)]
    pub simulate: bool,

    /// Rows shown in the table (CSV and JSON have all).
    #[arg(long, default_value_t = 20, value_name = "ROWS", value_parser = super::parse_count, allow_negative_numbers = true)]
    pub top: usize,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The ranked configurations and what produced them.
#[derive(Serialize)]
pub(crate) struct PlanReport {
    config: PlanConfig,
    /// The plan's advice in a sentence, where some configuration qualifies.
    pub(crate) recommendation: Option<String>,
    rows: Vec<PlanRow>,
    /// Rows shown in the table.
    #[serde(skip)]
    top: usize,
}

#[derive(Serialize, Deserialize)]
struct PlanConfig {
    gcsim: String,
    command: String,
    n: String,
    workers: String,
    load_model: String,
    unit_time: Option<f64>,
    ref_n: Option<usize>,
    objective: String,
    max_load: Option<f64>,
    /// Whether linear-only codes (mds) were searched.
    linear: bool,
    /// How the defaults were chosen.
    notes: Vec<String>,
    /// What the reader must know to trust the ranking.
    warnings: Vec<String>,
    schemes: Vec<SchemeKind>,
    m: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    parts: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout: Option<String>,
    trials: u64,
    #[serde(skip_serializing_if = "is_one", default = "one")]
    iterations: u64,
    seed: u64,
    comm: String,
    /// The hybrid-parallel job whose replicas the schemes code across.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parallel: Option<String>,
    /// The aggregations compared, where any is a collective.
    #[serde(skip_serializing_if = "Option::is_none")]
    aggregation: Option<String>,
    /// The bucket counts compared, where a collective splits its gradient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    buckets: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_unit: Option<TimeUnit>,
    #[serde(skip_serializing_if = "CostModel::is_empty", default)]
    costs: CostModel,
}

/// The columns a plan's rows carry beyond the fixed ones: the cost view's,
/// and the aggregation where a collective is compared.
fn plan_columns(req: &PlanRequest) -> Vec<&'static str> {
    let mut columns = req.costs.columns(req.time_unit);
    if req.aggregations.iter().any(|a| a.collective().is_some()) {
        columns.push("aggregation");
    }
    if plan::compares_buckets(req) {
        columns.push("buckets");
    }
    columns
}

/// The aggregations a plan compares, for its header, where any is a collective.
fn aggregation_label(req: &PlanRequest) -> Option<String> {
    let mut named: Vec<String> = req.aggregations.iter().map(ToString::to_string).collect();
    // Bucket counts are a column of their own, not a repeat of the name.
    named.dedup();
    req.aggregations
        .iter()
        .any(|a| a.collective().is_some())
        .then(|| named.join("; "))
}

impl PlanConfig {
    /// The columns the rows carry beyond the fixed ones (see [`plan_columns`]).
    pub(crate) fn extra_columns(&self) -> Vec<&'static str> {
        let mut columns = self.costs.columns(self.time_unit);
        if self.aggregation.is_some() {
            columns.push("aggregation");
        }
        if self.buckets.is_some() {
            columns.push("buckets");
        }
        columns
    }
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

fn one() -> u64 {
    1
}

/// A checked plan request, with what the output says about it and where it goes.
pub struct PlanJob {
    req: PlanRequest,
    config: PlanConfig,
    top: usize,
    pub(crate) output: Output,
    engine: Engine,
    /// With `--shard I/K`: which cluster sizes to evaluate, to a partial result.
    shard: Option<ShardId>,
}

/// The notes and warnings on what `plan` assumed by default.
fn defaults_said(args: &PlanArgs, load_model: LoadModel) -> (Vec<String>, Vec<String>) {
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    let parallel = args.common.parallel.parallel.is_some();
    match (args.common.cluster.load_model.is_some(), load_model) {
        (false, _) if parallel => {}
        (false, _) => notes.push(
            "load-model=scaled by default: a worker's time grows in proportion to its share of the data (--load-model names another)".to_string(),
        ),
        (true, LoadModel::Fixed) => warnings.push(
            "--load-model fixed makes extra work free (T = X whatever the load), so the most redundant code within --max-load wins; choose scaled or affine unless straggling truly does not grow with the work".to_string(),
        ),
        _ => {}
    }
    if args.scheme.is_empty() && !args.linear {
        notes.push(
            "mds not searched: it encodes only linear computations (X·w); --linear if the model's gradient is a matrix-vector product".to_string(),
        );
    }
    if args.max_load.is_none() {
        notes.push(format!(
            "max-load={DEFAULT_MAX_LOAD} by default: no worker computes more than {DEFAULT_MAX_LOAD} uncoded shares (--max-load L, or inf, to change)"
        ));
    }
    (notes, warnings)
}

/// The cluster sizes to plan (`--n`, or the one the workers fix), the
/// first of them, and the workers.
fn sizes(args: &PlanArgs) -> Result<(Vec<usize>, usize, gcsim::workers::Workers)> {
    let common = &args.common;
    let ns_given = args.n.as_ref().map(|l| l.values.clone());
    // A layout's ranks are its workers (checked against --n).
    let (count, _) = common.layout_counts(ns_given.as_ref().and_then(|v| v.first().copied()))?;
    let (n0, workers) = common.population(count)?;
    let ns = match ns_given {
        Some(v) if !common.cluster.classes.is_empty() && v != [n0] => {
            bail!("{WORKERS} fixes n={n0}; give one {N} or none")
        }
        Some(v) => v,
        None => vec![n0],
    };
    if let Some(&bad) = ns.iter().find(|&&n| n == 0) {
        bail!("{N} {bad} is out of range; accepted: whole numbers >= 1");
    }
    Ok((ns, n0, workers))
}

/// The schemes to search: those named, or every exact gradient code with a
/// tolerance to choose ([`Planning::Default`]; mds only with `--linear`).
fn schemes_of(args: &PlanArgs) -> Result<Vec<SchemeKind>> {
    if let Some(k) = args.scheme.iter().find(|k| k.is_linear_only() && !args.linear) {
        bail!(
            "{SCHEME} {k} encodes only linear computations (the matrix-vector product X·w; Lee et al. 2017) and cannot encode the gradient of a nonlinear model: add {LINEAR} if the model's gradient is a matrix-vector product, else drop {k}"
        );
    }
    Ok(if args.scheme.is_empty() {
        SchemeKind::ALL
            .into_iter()
            .filter(|&k| args.linear || !k.is_linear_only())
            // Inexact schemes, the strategies without an exact law
            // (every candidate simulated) and the matmul codes only
            // when named.
            .filter(|&k| k.facts().planning == Planning::Default)
            // Across a layout's replicas only these code.
            .filter(|k| args.common.parallel.parallel.is_none() || PARALLEL_SCHEMES.contains(k))
            .collect()
    } else {
        args.scheme.clone()
    })
}

/// The lists `plan` searches besides s: deadlines, message splits and
/// partitions per worker.
struct Lists {
    timeouts: Vec<f64>,
    m: IntList,
    parts: Vec<usize>,
}

/// The lists of `args` for `schemes`, each refused where no scheme reads
/// it or required where one needs it; and a scheme `plan` does not search
/// refused.
fn lists(args: &PlanArgs, schemes: &[SchemeKind]) -> Result<Lists> {
    let timeouts = match (&args.timeout, schemes.contains(&SchemeKind::Timeout)) {
        (Some(_), false) => bail!("{TIMEOUT} applies only to {SCHEME} timeout, which is not in {SCHEME}"),
        (None, true) => bail!("{SCHEME} timeout needs {TIMEOUT}, the deadlines to try (e.g. {TIMEOUT} 1.5,2,3)"),
        (l, _) => l.as_ref().map_or(Vec::new(), |l| l.values.clone()),
    };
    if let Some(k) = schemes.iter().find(|k| k.facts().planning == Planning::Refused) {
        bail!(
            "plan ranks schemes by time alone and does not search {SCHEME} {k}, whose value trades time against the gradient's error; compare it with gcsim sweep, which reports approx_error"
        );
    }
    if args.m.is_some() && !schemes.contains(&SchemeKind::CommEfficient) {
        bail!("{M} applies only to {SCHEME} comm-efficient, which is not in {SCHEME}");
    }
    let m = args
        .m
        .clone()
        .unwrap_or_else(|| range::parse("1").expect("a valid list"));
    if m.values.contains(&0) {
        bail!("{M} 0 is out of range; accepted: whole numbers >= 1");
    }
    let partial = schemes.iter().find(|k| k.facts().reads.contains(&Param::Parts));
    let parts = match (&args.parts, partial) {
        (Some(_), None) => {
            bail!("{PARTS} applies only to {SCHEME} partial-frc and partial-crc, neither of which is in {SCHEME}")
        }
        (None, Some(k)) => bail!("{SCHEME} {k} needs {PARTS} (e.g. {PARTS} 10, or 4,8,16)"),
        (Some(l), _) if l.values.iter().any(|&v| v == 0 || v > gcsim::scheme::MAX_PARTS) => bail!(
            "{PARTS} {} is out of range; accepted: whole numbers from 1 to {}",
            l.text,
            gcsim::scheme::MAX_PARTS
        ),
        (l, _) => l.as_ref().map_or(Vec::new(), |l| l.values.clone()),
    };
    Ok(Lists { timeouts, m, parts })
}

impl PlanConfig {
    /// The description of `req`, as planned from `args`.
    fn new(
        args: &PlanArgs,
        req: &PlanRequest,
        n0: usize,
        notes: Vec<String>,
        warnings: Vec<String>,
        m: &IntList,
    ) -> Self {
        let common = &args.common;
        PlanConfig {
            gcsim: env!("CARGO_PKG_VERSION").into(),
            command: "plan".into(),
            n: args.n.as_ref().map_or(n0.to_string(), |l| l.text.clone()),
            workers: req.workers.to_string(),
            load_model: req.load_model.name().to_string(),
            unit_time: req.load_model.unit_time(),
            ref_n: args.ref_n,
            objective: args.objective.to_string(),
            max_load: req.max_load,
            linear: args.linear,
            notes,
            warnings,
            schemes: req.schemes.clone(),
            m: m.text.clone(),
            parts: args.parts.as_ref().map(|l| l.text.clone()),
            timeout: args.timeout.as_ref().map(|l| l.text.clone()),
            trials: common.trials,
            iterations: common.iterations,
            seed: common.seed,
            comm: req.comm.to_string(),
            parallel: req.parallel.as_ref().map(Parallel::describe),
            aggregation: aggregation_label(req),
            buckets: plan::compares_buckets(req).then(|| {
                let given = common.collective.buckets.as_ref();
                given.map_or_else(|| "1".to_string(), |l| l.text.clone())
            }),
            time_unit: req.time_unit,
            costs: req.costs,
        }
    }
}

impl TryFrom<PlanArgs> for PlanJob {
    type Error = anyhow::Error;

    fn try_from(args: PlanArgs) -> Result<Self> {
        let common = &args.common;
        common.check_counts()?;
        let parallel = layout(&args)?;
        if common.analytic {
            bail!("plan chooses exact values itself: drop {ANALYTIC}");
        }
        let max_load = args.max_load.unwrap_or(DEFAULT_MAX_LOAD);
        if max_load.is_nan() || max_load < 1.0 {
            bail!(
                "{MAX_LOAD} {} is out of range; accepted: {MAX_LOAD_RANGE}",
                gcsim::param::plain(max_load)
            );
        }
        if let Some(r) = args.ref_n.filter(|&r| r == 0 || r as u64 > MAX_DRAWS_PER_TRIAL) {
            bail!(
                "{REF_N} {r} is out of range; accepted: a cluster size, a whole number from 1 to {MAX_DRAWS_PER_TRIAL}"
            );
        }
        let load_model = match parallel {
            Some(_) => LoadModel::Fixed,
            None => common.cluster.load_model_or("scaled")?,
        };
        let (mut notes, mut warnings) = defaults_said(&args, load_model);
        let (ns, n0, workers) = sizes(&args)?;
        let time_unit = common.cluster.time_unit_of(&workers);
        let parallel = match parallel {
            Some(_) => common.parallel.pipeline(&common.collective, time_unit)?,
            None => None,
        };
        warnings.extend(ns.iter().filter_map(|&n| workers.resample_note(n)));
        let trace_bootstrap = common.trace_bootstrap(&workers, &mut warnings)?;
        if let (Some(steps), 2..) = (workers.recorded_steps(), trace_bootstrap) {
            notes.push(super::job::bootstrap_text(
                steps,
                trace_bootstrap,
                common.trials,
                common.iterations,
            ));
        }
        let schemes = schemes_of(&args)?;
        let Lists { timeouts, m, parts } = lists(&args, &schemes)?;
        let req = PlanRequest {
            ns,
            workers,
            load_model,
            ref_n: args.ref_n,
            objective: args.objective,
            max_load: Some(max_load).filter(|l| l.is_finite()),
            schemes,
            m: m.values.clone(),
            parts,
            timeouts,
            trials: common.trials,
            seed: common.seed,
            iterations: common.iterations,
            comm: common.comm()?,
            aggregations: common.collective.aggregations(common.cost.gradient_size, time_unit)?,
            decoder: common.cluster.decoder,
            generator: common.cluster.generator,
            exact: !args.simulate,
            time_unit,
            costs: common.cost.model(time_unit)?,
            data_replicates: trace_bootstrap,
            parallel,
        };
        let output = match common.shard {
            Some(shard) => common.shard_output(shard)?,
            None => common
                .output()?
                .with_columns_and::<PlanRow>(&common.columns, &plan_columns(&req))?,
        };
        let config = PlanConfig::new(&args, &req, n0, notes, warnings, &m);
        Ok(Self {
            req,
            config,
            top: args.top,
            output,
            engine: common.engine(),
            shard: common.shard,
        })
    }
}

impl PlanJob {
    /// Plans and writes the ranking; a request no configuration satisfies is
    /// a [`UsageError`](super::UsageError).
    pub fn execute(self) -> Result<Status> {
        if let Some(shard) = self.shard {
            return self.write_shard(shard);
        }
        let (report, output) = self.search()?;
        write_plan(&report, &output)
    }
}

/// Writes a ranking, its warnings and what was written.
fn write_plan(report: &PlanReport, output: &Output) -> Result<Status> {
    let written = output.write(report)?;
    if written.is_some() || output.format != Format::Table {
        for warning in &report.config.warnings {
            eprintln!("warning: {warning}");
        }
    }
    if let Some(path) = written {
        note!("wrote {} rows to {}", report.rows.len(), path.display());
    }
    if let (Format::Csv, Some(r)) = (output.format, &report.recommendation) {
        note!("{r}");
    }
    Ok(Status::Success)
}

impl PlanJob {
    /// Runs the search: the ranked rows with their recommendation, and
    /// where they were to go.
    pub(crate) fn search(self) -> Result<(PlanReport, Output)> {
        let quiet = self.engine.quiet;
        let rows = self
            .engine
            .pool()?
            .install(|| {
                plan::plan(&self.req, &|study, options| {
                    let bar = Bar::new(quiet, study.trials());
                    engine::simulate_full(&engine::TrialPlan::new(study), study, &bar, options)
                })
            })
            .map_err(usage)?;
        let report = PlanReport {
            config: self.config,
            recommendation: plan::recommendation(&rows, &self.req.objective),
            rows,
            top: self.top,
        };
        Ok((report, self.output))
    }
}

impl Export for PlanReport {
    type Row = PlanRow;

    fn rows(&self) -> &[PlanRow] {
        &self.rows
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        table(self, out)
    }

    fn write_table_of(&self, columns: &export::Columns, out: &mut dyn Write) -> io::Result<()> {
        table_header(self, out)?;
        let cells = columns.table_cells(self, &Digits::PLAN)?;
        export::write_cells(&cells[..cells.len().min(self.top + 1)], out)?;
        table_footer(self, out)
    }

    fn digits(&self) -> &'static Digits {
        &Digits::PLAN
    }
}
