//! Flags shared by `run` and `sweep`, and their conversion into library types.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

use gcsim::dist::Dist;
use gcsim::export::Format;
use gcsim::load::LoadModel;
use gcsim::shard::ShardId;

/// `--load-model` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LoadModelArg {
    /// T = X: straggling does not grow with the work (Tandon et al. 2017).
    Fixed,
    /// T = ℓ·X: time proportional to the work (Lee et al. 2017).
    Scaled,
    /// T = X₁ + … + X_ℓ: one independent draw per unit of work.
    Additive,
    /// T = c·ℓ + X, with --unit-time c.
    Affine,
}

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Aligned columns (the default on a terminal).
    Table,
    /// Comma-separated values with a header row (the default when piped).
    Csv,
    /// {"config": {...}, "rows": [...]}.
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

/// Options every simulating subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Worker-time law for one uncoded share of the work: exp:rate=R (alias mu),
    /// shifted-exp:shift=S,rate=R, pareto:scale=X,shape=A, lognormal:mu=M,sigma=S
    /// (ln X ~ Normal(M, S²)), or weibull:scale=L,shape=K (P(X > x) = exp(-(x/L)^K));
    /// any of them may add p_slow=P,slowdown=F (a draw is F times slower with
    /// probability P). `gcsim fit TRACE` prints the best-fitting one for measured times.
    /// Example: --dist exp:rate=1,p_slow=0.05,slowdown=8
    #[arg(long, default_value = "exp:rate=1", value_name = "DIST", value_parser = parse_dist)]
    pub dist: Dist,

    /// How a worker's time grows with its load ℓ.
    #[arg(long, value_enum, default_value_t = LoadModelArg::Fixed, value_name = "MODEL")]
    pub load_model: LoadModelArg,

    /// Compute time per unit of work c, for --load-model affine (required there).
    /// Example: --load-model affine --unit-time 0.145
    #[arg(long, value_name = "C")]
    pub unit_time: Option<f64>,

    /// Monte Carlo trials per configuration.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub trials: u64,

    /// Master seed; the same seed gives the same bytes on any number of threads.
    #[arg(long, default_value_t = 0, value_name = "SEED")]
    pub seed: u64,

    /// Worker threads [default: all cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Output format [default: from --out's extension; else table on a terminal, csv otherwise].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,

    /// Write the results to FILE (.csv, .json or .txt), atomically: an
    /// interrupted run leaves any previous FILE as it was.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Exact values only, no Monte Carlo: mean and percentiles from the
    /// order-statistic formulas, for the configurations that have them
    /// (answers in seconds even for n = 10^6).
    #[arg(long)]
    pub analytic: bool,

    /// Run only the I-th of K disjoint parts of the trials and write a
    /// partial result to --out; `gcsim merge` combines the K files into the
    /// output of a single run, byte for byte. Example: --shard 3/10 --out part3.json
    #[arg(long, value_name = "I/K", value_parser = parse_shard)]
    pub shard: Option<ShardId>,

    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_dist(s: &str) -> Result<Dist, String> {
    s.parse::<Dist>().map_err(|e| e.to_string())
}

/// Where and how results go, validated before any work starts.
#[derive(Debug)]
pub struct Output {
    /// Format of the file, or of stdout when there is no file.
    pub format: Format,
    /// The file to write, with its temporary sibling already created.
    pub file: Option<(PathBuf, tempfile::NamedTempFile)>,
}

impl CommonArgs {
    /// The load model, checked against --unit-time.
    pub fn load_model(&self) -> Result<LoadModel> {
        let name = self.load_model.to_possible_value().expect("no skipped variants");
        Ok(LoadModel::new(name.get_name(), self.unit_time)?)
    }

    /// Checks --trials and --threads.
    pub fn check_counts(&self) -> Result<()> {
        if self.trials == 0 {
            bail!("--trials 0 is out of range; accepted: a whole number >= 1");
        }
        if self.threads == Some(0) {
            bail!("--threads 0 is out of range; accepted: a whole number >= 1");
        }
        Ok(())
    }

    /// Resolves the format and opens the output's temporary file next to it,
    /// so that an unwritable destination fails before the simulation. A
    /// shard always writes its partial-result file to --out.
    pub fn output(&self, stdout_is_terminal: bool) -> Result<Output> {
        if let Some(shard) = self.shard {
            if self.out.is_none() {
                bail!(
                    "--shard {}/{} writes a partial result file: give --out FILE",
                    shard.index,
                    shard.count
                );
            }
            if self.analytic {
                bail!("--shard and --analytic do not go together: --analytic runs no trials");
            }
            return resolve_output(Some(FormatArg::Json), self.out.as_ref(), stdout_is_terminal);
        }
        resolve_output(self.format, self.out.as_ref(), stdout_is_terminal)
    }
}

/// The output format and destination of `--format` and `--out`, with the
/// destination's temporary file already open.
pub fn resolve_output(format: Option<FormatArg>, out: Option<&PathBuf>, stdout_is_terminal: bool) -> Result<Output> {
    let Some(path) = out else {
        let default = if stdout_is_terminal { Format::Table } else { Format::Csv };
        return Ok(Output {
            format: format.map_or(default, Format::from),
            file: None,
        });
    };
    let format = match (format, Format::from_extension(path)) {
        (Some(f), _) => f.into(),
        (None, Some(f)) => f,
        (None, None) => {
            bail!(
                "--out {}: cannot tell the format from the extension; use .csv, .json or .txt, or give --format",
                path.display()
            )
        }
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        bail!(
            "--out {}: the directory {} does not exist",
            path.display(),
            dir.display()
        );
    }
    if path.is_dir() {
        bail!("--out {}: is a directory; give a file name", path.display());
    }
    let tmp = tempfile::Builder::new()
        .prefix(".gcsim-")
        .suffix(".partial")
        .tempfile_in(&dir)
        .with_context(|| format!("--out {}: cannot write in {}", path.display(), dir.display()))?;
    Ok(Output {
        format,
        file: Some((path.clone(), tmp)),
    })
}

/// `I/K`, 1 ≤ I ≤ K: the I-th of K shards.
fn parse_shard(s: &str) -> Result<ShardId, String> {
    let accepted = "accepted: I/K with 1 <= I <= K, e.g. 3/10";
    let (i, k) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not I/K; {accepted}"))?;
    let (i, k): (u64, u64) = match (i.trim().parse(), k.trim().parse()) {
        (Ok(i), Ok(k)) => (i, k),
        _ => return Err(format!("`{s}` is not I/K with whole numbers; {accepted}")),
    };
    if i == 0 || k == 0 || i > k {
        return Err(format!("`{s}` is out of range; {accepted}"));
    }
    Ok(ShardId { index: i, count: k })
}
