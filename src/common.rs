//! Flags shared by `run` and `sweep`, and their conversion into library types.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;
use clap::builder::PossibleValue;

use gcsim::comm::{Comm, Decoder, Link};
use gcsim::dist::Dist;
use gcsim::engine::bootstrap::replicate_trials;
use gcsim::export::Format;
use gcsim::load::LoadModel;
use gcsim::report::RunConfig;
use gcsim::shard::ShardId;
use gcsim::study::{MAX_DRAWS_PER_TRIAL, MAX_TOTAL_DRAWS, ParallelConflict, Study, StudyError};
use gcsim::units::TimeUnit;
use gcsim::workers::{self, Workers};

use super::PRICE_RANGE;
use super::figure::Figure;
use super::flags::{
    ANALYTIC, DECODER, DIST, FORMAT, GPU_HOUR_PRICE, ITERATIONS_PER_RUN, N, OUT, SHARD, SHUFFLE_PLACEMENT, TIME_UNIT,
    TRACE_BOOTSTRAP, TRIALS, WORKERS,
};
use super::job::{Engine, Job};
use super::output::{FormatArg, Output};

/// `--load-model` values, each with its formula.
fn load_model_values() -> super::AnyCase {
    let help = [
        "T = X: straggling does not grow with the work (Tandon et al. 2017)",
        "T = ℓ·X: time proportional to the work (Lee et al. 2017)",
        "T = X₁ + … + X_ℓ: one independent draw per unit of work",
        "T = c·ℓ + X, with --unit-time c",
    ];
    super::AnyCase::new(
        LoadModel::NAMES
            .iter()
            .zip(help)
            .map(|(n, h)| PossibleValue::new(*n).help(h)),
    )
}

