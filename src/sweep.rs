//! `gcsim sweep`: every scheme × parameter value, on the same draws.

use anyhow::{Result, bail};
use clap::Args;

use gcsim::scheme::SchemeKind;
use gcsim::study::Study;
use gcsim_figures::plot::sweep::Metric;

use super::common::CommonArgs;
use super::figure::{Figure, FigureKind, metric_parser};
use super::flags::{CODE, MICROBATCHES, N, OUT, PARALLEL, PLOT, SHARD, WORKERS};
use super::job::Job;
use super::run_config;
use gcsim::range::{self, IntList};
use gcsim::sweep::{self, Expanded, Ranges};

/// Simulate schemes over ranges of s, m and k; every configuration sees the
/// same worker draws, so speedups are paired comparisons.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Ranges are A..B (both ends included), comma lists, or both: 0..10,20,30.
A scheme skips the values it does not admit (frc where s+1 does not divide n,
comm-efficient where s+m > n) and says so.

Examples:
  gcsim sweep --n 100 --s 0..50
  gcsim sweep --n 100 --s 0..50 --columns scheme,s,mean,p99 --format csv
  gcsim sweep --n 100 --s 0..10 --scheme uncoded,ignore,frc,crc \\
      --dist exp:rate=1,p_slow=0.05,slowdown=8
  gcsim sweep --n 20 --s 2 --m 1..10 --scheme comm-efficient,crc \\
      --load-model affine --unit-time 0.145
  gcsim sweep --n 50 --k 1..50 --scheme mds --dist shifted-exp:shift=1,rate=1 \\
      --load-model scaled --out mds.csv
  gcsim sweep --n 60 --s 0..30 --d 3 --scheme ignore,approx-regular,crc
  gcsim sweep --n 50 --scheme mds --k 45 --generator vandermonde --decoder rank
  gcsim sweep --n 100 --scheme uncoded,timeout --timeout 1.5,2,3,4
  gcsim sweep --n 100 --s 0..20 \\
      --scheme ignore,k-batch-sync,multi-message,speculative \\
      --dist exp:rate=1,p_slow=0.05,slowdown=8 --load-model scaled
  gcsim sweep --n 100 --k 10,50,90 --scheme k-batch-sync,k-async,k-batch-async
  gcsim sweep --n 60 --s 0..5 --parts 8 --scheme crc,partial-crc \\
      --load-model scaled
  gcsim sweep --n 40 --scheme polynomial,entangled --p 1..4 --q 2,4,8 --m 2 \\
      --load-model scaled    # every split whose threshold is at most n
  gcsim sweep --n 16,32,64 --s 0..3 --scheme uncoded,frc --load-model scaled \\
      --dist replay:path=data/trace-llm-64w.csv --time-unit ms"
)]
pub struct SweepArgs {
    /// Number of workers (or give the cluster as --workers classes); a list
    /// or range (16,32,64) sweeps each cluster size, in the order given.
    #[arg(long, short, value_name = "N", value_parser = range::parse, allow_negative_numbers = true)]
    pub n: Option<IntList>,

    #[command(flatten)]
    pub grid: GridArgs,

    /// Draw the sweep to FILE (.png, .svg or .pdf, by the extension):
    /// --plot-metric against s (or m, k, the deadline T), one colour and
    /// marker per scheme, simulated values as markers, exact curves as thin
    /// dashed lines on top, inexact strategies hollow and dotted, a gap
    /// where a scheme admits no value. Example: --plot speedup.pdf
    #[arg(long, value_name = "FILE")]
    pub plot: Option<std::path::PathBuf>,

    /// What the figure shows.
    #[arg(long, default_value_t = Metric::Speedup, value_name = "METRIC", value_parser = metric_parser())]
    pub plot_metric: Metric,

    /// A logarithmic y axis (values <= 0 are left out of the figure and
    /// of --plot-data). Example: --plot-metric mean --log-y
    #[arg(long)]
    pub log_y: bool,

    #[command(flatten)]
    pub figure: super::figure::PlotArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The schemes and the ranges of their parameters: every combination is a
/// configuration (`sweep`, `train`).
#[derive(Debug, Clone, Args)]
pub struct GridArgs {
    /// Schemes to compare, comma-separated [default: crc; custom with --code].
    #[arg(long, value_delimiter = ',', value_name = "SCHEMES", value_parser = super::scheme_values())]
    pub scheme: Vec<SchemeKind>,

    /// Straggler tolerances, e.g. 0..50 or 0,5,10 (ignore, frc, crc, comm-efficient; mds reads them as k=n-s).
    #[arg(long, value_name = "RANGE", value_parser = range::parse, allow_hyphen_values = true)]
    pub s: Option<IntList>,

    /// Message splits for comm-efficient, e.g. 1..10; for entangled, the
    /// inner splits m (each combined with every --p and --q).
    #[arg(long, value_name = "RANGE", value_parser = range::parse, allow_hyphen_values = true)]
    pub m: Option<IntList>,

