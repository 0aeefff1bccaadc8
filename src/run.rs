//! `gcsim run`: one configuration.

use anyhow::{Context, Result, bail};
use clap::Args;

use gcsim::param::Param;
use gcsim::report::{self, RunConfig};
use gcsim::scheme::{Params, Scheme, SchemeKind};

use super::common::CommonArgs;
use super::figure::{Figure, FigureKind};
use super::flags::{
    ANALYTIC, CODE, D, K, M, N, OUT, P, PARALLEL, PARTS, PLOT, Q, SCHEME, SHARD, SPECULATE_AFTER, SPECULATE_FACTOR,
    TIMELINE, TIMEOUT,
};
use super::job::Job;
use super::{parse_count, parse_workers, run_config};

/// Simulate one scheme on one cluster.
#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  gcsim run --n 100 --scheme crc --s 20
  gcsim run --n 100 --scheme frc --s 19 --load-model scaled --trials 1e6
  gcsim run -n 100 --scheme crc --s 20 --columns mean,p99,speedup
  gcsim run --n 50 --scheme mds --k 40 --dist shifted-exp:shift=1,rate=2 \\
      --load-model scaled
  gcsim run --n 100 --scheme comm-efficient --s 10 --m 4 --out result.json
  gcsim run --n 100 --scheme approx-regular --s 10 --d 3
  gcsim run --n 100 --scheme timeout --timeout 2.5   # proceed at T=2.5
  gcsim run --n 100 --scheme speculative --speculate-after 0.9
  gcsim run --n 100 --scheme k-batch-sync --k 90
  gcsim run --n 100 --scheme multi-message --s 3
  gcsim run --n 100 --scheme k-async --k 50       # an update per 50 gradients
  gcsim run --n 100 --scheme partial-crc --s 2 --parts 10
  gcsim run --n 40 --scheme polynomial --p 4 --q 8 --load-model scaled
  gcsim run --n 40 --scheme matdot --p 10    # inner split 10: any 19 suffice
  gcsim run --n 40 --scheme entangled --p 2 --m 2 --q 4   # any 17 suffice
  gcsim run --code my-code.csv              # a user's code, decoded by rank
  gcsim run --code my-code.csv --s 2        # ... from the fastest n-2 (inexact)")]
pub struct RunArgs {
    /// Number of workers (or give the cluster as --workers classes).
    #[arg(long, short, value_name = "N", value_parser = parse_workers, allow_negative_numbers = true)]
    pub n: Option<usize>,

    /// The scheme (custom by default with --code, uncoded with --parallel; required otherwise).
    #[arg(long, value_name = "SCHEME", value_parser = super::scheme_values())]
    pub scheme: Option<SchemeKind>,

    /// Straggler tolerance s, 0 <= s < n (ignore, frc, crc, comm-efficient; mds reads it as k=n-s).
    #[arg(long, value_name = "S", value_parser = parse_count, allow_negative_numbers = true)]
    pub s: Option<usize>,

    /// Message split m >= 1 with s + m <= n (comm-efficient); the inner
    /// split m >= 1 of entangled.
    #[arg(long, value_name = "M", value_parser = parse_count, allow_negative_numbers = true)]
    pub m: Option<usize>,

    /// Recovery threshold k, 1 <= k <= n (mds; the K gradients of
    /// k-batch-sync, k-async and k-batch-async).
    #[arg(long, value_name = "K", value_parser = parse_count, allow_negative_numbers = true)]
    pub k: Option<usize>,

    /// Degree d, 1 <= d <= n, of approx-regular's random regular graph: each
    /// worker stores d partitions [default: s+1, the load of frc and crc].
    #[arg(long, value_name = "D", value_parser = parse_count, allow_negative_numbers = true)]
    pub d: Option<usize>,