/// The cluster and its model: who the workers are, how their time grows
/// with the work, how results reach the master and are decoded. Every
/// command that simulates takes these (`run`, `sweep`, `plan`, `train`).
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// Worker-time law for one uncoded share of the work: exp:rate=R (alias mu),
    /// shifted-exp:shift=S,rate=R, pareto:scale=X,shape=A, lognormal:mu=M,sigma=S
    /// (ln X ~ Normal(M, S²)), or weibull:scale=L,shape=K (P(X > x) = exp(-(x/L)^K));
    /// any of them may add p_slow=P,slowdown=F (a draw is F times slower with
    /// probability P), persist=RHO (0 <= RHO < 1: a slow worker stays slow
    /// with probability P + RHO(1 - P) in the next iteration; see
    /// --iterations) and group=G,p_group=Q,group_slowdown=H (consecutive
    /// groups of G workers are H times slower together with probability Q).
    /// Measured times: trace:path=FILE (each worker's time bootstrapped from
    /// every recorded time) or replay:path=FILE (each trial replays one
    /// recorded step; consecutive steps with --iterations), FILE a CSV with
    /// columns step,worker,time; `gcsim fit FILE` prints the best-fitting law,
    /// `gcsim trace FILE` the fitted p_slow, slowdown and persist. [default: exp:rate=1]
    /// Example: --dist exp:rate=1,p_slow=0.05,slowdown=8,persist=0.9
    #[arg(long, value_name = "DIST", value_parser = parse_dist)]
    pub dist: Option<Workers>,

    /// A class of COUNT workers of law DIST; repeat for a heterogeneous cluster.
    /// Workers keep the order given (frc's groups of consecutive workers see it;
    /// the k-of-n schemes, crc among them, decode from any set, so it cannot matter to them);
    /// n is the total. Example: --workers 90:exp:rate=1 --workers 10:exp:rate=0.2
    #[arg(long = "workers", value_name = "COUNT:DIST", value_parser = parse_class, allow_hyphen_values = true)]
    pub classes: Vec<(usize, Dist)>,

    /// With --workers: place the classes at random in every trial instead of in order.
    #[arg(long)]
    pub shuffle_placement: bool,

    /// Time one worker needs to send one full gradient to the master; a
    /// message of size `message` (1/m for comm-efficient) takes TAU × message.
    /// Example: --comm-time 0.5
    #[arg(long, value_name = "TAU", value_parser = super::number(super::TIME_RANGE), allow_hyphen_values = true)]
    pub comm_time: Option<f64>,

    /// Draw each message's full-gradient transfer time from DIST instead of
    /// --comm-time: a parametric law as in --dist, with optional
    /// p_slow/slowdown (not trace: or replay:). Example: --comm-dist exp:rate=2
    #[arg(long, value_name = "DIST", value_parser = parse_law)]
    pub comm_dist: Option<Dist>,

    /// The master's ingress: dedicated (a result arrives at finish + transfer)
    /// or shared (one message at a time, first come first served by finish).
    #[arg(long, default_value = "dedicated", value_name = "LINK", value_parser = super::listed([Link::Dedicated, Link::Shared], Link::name, |l| match l {
        Link::Dedicated => "Each worker has its own link to the master",
        Link::Shared => "One ingress link, first come first served (incast)",
    }))]
    pub link: Link,

    /// How the master decides it can decode: threshold (the scheme's recovery
    /// rule) or rank (the rank condition of the scheme's real encoding matrix,
    /// see `gcsim codes`; one least-squares solve per check, for small n).
    #[arg(long, default_value = "threshold", value_name = "DECODER", value_parser = super::listed([Decoder::Threshold, Decoder::Rank], Decoder::name, |d| match d {
        Decoder::Threshold => "The recovery rule: any k of n, or one worker of every frc group",
        Decoder::Rank => "The rank condition of the real code on the arrived workers",
    }))]
    pub decoder: Decoder,

    /// With --decoder rank: the generator of the codes that have several
    /// (comm-efficient and mds) [default: gaussian]. Vandermonde codes fail
    /// numerically beyond n ≈ 30, and such trials never decode (their time is inf).
    /// Example: --scheme mds --k 45 --decoder rank --generator vandermonde
    #[arg(long, value_name = "GENERATOR", value_parser = super::generator_values())]
    pub generator: Option<gcsim::codes::Generator>,

    /// Time the master spends decoding once it can, added to every iteration.
    #[arg(long, default_value_t = 0.0, value_name = "D", value_parser = super::number(super::TIME_RANGE), allow_hyphen_values = true)]
    pub decode_time: f64,

    /// How a worker's time grows with its load ℓ [default: fixed; plan: scaled].
    #[arg(long, value_name = "MODEL", value_parser = load_model_values())]
    pub load_model: Option<String>,

    /// The unit of every time: the --dist law's parameters, --comm-time,
    /// --unit-time, --decode-time, --timeout and the output: s, ms or us.
    /// Traces are read in seconds (converted to UNIT where given); without
    /// it a law's unit is unnamed. Costs in seconds and GPU-hours need it.
    /// Example: --dist shifted-exp:shift=120,rate=0.05 --time-unit ms
    #[arg(long, value_name = "UNIT", value_parser = parse_time_unit, ignore_case = true)]
    pub time_unit: Option<TimeUnit>,

    /// Compute time per unit of work c, for --load-model affine (required there).
    /// Example: --load-model affine --unit-time 0.145
    #[arg(long, value_name = "C", value_parser = super::number(super::TIME_RANGE), allow_hyphen_values = true)]
    pub unit_time: Option<f64>,
}

/// The cost view: what one run costs in wall-clock hours, GPU-hours and
/// money, and what each worker stores and sends, in bytes (`run`, `sweep`,
/// `plan`).
#[derive(Debug, Clone, Args)]
pub struct CostArgs {
    /// Iterations in one training run: adds run_hours and gpu_hours (needs
    /// the time unit: --time-unit, or a trace). Example: --iterations-per-run 20000
    #[arg(long, value_name = "N", value_parser = super::parse_count_u64, allow_negative_numbers = true)]
    pub iterations_per_run: Option<u64>,

