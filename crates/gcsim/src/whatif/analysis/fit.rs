//! The job fitted to gcsim's hybrid-parallel model (`--parallel`), so that
//! mitigations can be simulated forward: per-rank compute-time laws with
//! each rank's persistent offset, each stage's work, the microbatches'
//! shared work (sequence-length imbalance), the backward/forward ratio, the
//! pipeline transfer, the data-parallel gradient sum and the ops after it.
//!
//! The fit works on the logs of each microbatch's compute on each rank,
//! x = forward + backward (summed over the rank's model chunks in an
//! interleaved pipeline, whose k-th forward and k-th backward are of
//! microbatch ⌊k/(PV)⌋·P + k mod P, Megatron's order, which the hybrid
//! model's `--schedule interleaved:V` follows), as the hybrid model writes it:
//! x = w_i · u_{d,j} · X_r, with w_i the stage's work, u_{d,j} the
//! microbatch's work (one draw per replica, step and microbatch, shared by
//! every stage) and X_r the rank's time. Taking each rank's X_r log-normal
//! with its own median and one spread σ, and u log-normal with mean 1:
//! - ln w_i: the stage's mean log, less the job's;
//! - each rank's offset a_r: its mean log, less its stage's;
//! - Var(ln u): the mean covariance, across pairs of stages, of the
//!   residuals of the same (step, replica, microbatch): the part of a
//!   microbatch's time every stage shares (0 with one stage, where it
//!   cannot be told from the ranks' own spread);
//! - σ²: the residuals' variance, less Var(ln u).
//!
//! The rest is taken as constant: the pipeline transfer τ (the median
//! transfer time of the sends and receives), the stage's gradient sum (the
//! median reduce-scatter transfer, as a ring all-reduce of that time), and
//! the ops outside the model (the parameter all-gather, the layer-norm and
//! embedding all-reduces, the clip, the optimizer, gc) as
//! `--optimizer-time`, the sum of their ideal times.

use serde::Serialize;

use super::{Ideal, Job};
use crate::whatif::optype::OpType;

/// The fitted hybrid model of a job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybridFit {
    /// Data-parallel replicas.
    pub dp: u32,
    /// Stages.
    pub pp: u32,
    /// Microbatches per step.
    pub microbatches: u32,
    /// Model chunks per stage (`--schedule interleaved:V`); 1 is plain 1F1B
    /// and is not written.
    #[serde(skip_serializing_if = "is_one")]
    pub vpp: u32,
    /// Mean backward over mean forward compute.
    pub backward_ratio: f64,
    /// Each stage's work (geometric mean 1).
    pub stage_work: Vec<f64>,
    /// σ of ln u, the microbatch's shared work (log-normal, mean 1).
    pub microbatch_sigma: f64,
    /// Each rank's log-normal mu, in the hybrid model's rank order (replica-major).
    pub rank_mu: Vec<f64>,
    /// σ of each rank's log time.
    pub sigma: f64,
    /// The pipeline transfer τ (seconds).
    pub p2p_time: f64,
    /// A stage's gradient sum across the replicas (seconds).
    pub collective_time: f64,
    /// The ops outside the model, per step (seconds).
    pub optimizer_time: f64,
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { 0.0 } else { s / n as f64 }
}