    /// Recovery thresholds for mds, k-batch-sync, k-async and k-batch-async,
    /// e.g. 1..100 (instead of k=n-s).
    #[arg(long, value_name = "RANGE", value_parser = range::parse, allow_hyphen_values = true)]
    pub k: Option<IntList>,

    /// Graph degrees for approx-regular, e.g. 2..5 [default: s+1 for each s, the load of frc and crc].
    #[arg(long, value_name = "RANGE", value_parser = range::parse, allow_hyphen_values = true)]
    pub d: Option<IntList>,

    /// Deadlines for the timeout scheme, a comma list of times >= 0 in the
    /// time unit (--time-unit), e.g. 1.5,2,3.
    #[arg(long, value_name = "TIMES", value_parser = range::parse_times, allow_hyphen_values = true)]
    pub timeout: Option<range::TimeList>,

    #[command(flatten)]
    pub speculate: super::SpeculateArgs,

    /// Partitions per worker for partial-frc and partial-crc, e.g. 10 or
    /// 4..20: L >= s+1, of which L-s-1 are the worker's own.
    #[arg(long, value_name = "RANGE", value_parser = range::parse, allow_hyphen_values = true)]
    pub parts: Option<IntList>,

    /// Row blocks p of A for polynomial and entangled, or matdot's inner
    /// split, e.g. 1..4: a sweep runs every combination of --p, --q (and
    /// --m for entangled) and skips those whose threshold exceeds n.
    #[arg(long, value_name = "RANGE", value_parser = range::parse, allow_hyphen_values = true)]
    pub p: Option<IntList>,

    /// Column blocks q of B for polynomial and entangled, e.g. 1..4.
    #[arg(long, value_name = "RANGE", value_parser = range::parse, allow_hyphen_values = true)]
    pub q: Option<IntList>,

    /// A user's encoding matrix for the scheme custom (see `gcsim run --help`);
    /// with --s, custom waits for the fastest n-s and is inexact.
    #[arg(long, value_name = "FILE")]
    pub code: Option<std::path::PathBuf>,
}

impl GridArgs {
    /// The user's code of --code, checked against `n` where both are given.
    pub fn custom(&self, n: Option<usize>) -> Result<Option<gcsim::codes::custom::CustomMatrix>> {
        super::custom_code(self.code.as_deref(), n)
    }

    /// The schemes asked for: --scheme, or custom with --code, or crc.
    pub fn kinds(&self, custom: bool) -> Vec<SchemeKind> {
        match (self.scheme.is_empty(), custom) {
            (true, true) => vec![SchemeKind::Custom],
            (true, false) => vec![SchemeKind::Crc],
            (false, _) => self.scheme.clone(),
        }
    }

    /// The parameter ranges, for a custom matrix of shape `custom`.
    pub fn ranges(&self, custom: Option<gcsim::scheme::CustomShape>) -> Ranges {
        Ranges {
            s: self.s.clone(),
            m: self.m.clone(),
            k: self.k.clone(),
            d: self.d.clone(),
            custom,
            timeout: self.timeout.clone(),
            speculate_after: self.speculate.speculate_after,
            speculate_factor: self.speculate.speculate_factor,
            parts: self.parts.clone(),
            p: self.p.clone(),
            q: self.q.clone(),
        }
    }

    /// The configurations on `n` workers, and those skipped; checks that
    /// every value given is read by some scheme.
    pub fn expand(&self, n: usize, custom: Option<gcsim::scheme::CustomShape>) -> Result<Expanded> {
        Ok(sweep::expand(n, &self.kinds(custom.is_some()), &self.ranges(custom))?)
    }

    /// Writes the ranges as given into `config`.
    pub fn describe(&self, config: &mut gcsim::report::RunConfig) {
        config.s = self.s.as_ref().map(|l| l.text.clone());
        config.m = self.m.as_ref().map(|l| l.text.clone());
        config.k = self.k.as_ref().map(|l| l.text.clone());
        config.d = self.d.as_ref().map(|l| l.text.clone());
        config.timeout = self.timeout.as_ref().map(|l| l.text.clone());
        config.speculate_after = self.speculate.speculate_after.map(|v| v.to_string());
        config.speculate_factor = self.speculate.speculate_factor.map(|v| v.to_string());
        config.parts = self.parts.as_ref().map(|l| l.text.clone());
        config.p = self.p.as_ref().map(|l| l.text.clone());
        config.q = self.q.as_ref().map(|l| l.text.clone());
        config.code = self.code.as_ref().map(|p| p.display().to_string());
    }
}

/// The shape of a user's code, where one is given.
fn custom_shape(custom: &Option<gcsim::codes::custom::CustomMatrix>) -> Option<gcsim::scheme::CustomShape> {
    custom.as_ref().map(|m| m.shape())
}

/// Refuses what several cluster sizes (`several`) or several microbatch
/// counts do not go with.
fn check_sizes(args: &SweepArgs, several: bool) -> Result<()> {
    let (common, grid) = (&args.common, &args.grid);
    if several {
        if grid.code.is_some() {
            bail!("{CODE} fixes n (its rows): give one {N}");
        }
        if !common.cluster.classes.is_empty() {
            bail!("{WORKERS} fixes n (the classes' total): give one {N} or none");
        }
        if common.shard.is_some() {
            bail!("{SHARD} runs one cluster size: give one {N} per sharded run");
        }
        if args.plot.is_some() {
            bail!("{PLOT} draws one cluster size: give one {N}, or plot each");
        }
    }
    if several && common.parallel.parallel.is_some() {
        bail!("{PARALLEL} fixes n (its ranks): give one {N} or none");
    }
    if let (Some(l), Some(_)) = (common.parallel.microbatch_list(), common.shard) {
        bail!(
            "{SHARD} runs one job: give one {MICROBATCHES} per sharded run, not {}",
            l.text
        );
    }
    Ok(())
}

impl TryFrom<SweepArgs> for Job {
    type Error = anyhow::Error;