    /// Price of one GPU-hour, in any currency: adds cost = gpu_hours × P
    /// (needs --iterations-per-run). Example: --gpu-hour-price 2.5
    #[arg(long, value_name = "P", value_parser = super::number(super::PRICE_RANGE), allow_hyphen_values = true)]
    pub gpu_hour_price: Option<f64>,

    /// Size of the whole data set: adds storage_bytes, what each worker
    /// stores (load × SIZE / n). Example: --dataset-size 1.2TB
    #[arg(long, value_name = "BYTES", value_parser = gcsim::units::parse_bytes, allow_negative_numbers = true)]
    pub dataset_size: Option<f64>,

    /// Size of one full gradient (4 bytes × parameters in fp32): adds
    /// bytes_per_iteration, what all workers send per iteration (under --aggregation, the collective's traffic). Example: --gradient-size 1.4GB
    #[arg(long, value_name = "BYTES", value_parser = gcsim::units::parse_bytes, allow_negative_numbers = true)]
    pub gradient_size: Option<f64>,
}

impl CostArgs {
    /// The cost model, checked against the time unit of the study.
    pub fn model(&self, unit: Option<TimeUnit>) -> Result<gcsim::units::CostModel> {
        if let Some(p) = self.gpu_hour_price.filter(|p| !(p.is_finite() && *p >= 0.0)) {
            bail!(
                "{GPU_HOUR_PRICE} {} is out of range; accepted: {PRICE_RANGE}",
                gcsim::param::plain(p)
            );
        }
        if self.gpu_hour_price.is_some() && self.iterations_per_run.is_none() {
            bail!("{GPU_HOUR_PRICE} prices a run: give {ITERATIONS_PER_RUN} N, the iterations of one run");
        }
        if self.iterations_per_run == Some(0) {
            bail!("{ITERATIONS_PER_RUN} 0 is out of range; accepted: a whole number >= 1");
        }
        let model = gcsim::units::CostModel {
            iterations_per_run: self.iterations_per_run,
            gpu_hour_price: self.gpu_hour_price,
            dataset_bytes: self.dataset_size,
            gradient_bytes: self.gradient_size,
        };
        if model.needs_time_unit() && unit.is_none() {
            bail!(
                "{ITERATIONS_PER_RUN} counts hours, which needs the time unit of {DIST}: give {TIME_UNIT} s, ms or us (a trace is in seconds)"
            );
        }
        Ok(model)
    }
}

/// Fewest recorded steps a trace should have before its tail is trusted.
pub const MIN_TRACE_STEPS: usize = 100;

/// The warning for a trace of `steps` < [`MIN_TRACE_STEPS`] recorded steps.
pub fn short_trace_warning(steps: usize) -> String {
    format!(
        "the trace has {steps} complete steps (fewer than {MIN_TRACE_STEPS}): its tail rests on a handful of recorded events, so a p99 is little more than its largest step; record more steps"
    )
}

