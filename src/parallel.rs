//! The flags of a hybrid-parallel job (`--parallel`, `--microbatches`,
//! `--schedule`, `--backward-ratio`, `--p2p-time`, `--stage-work`,
//! `--microbatch-work`, `--optimizer-time`), shared by `run` and `sweep`.

use anyhow::{Result, bail};
use clap::Args;

use gcsim::collective::{DEFAULT_LATENCY, parse_bandwidth};
use gcsim::dist::Dist;
use gcsim::parallel::{Layout, Parallel, Schedule, parse_stage_work};
use gcsim::range::{self, IntList};
use gcsim::units::TimeUnit;

use super::collective::CollectiveArgs;

use super::flags::{
    ACTIVATION_SIZE, BACKWARD_RATIO, BANDWIDTH, MICROBATCH_WORK, MICROBATCHES, N, OPTIMIZER_TIME, P2P_BANDWIDTH,
    P2P_TIME, PARALLEL, SCHEDULE, STAGE_WORK, TIME_UNIT,
};

/// `--stage-work` as given.
#[derive(Debug, Clone, PartialEq)]
pub struct StageWork(pub Vec<f64>);

fn parse_work(text: &str) -> Result<StageWork, String> {
    parse_stage_work(text).map(StageWork)
}

fn parse_law(text: &str) -> Result<Dist, String> {
    text.parse::<Dist>().map_err(|e| e.to_string())
}

/// A hybrid-parallel job: data-parallel replicas of pipelines of
/// tensor-parallel groups.
#[derive(Debug, Clone, Args)]
pub struct ParallelArgs {
    /// Simulate a job of D data-parallel replicas of a pipeline of P
    /// stages of T tensor-parallel ranks (n = D·P·T ranks, each a worker
    /// of --dist or --workers). Each rank draws one time per microbatch;
    /// a stage's op takes the slowest of its T ranks; the schemes code
    /// across the D replicas; each stage's gradient is summed across them
    /// (--aggregation; at no cost under the master).
    /// Example: --parallel dp=32,pp=4,tp=8
    #[arg(long, value_name = "dp=D,pp=P,tp=T", value_parser = Layout::parse)]
    pub parallel: Option<Layout>,

    /// Microbatches M per replica per iteration of the uncoded job (a
    /// replica of load L runs L·M) [default: 1]; sweep takes a list and
    /// draws --plot against M. Example: --microbatches 16
    #[arg(long, value_name = "M", value_parser = range::parse, allow_negative_numbers = true)]
    pub microbatches: Option<IntList>,

    /// The pipeline schedule: gpipe (every forward, then every backward),
    /// 1f1b (PipeDream-Flush: warm-up forwards, then one forward and one
    /// backward in turn) or interleaved:V (Megatron-LM's interleaved 1F1B:
    /// each stage holds V model chunks, each 1/V of its work; M a multiple
    /// of P) [default: 1f1b]. Example: --schedule interleaved:2
    #[arg(long, value_name = "SCHEDULE", value_parser = Schedule::parse)]
    pub schedule: Option<Schedule>,

    /// R: a microbatch's backward op takes R times its forward op (its draw
    /// is split 1 : R) [default: 2]. Example: --backward-ratio 2
    #[arg(long, value_name = "R", value_parser = super::number("a number > 0 and <= 1e6"), allow_hyphen_values = true)]
    pub backward_ratio: Option<f64>,

    /// The transfer of activations (forward) or their gradients (backward)
    /// between neighbouring stages, in the time unit [default: 0].
    /// Example: --p2p-time 0.05
    #[arg(long, value_name = "TAU", value_parser = super::number(super::TIME_RANGE), allow_hyphen_values = true)]
    pub p2p_time: Option<f64>,

    /// The bytes a stage sends the next per microbatch (its activations;
    /// their gradients come back the same size): each transfer takes
    /// --latency + BYTES / --p2p-bandwidth, in the time unit, instead of
    /// --p2p-time. Example: --activation-size 64MiB --p2p-bandwidth 25GB/s
    #[arg(long, value_name = "BYTES", value_parser = gcsim::units::parse_bytes, allow_hyphen_values = true)]
    pub activation_size: Option<f64>,

    /// The link between neighbouring stages for --activation-size, in bytes
    /// per second (B/s, MB/s, GB/s, ... or Gbit/s) [default: --bandwidth].
    /// Example: --p2p-bandwidth 50GB/s
    #[arg(long, value_name = "BYTES_PER_S", value_parser = parse_bandwidth, allow_hyphen_values = true)]
    pub p2p_bandwidth: Option<f64>,

    /// Each stage's relative work, one per stage [default: 1 each].
    /// Example: --stage-work 1,1,1,1.25 (a last stage with a loss head)
    #[arg(long, value_name = "W,W,...", value_parser = parse_work)]
    pub stage_work: Option<StageWork>,

    /// The law of a microbatch's relative work (sequence-length imbalance),
    /// drawn once per replica and microbatch and shared by every stage of
    /// the replica [default: 1]. Example: --microbatch-work lognormal:mu=0,sigma=0.3
    #[arg(long, value_name = "DIST", value_parser = parse_law)]
    pub microbatch_work: Option<Dist>,

    /// The optimizer step after the last stage's gradient sum, in the time
    /// unit [default: 0]. Example: --optimizer-time 0.2
    #[arg(long, value_name = "T", value_parser = super::number(super::TIME_RANGE), allow_hyphen_values = true)]
    pub optimizer_time: Option<f64>,
}