    /// Deadline T >= 0 of the timeout scheme, in the time unit (--time-unit) after the
    /// iteration starts: the master waits for all n workers until T, then
    /// proceeds with those that have arrived (the first one if none has).
    #[arg(long, value_name = "T", value_parser = super::number("a finite number >= 0, in the time unit of the workers' times"), allow_hyphen_values = true)]
    pub timeout: Option<f64>,

    #[command(flatten)]
    pub speculate: super::SpeculateArgs,

    /// With --parallel, write trial 0's iteration op by op to FILE.json as
    /// a Chrome trace (open it in ui.perfetto.dev): a process per replica,
    /// a thread per rank, each op, each stage's gradient sum and the
    /// optimizer step. Example: --timeline iteration.json
    #[arg(long, value_name = "FILE.json")]
    pub timeline: Option<std::path::PathBuf>,

    /// Partitions per worker L >= s+1 of partial-frc and partial-crc: its
    /// own L-s-1, then s+1 coded; its load is L/(L-s).
    #[arg(long, value_name = "L", value_parser = parse_count, allow_negative_numbers = true)]
    pub parts: Option<usize>,

    /// Row blocks p >= 1 of A (polynomial, entangled), or the inner split
    /// of matdot; the recovery threshold (pq, 2p-1, pmq+m-1) must be at most n.
    #[arg(long, value_name = "P", value_parser = parse_count, allow_negative_numbers = true)]
    pub p: Option<usize>,

    /// Column blocks q >= 1 of B (polynomial, entangled).
    #[arg(long, value_name = "Q", value_parser = parse_count, allow_negative_numbers = true)]
    pub q: Option<usize>,

    /// A user's encoding matrix (scheme custom): CSV without header, n rows
    /// (workers) by P columns (partitions); row i's nonzeros are the
    /// partitions worker i stores, its load is their count times n/P.
    #[arg(long, value_name = "FILE")]
    pub code: Option<std::path::PathBuf>,

    /// Draw the iteration-time distribution of this configuration against
    /// uncoded (survival function, log axis) to FILE (.png, .svg or .pdf).
    /// Example: --plot tail.pdf
    #[arg(long, value_name = "FILE")]
    pub plot: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub figure: super::figure::PlotArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// Refuses a scheme parameter that `kind` does not read: a mistake, not a
/// no-op (as in `sweep`).
fn check_read(args: &RunArgs, kind: SchemeKind, custom: bool) -> Result<()> {
    let reads = |param| kind.facts().reads.contains(&param);
    if args.m.is_some() && !reads(Param::M) {
        anyhow::bail!(
            "{M} applies only to {SCHEME} comm-efficient (message split) and entangled (inner split), not to {SCHEME} {kind}"
        );
    }
    let given = [
        (args.p.is_some(), P, Param::P),
        (args.q.is_some(), Q, Param::Q),
        (
            args.speculate.speculate_after.is_some(),
            SPECULATE_AFTER,
            Param::SpeculateAfter,
        ),
        (
            args.speculate.speculate_factor.is_some(),
            SPECULATE_FACTOR,
            Param::SpeculateFactor,
        ),
        (args.d.is_some(), D, Param::D),
        (custom, CODE, Param::Code),
        (args.timeout.is_some(), TIMEOUT, Param::Timeout),
        (args.k.is_some(), K, Param::K),
        (args.parts.is_some(), PARTS, Param::Parts),
    ];
    for (given, flag, param) in given {
        if given && !reads(param) {
            anyhow::bail!(
                "{flag} applies only to {SCHEME} {}, not to {SCHEME} {kind}",
                SchemeKind::readers_listed(param)
            );
        }
    }
    Ok(())
}

/// The scheme parameters as given.
fn params(args: &RunArgs) -> Params {
    Params {
        s: args.s,
        m: args.m,
        k: args.k,
        d: args.d,
        timeout: args.timeout,
        speculate_after: args.speculate.speculate_after,
        speculate_factor: args.speculate.speculate_factor,
        parts: args.parts,
        p: args.p,
        q: args.q,
    }
}

/// The scheme parameters in the output's config, as written.
fn record(config: &mut RunConfig, args: &RunArgs) {
    let text = |v: Option<usize>| v.map(|v| v.to_string());
    config.s = text(args.s);
    config.m = text(args.m);
    config.k = text(args.k);
    config.d = text(args.d);
    config.timeout = args.timeout.map(|v| v.to_string());
    config.speculate_after = args.speculate.speculate_after.map(|v| v.to_string());
    config.speculate_factor = args.speculate.speculate_factor.map(|v| v.to_string());
    config.parts = text(args.parts);
    config.p = text(args.p);
    config.q = text(args.q);
}

impl TryFrom<RunArgs> for Job {
    type Error = anyhow::Error;