/// Options every simulating subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,

    #[command(flatten)]
    pub cost: CostArgs,

    #[command(flatten)]
    pub collective: super::collective::CollectiveArgs,

    #[command(flatten)]
    pub parallel: super::parallel::ParallelArgs,

    /// Monte Carlo trials per configuration.
    #[arg(long, default_value_t = 100_000, value_name = "N", value_parser = super::parse_trials, allow_negative_numbers = true)]
    pub trials: u64,

    /// Consecutive iterations per trial: each trial's value is the total
    /// time of T iterations, with the workers' straggler states carried
    /// from one to the next (see `persist` in --dist) and a replayed trace
    /// stepping through consecutive steps. Example: --iterations 1000
    #[arg(long, default_value_t = 1, value_name = "T", value_parser = super::parse_iterations, allow_negative_numbers = true)]
    pub iterations: u64,

    /// With trace: or replay: workers, B bootstrap replicates of the
    /// recorded steps, each simulated on a tenth of --trials (2000 to
    /// 100000), whose spread widens the intervals by the uncertainty of
    /// having recorded so few steps; 0 for Monte Carlo error alone.
    /// [default: 30]
    #[arg(long, value_name = "B", value_parser = super::parse_count, allow_negative_numbers = true)]
    pub trace_bootstrap: Option<usize>,

    /// Master seed; the same seed gives the same bytes on any number of threads.
    #[arg(long, default_value_t = 0, value_name = "SEED", value_parser = super::parse_count_u64, allow_negative_numbers = true)]
    pub seed: u64,

    /// Worker threads, 1 to 1024 [default: all cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = super::parse_threads, allow_negative_numbers = true)]
    pub threads: Option<usize>,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_enum, ignore_case = true, value_name = "FORMAT")]
    pub format: Option<FormatArg>,

    /// Write the results to FILE (.csv, .json, .txt, .md or .tex), atomically: an
    /// interrupted run leaves any previous FILE as it was.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Only these columns in the table and the CSV, by their CSV names, in
    /// this order (JSON keeps every field). Example: --columns scheme,s,mean,p99
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub columns: Vec<String>,

    /// Exact values only, no Monte Carlo: mean and percentiles from the
    /// order-statistic formulas, for the configurations that have them
    /// (answers in seconds even for n = 10^6).
    #[arg(long)]
    pub analytic: bool,

    /// Run only the I-th of K disjoint parts of the trials and write a
    /// partial result to --out; `gcsim merge` combines the K files into the
    /// output of a single run, byte for byte. `slurm` takes I and K from a
    /// Slurm job array's task (SLURM_ARRAY_TASK_ID, _MIN, _MAX, _COUNT;
    /// `sbatch --array=1-20`). Example: --shard 3/10 --out part3.json
    #[arg(long, value_name = "I/K", value_parser = parse_shard, allow_hyphen_values = true)]
    pub shard: Option<ShardId>,

    /// No progress bar and no notes on stderr (what was written, values
    /// skipped); warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--dist`: a law, or a trace read from its file (relative to the working directory).
fn parse_dist(s: &str) -> Result<Workers, String> {
    Workers::from_dist(s, Path::new("")).map_err(|e| e.to_string())
}

fn parse_time_unit(s: &str) -> Result<TimeUnit, String> {
    s.parse()
}

fn parse_law(s: &str) -> Result<Dist, String> {
    s.parse::<Dist>().map_err(|e| e.to_string())
}

fn parse_class(s: &str) -> Result<(usize, Dist), String> {
    workers::parse_class(s).map_err(|e| e.to_string())
}

impl ClusterArgs {
    /// The communication and decoding model of --comm-time, --comm-dist,
    /// --link and --decode-time.
    pub fn comm(&self) -> Result<Comm> {
        Ok(Comm::new(self.comm_time, self.comm_dist, self.link, self.decode_time)?)
    }