    fn try_from(args: SweepArgs) -> Result<Self> {
        let common = args.common.clone();
        common.check_counts()?;
        let load_model = common.load_model()?;
        let grid = &args.grid;
        let ns: Vec<usize> = args.n.as_ref().map_or(Vec::new(), |l| l.values.clone());
        if let Some(&bad) = ns.iter().find(|&&n| n == 0) {
            bail!("{N} {bad} is out of range; accepted: a whole number >= 1");
        }
        let several = ns.len() > 1;
        check_sizes(&args, several)?;
        let microbatches = common.parallel.microbatch_list().cloned();
        let custom = grid.custom(ns.first().copied())?;
        let (asked, replicas) = common.layout_counts(ns.first().copied())?;
        let (n, workers) = common.population(asked.or(custom.as_ref().map(|m| m.b.nrows())))?;
        if n == 0 {
            bail!("{N} 0 is out of range; accepted: a whole number >= 1");
        }
        let kinds = grid.kinds(custom.is_some());
        let study_at = |n: usize, custom| -> Result<(Study, Vec<String>)> {
            let Expanded { schemes, skipped } = grid.expand(replicas.unwrap_or(n), custom_shape(&custom))?;
            let study = common.study(n, &workers, load_model, schemes, custom)?;
            Ok((study, skipped))
        };
        let (study, skipped) = study_at(n, custom)?;
        let mut sizes = Vec::new();
        let mut skipped = if several {
            skipped.into_iter().map(|k| format!("n={n}: {k}")).collect()
        } else {
            skipped
        };
        for &other in ns.iter().skip(1) {
            let (st, more) = study_at(other, None)?;
            skipped.extend(more.into_iter().map(|k| format!("n={other}: {k}")));
            sizes.push(st);
        }
        // The same job at each other microbatch count, its rows after the first's.
        for &m in microbatches.iter().flat_map(|l| &l.values[1..]) {
            let at = CommonArgs {
                parallel: common.parallel.with_microbatches(m),
                ..common.clone()
            };
            let Expanded { schemes, skipped: more } = grid.expand(replicas.unwrap_or(n), None)?;
            skipped.extend(more.into_iter().map(|k| format!("M={m}: {k}")));
            sizes.push(at.study(n, &workers, load_model, schemes, None)?);
        }
        let mut unique: Vec<SchemeKind> = Vec::new();
        for &k in &kinds {
            if !unique.contains(&k) {
                unique.push(k);
            }
        }
        let mut config = run_config(gcsim::report::Command::Sweep, &study, unique);
        common.describe(&mut config, study.workers())?;
        for st in std::iter::once(&study).chain(&sizes) {
            common.check_bootstrap_work(st, &config)?;
        }
        grid.describe(&mut config);
        config.skipped = skipped;
        if let Some(l) = &microbatches {
            config.microbatches = Some(l.text.clone());
        }
        if several {
            config.sizes = args.n.as_ref().map(|l| l.text.clone());
            config
                .warnings
                .extend(sizes.iter().filter_map(|st| st.workers().resample_note(st.n())));
        }
        let output = common
            .output()?
            .with_columns_and::<gcsim::report::Row>(&common.columns, &config.extra_columns())?;
        if args.plot.is_some() {
            let deadlines = grid.timeout.as_ref().map_or(0, |l| l.values.len());
            gcsim_figures::plot::sweep::axes_of(kinds.iter().copied(), deadlines)
                .map_err(|e| anyhow::anyhow!("{PLOT}: {e}"))?;
        }
        let options = args
            .figure
            .options(args.plot.as_deref(), args.log_y, &[(OUT, common.out.as_deref())])?;
        let figure = args
            .plot
            .map(|p| Figure::new(p, FigureKind::Sweep(args.plot_metric), options))
            .transpose()?;
        if figure.is_some() && common.shard.is_some() {
            bail!("{PLOT} needs the whole run: plot the merged result (gcsim merge FILES --plot FILE)");
        }
        Ok(common.job(study, sizes, config, output, figure))
    }
}
