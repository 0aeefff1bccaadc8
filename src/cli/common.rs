//! Flags shared by `run` and `sweep`, and their conversion into library types.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};

use gcsim::dist::Dist;
use gcsim::export::Format;
use std::sync::Arc;

use gcsim::comm::{Comm, Link, Transfer};
use gcsim::load::LoadModel;
use gcsim::shard::ShardId;
use gcsim::study::{Decoder, Workers};
use gcsim::trace::Trace;

use super::job::Engine;
use super::output::{FormatArg, Output};

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

/// `--decoder` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecoderArg {
    /// The recovery rule: any k of n, or one worker of every frc group.
    Threshold,
    /// The rank condition of the real code on the arrived workers.
    Rank,
}

impl From<DecoderArg> for Decoder {
    fn from(d: DecoderArg) -> Self {
        match d {
            DecoderArg::Threshold => Decoder::Threshold,
            DecoderArg::Rank => Decoder::Rank,
        }
    }
}

/// `--link` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LinkArg {
    /// Each worker has its own link to the master.
    Dedicated,
    /// One ingress link, first come first served (incast).
    Shared,
}

/// Options every simulating subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Worker-time law for one uncoded share of the work: exp:rate=R (alias mu),
    /// shifted-exp:shift=S,rate=R, pareto:scale=X,shape=A, lognormal:mu=M,sigma=S
    /// (ln X ~ Normal(M, S²)), or weibull:scale=L,shape=K (P(X > x) = exp(-(x/L)^K));
    /// any of them may add p_slow=P,slowdown=F (a draw is F times slower with
    /// probability P). Measured times: trace:path=FILE (each worker's time
    /// bootstrapped from every recorded time) or replay:path=FILE (each trial
    /// replays one recorded step), FILE a CSV with columns step,worker,time;
    /// `gcsim fit FILE` prints the best-fitting law. [default: exp:rate=1]
    /// Example: --dist exp:rate=1,p_slow=0.05,slowdown=8
    #[arg(long, value_name = "DIST", value_parser = parse_dist)]
    pub dist: Option<DistArg>,

    /// A class of COUNT workers of law DIST; repeat for a heterogeneous cluster.
    /// Workers keep the order given (frc's groups and crc's placement see it);
    /// n is the total. Example: --workers 90:exp:rate=1 --workers 10:exp:rate=0.2
    #[arg(long = "workers", value_name = "COUNT:DIST", value_parser = parse_class)]
    pub classes: Vec<(usize, Dist)>,

    /// With --workers: place the classes at random in every trial instead of in order.
    #[arg(long)]
    pub shuffle_placement: bool,

    /// Time one worker needs to send one full gradient to the master; a
    /// message of size `message` (1/m for comm-efficient) takes TAU × message.
    /// Example: --comm-time 0.5
    #[arg(long, value_name = "TAU", allow_negative_numbers = true)]
    pub comm_time: Option<f64>,

    /// Draw each message's full-gradient transfer time from DIST instead of
    /// --comm-time (same syntax as --dist). Example: --comm-dist exp:rate=2
    #[arg(long, value_name = "DIST", value_parser = parse_law)]
    pub comm_dist: Option<Dist>,

    /// The master's ingress: dedicated (a result arrives at finish + transfer)
    /// or shared (one message at a time, first come first served by finish).
    #[arg(long, value_enum, default_value_t = LinkArg::Dedicated, value_name = "LINK")]
    pub link: LinkArg,

    /// How the master decides it can decode: threshold (the scheme's recovery
    /// rule) or rank (the rank condition of the scheme's real encoding matrix,
    /// see `gcsim codes`; one least-squares solve per check, for small n).
    #[arg(long, value_enum, default_value_t = DecoderArg::Threshold, value_name = "DECODER")]
    pub decoder: DecoderArg,

    /// Time the master spends decoding once it can, added to every iteration.
    #[arg(long, default_value_t = 0.0, value_name = "D", allow_negative_numbers = true)]
    pub decode_time: f64,

    /// How a worker's time grows with its load ℓ.
    #[arg(long, value_enum, default_value_t = LoadModelArg::Fixed, value_name = "MODEL")]
    pub load_model: LoadModelArg,

    /// Compute time per unit of work c, for --load-model affine (required there).
    /// Example: --load-model affine --unit-time 0.145
    #[arg(long, value_name = "C", value_parser = super::parse_number, allow_negative_numbers = true)]
    pub unit_time: Option<f64>,

    /// Monte Carlo trials per configuration.
    #[arg(long, default_value_t = 100_000, value_name = "N", value_parser = super::parse_count_u64, allow_negative_numbers = true)]
    pub trials: u64,

    /// Master seed; the same seed gives the same bytes on any number of threads.
    #[arg(long, default_value_t = 0, value_name = "SEED", value_parser = super::parse_count_u64, allow_negative_numbers = true)]
    pub seed: u64,

    /// Worker threads [default: all cores].
    #[arg(long, value_name = "N", value_parser = super::parse_count, allow_negative_numbers = true)]
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