    /// The cluster: n and who the workers are, from --n, --dist, --workers
    /// and --shuffle-placement.
    pub fn population(&self, n: Option<usize>) -> Result<(usize, Workers)> {
        if self.classes.is_empty() {
            if self.shuffle_placement {
                bail!("{SHUFFLE_PLACEMENT} places {WORKERS} classes; give {WORKERS} COUNT:DIST");
            }
            let Some(n) = n else {
                bail!("give {N} N (the number of workers), or the cluster as {WORKERS} COUNT:DIST ...");
            };
            let workers = (self.dist.clone()).unwrap_or_else(|| Workers::Iid(Dist::exp(1.0).expect("valid")));
            // A trace is in seconds: in another --time-unit its times are converted.
            let workers = match self.time_unit {
                Some(u) if workers.is_measured() && u != TimeUnit::Seconds => workers.scaled(u.per_second())?,
                _ => workers,
            };
            if let Workers::Trace(t) | Workers::Replay(t) = &workers {
                super::output::names::input(DIST, Path::new(t.file()))?;
            }
            return Ok((n, workers));
        }
        if self.dist.is_some() {
            bail!("{WORKERS} and {DIST} do not go together: each class names its law ({WORKERS} COUNT:DIST)");
        }
        // Checked: counts near usize::MAX would wrap to a small n.
        let total = self.classes.iter().try_fold(0usize, |sum, c| sum.checked_add(c.0));
        let Some(total) = total.filter(|&t| t as u64 <= MAX_DRAWS_PER_TRIAL) else {
            bail!(
                "the {WORKERS} classes add up to more than the limit of {MAX_DRAWS_PER_TRIAL} workers (one draw each per trial); use smaller counts"
            );
        };
        if let Some(n) = n.filter(|&n| n != total) {
            bail!("{N} {n} but the {WORKERS} classes add up to {total} workers; drop {N} or make them agree");
        }
        Ok((
            total,
            Workers::Classes {
                classes: self.classes.clone(),
                shuffle: self.shuffle_placement,
            },
        ))
    }

    /// The unit of the times: --time-unit, else seconds for a trace, else unnamed.
    pub fn time_unit_of(&self, workers: &Workers) -> Option<TimeUnit> {
        self.time_unit
            .or_else(|| workers.is_measured().then_some(TimeUnit::Seconds))
    }

    /// The load model, checked against --unit-time: `fixed` unless
    /// --load-model names one.
    pub fn load_model(&self) -> Result<LoadModel> {
        self.load_model_or("fixed")
    }

    /// The load model of --load-model, or of `default` where it is not given.
    pub fn load_model_or(&self, default: &str) -> Result<LoadModel> {
        Ok(LoadModel::new(
            self.load_model.as_deref().unwrap_or(default),
            self.unit_time,
        )?)
    }
}

impl CommonArgs {
    /// The communication and decoding model (see [`ClusterArgs::comm`]).
    pub fn comm(&self) -> Result<Comm> {
        self.cluster.comm()
    }

    /// The cluster (see [`ClusterArgs::population`]).
    pub fn population(&self, n: Option<usize>) -> Result<(usize, Workers)> {
        self.cluster.population(n)
    }

    /// How `run` and `sweep` sum gradients on `workers`: --aggregation, --gradient-size, the time unit.
    pub fn aggregation(&self, workers: &Workers) -> Result<gcsim::collective::Aggregation> {
        self.collective
            .aggregation(self.cost.gradient_size, self.cluster.time_unit_of(workers))
    }

    /// The study of `schemes` on the `n` workers `workers` with every
    /// common option: a hybrid-parallel job's under --parallel (`n` its
    /// ranks, the schemes built for its replicas), a flat cluster's
    /// otherwise.
    pub fn study(
        &self,
        n: usize,
        workers: &Workers,
        load_model: LoadModel,
        schemes: Vec<gcsim::scheme::Scheme>,
        custom: Option<gcsim::codes::custom::CustomMatrix>,
    ) -> Result<Study> {
        let unit = self.cluster.time_unit_of(workers);
        let base = match self.parallel.pipeline(&self.collective, unit)? {
            Some(p) => {
                if load_model != LoadModel::Fixed {
                    return Err(StudyError::UnderParallel(ParallelConflict::LoadModel).into());
                }
                Study::hybrid(p, workers.clone(), schemes, self.trials, self.seed)?
            }
            None => Study::with_workers(n, workers.clone(), load_model, schemes, self.trials, self.seed)?,
        };
        Ok(base
            .with_comm(self.comm()?)
            .with_custom(custom)?
            .with_decoder(self.cluster.decoder)?
            .with_generator(self.cluster.generator)?
            .with_iterations(self.iterations)?
            .with_aggregation(self.aggregation(workers)?)?)
    }