impl ParallelArgs {
    /// The job, if --parallel is given; the other flags without it are refused.
    pub fn parallel(&self) -> Result<Option<Parallel>> {
        let Some(layout) = self.parallel else {
            for (given, flag) in [
                (self.microbatches.is_some(), MICROBATCHES),
                (self.schedule.is_some(), SCHEDULE),
                (self.backward_ratio.is_some(), BACKWARD_RATIO),
                (self.p2p_time.is_some(), P2P_TIME),
                (self.activation_size.is_some(), ACTIVATION_SIZE),
                (self.p2p_bandwidth.is_some(), P2P_BANDWIDTH),
                (self.stage_work.is_some(), STAGE_WORK),
                (self.microbatch_work.is_some(), MICROBATCH_WORK),
                (self.optimizer_time.is_some(), OPTIMIZER_TIME),
            ] {
                if given {
                    bail!("{flag} describes a pipeline job: give {PARALLEL} dp=D,pp=P,tp=T");
                }
            }
            return Ok(None);
        };
        let first = self.microbatches.as_ref().map_or(1, |l| l.values[0]);
        let defaults = Parallel::new(layout, first);
        Ok(Some(Parallel {
            schedule: self.schedule.unwrap_or(defaults.schedule),
            backward_ratio: self.backward_ratio.unwrap_or(defaults.backward_ratio),
            p2p_time: self.p2p_time.unwrap_or(defaults.p2p_time),
            stage_work: match &self.stage_work {
                Some(w) => w.0.clone().into(),
                None => defaults.stage_work.clone(),
            },
            microbatch_work: self.microbatch_work,
            optimizer_time: self.optimizer_time.unwrap_or(defaults.optimizer_time),
            ..defaults
        }))
    }

    /// The transfer between stages from `--activation-size`, in `unit`:
    /// `latency` (seconds; the collective's default where none is given)
    /// plus the size over `--p2p-bandwidth`, or over `bandwidth` (the
    /// collective's `--bandwidth`) without it. None without
    /// `--activation-size`.
    pub fn p2p_from_size(
        &self,
        latency: Option<f64>,
        bandwidth: Option<f64>,
        unit: Option<TimeUnit>,
    ) -> Result<Option<f64>> {
        let Some(size) = self.activation_size else {
            if self.p2p_bandwidth.is_some() {
                bail!("{P2P_BANDWIDTH} carries {ACTIVATION_SIZE} between stages: give {ACTIVATION_SIZE} BYTES too");
            }
            return Ok(None);
        };
        if self.p2p_time.is_some() {
            bail!("{P2P_TIME} and {ACTIVATION_SIZE} both set the transfer between stages: give one");
        }
        let Some(bandwidth) = self.p2p_bandwidth.or(bandwidth) else {
            bail!(
                "{ACTIVATION_SIZE} needs the link's speed: give {P2P_BANDWIDTH} (e.g. 25GB/s), or {BANDWIDTH} with a collective"
            );
        };
        let Some(unit) = unit else {
            bail!(
                "{ACTIVATION_SIZE} takes seconds to send, which needs the time unit of the laws: give {TIME_UNIT} s, ms or us"
            );
        };
        for (flag, value) in [(ACTIVATION_SIZE, size), (P2P_BANDWIDTH, bandwidth)] {
            if !(value.is_finite() && value > 0.0 && value <= 1e30) {
                bail!(
                    "{flag} {} is out of range; accepted: a number > 0 and at most 1e30",
                    gcsim::param::plain(value)
                );
            }
        }
        let tau = (latency.unwrap_or(DEFAULT_LATENCY) + size / bandwidth) * unit.per_second();
        if tau > 1e100 {
            bail!(
                "{ACTIVATION_SIZE} over {P2P_BANDWIDTH} takes {} {} a transfer; accepted: at most 1e100 (rescale the time unit for values outside)",
                gcsim::param::plain(tau),
                unit.symbol()
            );
        }
        Ok(Some(tau))
    }

    /// The job of `--parallel`, if given, with its transfer between stages
    /// from `--activation-size` where that is given (over `collective`'s
    /// latency and bandwidth, in `unit`).
    pub fn pipeline(&self, collective: &CollectiveArgs, unit: Option<TimeUnit>) -> Result<Option<Parallel>> {
        let Some(mut p) = self.parallel()? else {
            return Ok(None);
        };
        if let Some(tau) = self.p2p_from_size(collective.latency, collective.bandwidth, unit)? {
            p.p2p_time = tau;
        }
        Ok(Some(p))
    }

    /// The microbatch counts of a sweep over `--microbatches`, where it
    /// lists several (the first is [`ParallelArgs::parallel`]'s).
    pub fn microbatch_list(&self) -> Option<&IntList> {
        self.microbatches.as_ref().filter(|l| l.values.len() > 1)
    }

    /// Refuses a list of microbatch counts where one job runs.
    pub fn one_microbatch_count(&self, command: &str) -> Result<()> {
        if let Some(l) = self.microbatch_list() {
            bail!(
                "{MICROBATCHES} {} takes one M in {command}; gcsim sweep runs several",
                l.text
            );
        }
        Ok(())
    }

    /// These flags with `--microbatches M` alone.
    pub fn with_microbatches(&self, m: usize) -> Self {
        Self {
            microbatches: Some(IntList {
                values: vec![m],
                text: m.to_string(),
            }),
            ..self.clone()
        }
    }

    /// The number of ranks of `parallel`, checked against --n where both are given.
    pub fn ranks(parallel: &Parallel, n: Option<usize>) -> Result<usize> {
        let ranks = parallel.layout.ranks();
        if let Some(n) = n.filter(|&n| n != ranks) {
            bail!(
                "{N} {n} but {PARALLEL} {} has {ranks} ranks; drop {N} or make them agree",
                parallel.layout
            );
        }
        Ok(ranks)
    }
}