    fn try_from(args: RunArgs) -> Result<Self> {
        let common = &args.common;
        common.check_counts()?;
        common.parallel.one_microbatch_count("run")?;
        let load_model = common.load_model()?;
        let custom = super::custom_code(args.code.as_deref(), args.n)?;
        let (asked, replicas) = common.layout_counts(args.n)?;
        let (n, workers) = common.population(asked.or(custom.as_ref().map(|m| m.b.nrows())))?;
        if n == 0 {
            anyhow::bail!("{N} 0 is out of range; accepted: a whole number >= 1");
        }
        let kind: SchemeKind = match (args.scheme, &custom) {
            (Some(s), _) => s,
            (None, Some(_)) => SchemeKind::Custom,
            // A pipeline job's question is first its own time: uncoded.
            (None, None) if replicas.is_some() => SchemeKind::Uncoded,
            (None, None) => anyhow::bail!("give {SCHEME} SCHEME (or {CODE} FILE for a user's code)"),
        };
        check_read(&args, kind, custom.is_some())?;
        let params = params(&args);
        let scheme = match &custom {
            Some(m) => Scheme::custom(m.shape(), args.s),
            None => Scheme::new(kind, replicas.unwrap_or(n), params),
        }
        .context("invalid configuration")?;
        let study = common.study(n, &workers, load_model, vec![scheme], custom)?;
        let mut config: RunConfig = run_config(report::Command::Run, &study, vec![kind]);
        common.describe(&mut config, study.workers())?;
        common.check_bootstrap_work(&study, &config)?;
        record(&mut config, &args);
        config.code = args.code.as_ref().map(|p| p.display().to_string());
        let output = common
            .output()?
            .with_columns_and::<gcsim::report::Row>(&common.columns, &config.extra_columns())?;
        let options = args
            .figure
            .options(args.plot.as_deref(), false, &[(OUT, common.out.as_deref())])?;
        let figure = args
            .plot
            .map(|p| Figure::new(p, FigureKind::Survival, options))
            .transpose()?;
        if figure.is_some() && common.shard.is_some() {
            bail!("{PLOT} needs the whole run: plot the merged result (gcsim merge FILES --plot FILE)");
        }
        let timeline = check_timeline(args.timeline, &study, common)?;
        let mut job = common.job(study, Vec::new(), config, output, figure);
        job.timeline = timeline;
        Ok(job)
    }
}

/// Checks `--timeline`: a writable `.json` file, for a pipeline job run
/// whole and simulated.
fn check_timeline(
    path: Option<std::path::PathBuf>,
    study: &gcsim::study::Study,
    common: &CommonArgs,
) -> Result<Option<std::path::PathBuf>> {
    let Some(path) = path else { return Ok(None) };
    if study.parallel().is_none() {
        bail!("{TIMELINE} draws a pipeline job's ops: give {PARALLEL} dp=D,pp=P,tp=T");
    }
    if common.shard.is_some() || common.analytic {
        bail!("{TIMELINE} samples one iteration of a whole, simulated run: drop {SHARD} and {ANALYTIC}");
    }
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if ext.as_deref() != Some("json") {
        bail!(
            "{TIMELINE} {}: a Chrome trace is JSON; give a .json file",
            path.display()
        );
    }
    super::output::check(TIMELINE, &path)?;
    Ok(Some(path))
}