    /// The workers' count to ask the population for, and the n the schemes
    /// are built for: --parallel's ranks and replicas where it is given.
    pub fn layout_counts(&self, n: Option<usize>) -> Result<(Option<usize>, Option<usize>)> {
        match self.parallel.parallel()? {
            Some(p) => Ok((Some(super::parallel::ParallelArgs::ranks(&p, n)?), Some(p.layout.dp))),
            None => Ok((n, None)),
        }
    }

    /// The load model (see [`ClusterArgs::load_model`]).
    pub fn load_model(&self) -> Result<LoadModel> {
        self.cluster.load_model()
    }

    /// Checks --trials and --threads, and the flags that do not go together.
    pub fn check_counts(&self) -> Result<()> {
        if self.analytic && self.cluster.decoder == Decoder::Rank {
            bail!(
                "{ANALYTIC} and {DECODER} rank do not go together: {ANALYTIC} gives the recovery rule's exact law, and the rank decoder is simulated"
            );
        }
        Ok(())
    }

    /// The bootstrap replicates of --trace-bootstrap for `workers` (0 for
    /// a law, or under --analytic), checked; pushes the warning for a trace
    /// of fewer than [`MIN_TRACE_STEPS`] steps.
    pub fn trace_bootstrap(&self, workers: &Workers, warnings: &mut Vec<String>) -> Result<usize> {
        use gcsim::engine::bootstrap::{self, ReplicatesError};
        if let Some(steps) = workers.recorded_steps().filter(|&s| s < MIN_TRACE_STEPS) {
            warnings.push(short_trace_warning(steps));
        }
        bootstrap::replicates(self.trace_bootstrap, workers, self.analytic).map_err(|e| {
            anyhow::anyhow!(match e {
                ReplicatesError::NoTrace => format!(
                    "{TRACE_BOOTSTRAP} resamples a trace's recorded steps: it needs {DIST} trace:path=FILE or replay:path=FILE"
                ),
                ReplicatesError::One => {
                    format!("{TRACE_BOOTSTRAP} 1 estimates no spread; accepted: 0 (off) or a whole number >= 2")
                }
                ReplicatesError::Analytic => format!(
                    "{TRACE_BOOTSTRAP} widens Monte Carlo intervals, and {ANALYTIC} has none: drop one of them"
                ),
            })
        })
    }

    /// Sets what `run` and `sweep` share in their output's description:
    /// the time unit, the cost view and the bootstrap over a trace's steps.
    pub fn describe(&self, config: &mut RunConfig, workers: &Workers) -> Result<()> {
        config.time_unit = self.cluster.time_unit_of(workers);
        config.costs = self.cost.model(config.time_unit)?;
        let replicates = self.trace_bootstrap(workers, &mut config.warnings)?;
        config.trace_bootstrap = (replicates >= 2).then_some(replicates);
        Ok(())
    }

    /// Checks that `study` and its bootstrap replicates of `config` stay
    /// within the draw limit of one run.
    pub fn check_bootstrap_work(&self, study: &Study, config: &RunConfig) -> Result<()> {
        let Some(replicates) = config.trace_bootstrap else {
            return Ok(());
        };
        let draws = gcsim::engine::bootstrap::total_draws(study, replicates);
        if draws > u128::from(MAX_TOTAL_DRAWS) {
            bail!(
                "{TRACE_BOOTSTRAP} {replicates}: the run and its {replicates} replicates of {} trials take {draws} worker draws, more than the limit of {MAX_TOTAL_DRAWS} (about a day on two cores); lower {TRACE_BOOTSTRAP} or {TRIALS}",
                replicate_trials(self.trials)
            );
        }
        Ok(())
    }