impl HybridFit {
    /// Fits the model to a job; None without compute ops, or for an
    /// interleaved job whose microbatches are not a multiple of the stages
    /// (which the hybrid model's interleaved schedule needs).
    pub(crate) fn new(job: &Job<'_>, ideals: &[Ideal]) -> Option<HybridFit> {
        let graph = job.graph;
        let lanes = job.lanes.lanes();
        let dp = job.lanes.dp;
        let pp = graph.nodes.iter().map(|n| n.stage + 1).max().unwrap_or(1) as usize;
        let vpp = job.trace.mc.iter().copied().max().unwrap_or(0).max(0) as usize + 1;
        let forwards = graph
            .nodes
            .iter()
            .filter(|n| n.optype == OpType::ForwardCompute && n.stage == 0)
            .count();
        let m = forwards / vpp;
        if m == 0 || (vpp > 1 && (!forwards.is_multiple_of(vpp) || !m.is_multiple_of(pp))) {
            return None;
        }
        let (logs, forward, backward) = compute_logs(job, pp, m, vpp)?;
        let at = |l: usize, i: usize, j: usize| logs[(l * pp + i) * m + j];
        let overall = mean(logs.iter().copied());
        let stage_mean: Vec<f64> = (0..pp)
            .map(|i| {
                mean(
                    (0..lanes)
                        .flat_map(|l| (0..m).map(move |j| (l, j)))
                        .map(|(l, j)| at(l, i, j)),
                )
            })
            .collect();
        // Each rank's offset from its stage: rank (d, i) over the steps' lanes of replica d.
        let offset: Vec<f64> = (0..dp * pp)
            .map(|r| {
                let (d, i) = (r / pp, r % pp);
                mean(
                    (d..lanes)
                        .step_by(dp)
                        .flat_map(|l| (0..m).map(move |j| (l, j)))
                        .map(|(l, j)| at(l, i, j)),
                ) - stage_mean[i]
            })
            .collect();
        let residual = |l: usize, i: usize, j: usize| at(l, i, j) - stage_mean[i] - offset[(l % dp) * pp + i];
        let total = mean(
            (0..lanes)
                .flat_map(|l| (0..pp).flat_map(move |i| (0..m).map(move |j| (l, i, j))))
                .map(|(l, i, j)| residual(l, i, j).powi(2)),
        );
        let mut shared = 0.0;
        if pp > 1 {
            let mut pairs = 0.0;
            for i in 0..pp {
                for k in i + 1..pp {
                    shared += mean(
                        (0..lanes)
                            .flat_map(|l| (0..m).map(move |j| (l, j)))
                            .map(|(l, j)| residual(l, i, j) * residual(l, k, j)),
                    );
                    pairs += 1.0;
                }
            }
            shared = (shared / pairs).max(0.0);
        }
        let sigma2 = (total - shared).max(0.0);
        let ideal = |t: OpType| ideals.iter().find(|x| x.optype == t.name());
        let transfer = |t: OpType| ideal(t).map_or(0.0, |x| x.transfer.unwrap_or(x.duration));
        let p2p: Vec<f64> = [OpType::ForwardSend, OpType::BackwardSend]
            .into_iter()
            .filter(|&t| ideal(t).is_some())
            .map(transfer)
            .collect();
        let optimizer_time = [
            OpType::ParamsAllGather,
            OpType::LayernormGradsAllReduce,
            OpType::EmbeddingGradsAllReduce,
            OpType::OptimizerClipMainGrad,
            OpType::Optimizer,
            OpType::Gc,
        ]
        .into_iter()
        .map(transfer)
        .sum();
        Some(HybridFit {
            dp: dp as u32,
            pp: pp as u32,
            microbatches: m as u32,
            vpp: vpp as u32,
            backward_ratio: backward / forward,
            stage_work: stage_mean.iter().map(|s| (s - overall).exp()).collect(),
            microbatch_sigma: shared.sqrt(),
            rank_mu: offset.iter().map(|a| overall + shared / 2.0 + a).collect(),
            sigma: sigma2.sqrt(),
            p2p_time: mean(p2p.into_iter()),
            collective_time: transfer(OpType::GradsReduceScatter) + transfer(OpType::SeparateGradsAllReduce),
            optimizer_time,
        })
    }
}

/// The log of each microbatch's compute (forward + backward, every chunk's)
/// on each rank: entry `((lane * pp) + stage) * m + j`; with the forward
/// and backward totals. None if a time is not positive.
fn compute_logs(job: &Job<'_>, pp: usize, m: usize, vpp: usize) -> Option<(Vec<f64>, f64, f64)> {
    let graph = job.graph;
    let lanes = job.lanes.lanes();
    let mut logs = vec![f64::NAN; lanes * pp * m];
    let (mut forward, mut backward) = (0.0, 0.0);
    for (v, node) in graph.nodes.iter().enumerate() {
        let k = node.seq as usize;
        if !node.optype.is_compute() || k >= m * vpp {
            continue;
        }
        // The k-th forward or backward of a stage is microbatch j.
        let j = if vpp > 1 { k / (pp * vpp) * pp + k % pp } else { k };
        let i = node.stage as usize;
        for l in 0..lanes {
            let d = job.duration[v * lanes + l];
            if node.optype == OpType::ForwardCompute {
                forward += d;
            } else {
                backward += d;
            }
            let slot = (l * pp + i) * m + j;
            logs[slot] = if logs[slot].is_nan() { d } else { logs[slot] + d };
        }
    }
    if logs.iter().any(|x| x.is_nan() || *x <= 0.0) || forward <= 0.0 {
        return None;
    }
    for x in &mut logs {
        *x = x.ln();
    }
    Some((logs, forward, backward))
}