/// A parsed `--dist`: a law, or a trace read from its file.
#[derive(Debug, Clone)]
pub enum DistArg {
    /// A parametric law.
    Law(Dist),
    /// Bootstrap from the recorded times.
    Trace(Arc<Trace>),
    /// Replay recorded steps.
    Replay(Arc<Trace>),
}

fn parse_dist(s: &str) -> Result<DistArg, String> {
    for (prefix, replay) in [("trace:", false), ("replay:", true)] {
        if let Some(rest) = s.strip_prefix(prefix) {
            let Some(path) = rest.strip_prefix("path=").filter(|p| !p.is_empty()) else {
                return Err(format!(
                    "`{s}` needs the key `path` (e.g. `{prefix}path=data/trace-llm-8w.csv`)"
                ));
            };
            let trace = Arc::new(Trace::from_file(std::path::Path::new(path)).map_err(|e| e.to_string())?);
            return Ok(if replay {
                DistArg::Replay(trace)
            } else {
                DistArg::Trace(trace)
            });
        }
    }
    s.parse::<Dist>().map(DistArg::Law).map_err(|e| e.to_string())
}

fn parse_law(s: &str) -> Result<Dist, String> {
    s.parse::<Dist>().map_err(|e| e.to_string())
}

fn parse_class(s: &str) -> Result<(usize, Dist), String> {
    let (count, law) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}` is not COUNT:DIST (e.g. 90:exp:rate=1)"))?;
    let count: usize = count
        .trim()
        .parse()
        .map_err(|_| format!("`{count}` is not a whole number; accepted: COUNT:DIST with COUNT >= 1"))?;
    if count == 0 {
        return Err(format!("`{s}`: a class needs at least 1 worker"));
    }
    Ok((count, law.parse::<Dist>().map_err(|e| e.to_string())?))
}

impl CommonArgs {
    /// The communication and decoding model of --comm-time, --comm-dist,
    /// --link and --decode-time.
    pub fn comm(&self) -> Result<Comm> {
        let transfer = match (self.comm_time, self.comm_dist) {
            (Some(_), Some(_)) => bail!("--comm-time and --comm-dist do not go together: give one transfer time"),
            (Some(t), None) if !(t.is_finite() && t >= 0.0) => {
                bail!("--comm-time {t} is out of range; accepted: a finite number >= 0")
            }
            (Some(t), None) => Transfer::Constant(t),
            (None, Some(d)) => Transfer::Random(d),
            (None, None) => Transfer::Constant(0.0),
        };
        if !(self.decode_time.is_finite() && self.decode_time >= 0.0) {
            bail!(
                "--decode-time {} is out of range; accepted: a finite number >= 0",
                self.decode_time
            );
        }
        let link = match self.link {
            LinkArg::Dedicated => Link::Dedicated,
            LinkArg::Shared => Link::Shared,
        };
        Ok(Comm {
            transfer,
            link,
            decode_time: self.decode_time,
        })
    }

    /// The cluster: n and who the workers are, from --n, --dist, --workers
    /// and --shuffle-placement.
    pub fn population(&self, n: Option<usize>) -> Result<(usize, Workers)> {
        if self.classes.is_empty() {
            if self.shuffle_placement {
                bail!("--shuffle-placement places --workers classes; give --workers COUNT:DIST");
            }
            let Some(n) = n else {
                bail!("give --n N (the number of workers), or the cluster as --workers COUNT:DIST ...");
            };
            let workers = match self.dist.clone() {
                None => Workers::Iid(Dist::exp(1.0).expect("valid")),
                Some(DistArg::Law(d)) => Workers::Iid(d),
                Some(DistArg::Trace(t)) => Workers::Trace(t),
                Some(DistArg::Replay(t)) => Workers::Replay(t),
            };
            return Ok((n, workers));
        }
        if self.dist.is_some() {
            bail!("--workers and --dist do not go together: each class names its law (--workers COUNT:DIST)");
        }
        let total: usize = self.classes.iter().map(|c| c.0).sum();
        if let Some(n) = n.filter(|&n| n != total) {
            bail!("--n {n} but the --workers classes add up to {total} workers; drop --n or make them agree");
        }
        Ok((
            total,
            Workers::Classes {
                classes: self.classes.clone(),
                shuffle: self.shuffle_placement,
            },
        ))
    }

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
            return Output::resolve(Some(Format::Json), self.out.as_deref());
        }
        Output::resolve(self.format.map(|f| f.0), self.out.as_deref())
    }
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