    /// The job of `study` (and its other `sizes`), with these flags'
    /// engine, `--analytic` and `--shard`.
    pub(crate) fn job(
        &self,
        study: Study,
        sizes: Vec<Study>,
        config: RunConfig,
        output: Output,
        figure: Option<Figure>,
    ) -> Job {
        Job {
            study,
            sizes,
            config,
            output,
            engine: self.engine(),
            analytic: self.analytic,
            shard: self.shard,
            figure,
            timeline: None,
        }
    }

    /// Threads and progress of --threads and --quiet.
    pub fn engine(&self) -> Engine {
        Engine {
            threads: self.threads,
            quiet: self.quiet,
        }
    }

    /// The output of --format and --out, checked before any work starts. A
    /// shard always writes its partial result to --out, as JSON.
    pub fn output(&self) -> Result<Output> {
        if let Some(shard) = self.shard {
            if self.analytic {
                // Measured: 4000 configurations at n = 2000 take about a
                // second, so a split would save nothing a user could notice.
                bail!(
                    "{SHARD} and {ANALYTIC} do not go together: {ANALYTIC} runs no trials and computes a whole sweep in about a second (4000 configurations at n = 2000); run it once, without {SHARD}"
                );
            }
            if shard.count > self.trials {
                bail!(
                    "{SHARD} {}/{}: {} trials split into at most {} shards (each runs at least one trial): give K <= {} (or more {TRIALS})",
                    shard.index,
                    shard.count,
                    self.trials,
                    self.trials,
                    self.trials
                );
            }
            return self.shard_output(shard);
        }
        Output::resolve(self.format.map(|f| f.0), self.out.as_deref())
    }

    /// The output of shard `shard`'s partial result (of a run, a sweep or a
    /// plan): JSON, every column, to --out.
    pub fn shard_output(&self, shard: ShardId) -> Result<Output> {
        partial_output(shard, self.out.as_deref(), &self.columns, self.format.map(|f| f.0))
    }
}

/// The output of shard `shard`'s partial result (of any command): JSON,
/// every column, to `out`; refused without `--out`, with `--columns`, with
/// another `--format` or another extension.
pub fn partial_output(
    shard: ShardId,
    out: Option<&Path>,
    columns: &[String],
    format: Option<Format>,
) -> Result<Output> {
    let Some(out) = out else {
        bail!(
            "{SHARD} {}/{} writes a partial result file: give {OUT} FILE.json",
            shard.index,
            shard.count
        );
    };
    if !columns.is_empty() {
        bail!("{SHARD} writes a partial result with every column: give --columns to gcsim merge");
    }
    if let Some(f) = format.filter(|&f| f != Format::Json) {
        bail!("{SHARD} writes its partial result as JSON: drop {FORMAT} {f} (or give {FORMAT} json)");
    }
    if out.extension().is_some_and(|e| !e.eq_ignore_ascii_case("json")) {
        bail!(
            "{SHARD} writes its partial result as JSON: give {OUT} a .json file (not {})",
            out.display()
        );
    }
    Output::resolve(Some(Format::Json), Some(out))
}

/// `I/K`, 1 ≤ I ≤ K: the I-th of K shards; `slurm`: this task's shard of
/// a Slurm job array (see [`ShardId::from_slurm`]).
pub(super) fn parse_shard(s: &str) -> Result<ShardId, String> {
    if s == "slurm" {
        return ShardId::from_slurm(|name| std::env::var(name).ok());
    }
    let accepted = "accepted: I/K with 1 <= I <= K, e.g. 3/10, or slurm (a task of a Slurm job array)";
    let (i, k) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not I/K; {accepted}"))?;
    let (i, k) = match (gcsim::range::whole(i), gcsim::range::whole(k)) {
        (Ok(i), Ok(k)) => (i, k),
        _ => return Err(format!("`{s}` is not I/K with whole numbers; {accepted}")),
    };
    if i == 0 || k == 0 || i > k {
        return Err(format!("`{s}` is out of range; {accepted}"));
    }
    Ok(ShardId { index: i, count: k })
}
