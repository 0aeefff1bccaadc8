//! The slowdown S of a measured job and its attributions, as Lin et al.
//! (OSDI 2025, §3) define them and their artifact computes them:
//! - the replay: the trace's durations on the dependency graph, with no
//!   launch delay; its mean step time against the measured one is the
//!   replay error;
//! - the ideal: compute ops (and the optimizer, gc) at their type's mean
//!   duration, communication at its type's median transfer time (waiting for
//!   the peers excluded), over every step, rank and stage;
//! - S = mean replayed step / mean ideal step (Eq. 1);
//! - S_g: the ideal with only group g's ops at their measured times, over
//!   the ideal, for op types (Eq. 2), dp ranks and stages (their product is
//!   the per-worker attribution, Eq. 4), and per step;
//! - M_S and M_W: the share of the slowdown removed by idealising the last
//!   stage, or the worst 3% of ranks (by min(S_dp, S_stage)).

use rayon::prelude::*;
use serde::Serialize;

use super::graph::{Graph, lane_rows};
use super::meta::{Layout, LayoutSpec};
use super::replay::{Lanes, Timeline};
use super::table::OpTrace;
use super::timeline::{StepRun, StepTimelines, TimedOp, check_step};
use super::{PerStep, Ranked, WhatIfError};

mod attribution;
mod fit;

pub use fit::HybridFit;

/// Launch delays and transfer times at or below this (seconds) are taken as
/// clock error and set to 0, as in the artifact; smaller negatives are kept.
const CLIP: f64 = -0.01;

/// One op type's ideal: its duration, and for collective members the
/// transfer time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ideal {
    /// The op type's name.
    pub optype: String,
    /// "mean" or "median".
    pub statistic: &'static str,
    /// The ideal duration (seconds).
    pub duration: f64,
    /// The ideal transfer time (seconds), for types whose ops are collective members.
    pub transfer: Option<f64>,
    /// Ops of the type.
    pub ops: usize,
}

/// The share of the slowdown removed by idealising a set of ops R, and the
/// share restored by letting only R straggle (`explain_slowdown` of the artifact).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Removal {
    /// The ranks of R (M_W) or the stage (M_S).
    pub ranks: Vec<u32>,
    /// Mean step time of the replay with R idealised.
    pub trem: f64,
    /// Mean step time of the ideal with R measured.
    pub tadd: f64,
    /// Mean replayed step time.
    pub tori: f64,
    /// Mean ideal step time.
    pub tideal: f64,
    /// (tori − trem) / (tori − tideal): the metric (None when tori = tideal).
    pub rem: Option<f64>,
    /// (tadd − tideal) / (tori − tideal).
    pub add: Option<f64>,
}

/// The analysis of one trace.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// The trace file.
    pub file: String,
    /// The job's layout.
    pub layout: Layout,
    /// Ops in the trace.
    pub ops: usize,
    /// Ops per (step, dp rank) lane.
    pub ops_per_lane: usize,
    /// The steps, ascending.
    pub steps: Vec<i64>,
    /// Measured step time: last end − first start of the step's ops.
    pub step_measured: Vec<f64>,
    /// Replayed step time (no launch delay).
    pub step_replay: Vec<f64>,
    /// Ideal step time.
    pub step_ideal: Vec<f64>,
    /// S: mean replayed step / mean ideal step.
    pub slowdown: f64,
    /// Mean measured step / mean replayed step (the artifact's `launch_slowdown`).
    pub launch_slowdown: f64,
    /// launch_slowdown − 1: how much longer the measured steps are than the replay.
    pub replay_error: f64,
    /// Largest |end| difference (seconds) between the measured ops and the
    /// replay with their launch delays: 0 when the graph reproduces the trace.
    pub replay_check: f64,
    /// Launch delays at or below −10 ms, set to 0 (an op started before an op
    /// it depends on ended).
    pub clipped_delays: usize,
    /// Transfer times at or below −10 ms, set to 0.
    pub clipped_transfers: usize,
    /// Each op type's ideal.
    pub ideal: Vec<Ideal>,
    /// S_t per op-type group, largest first.
    pub by_optype: Ranked<String>,
    /// S per dp rank.
    pub by_dp_rank: Ranked<u32>,
    /// S per stage.
    pub by_stage: Ranked<u32>,
    /// S per step.
    pub by_step: Ranked<i64>,
    /// Per step (in `by_step`'s order): S_t,step per op-type group.
    pub by_optype_per_step: PerStep<String>,
    /// Per step: S per dp rank.
    pub by_dp_rank_per_step: PerStep<u32>,
    /// Per step: S per stage.
    pub by_stage_per_step: PerStep<u32>,
    /// M_S: idealising the last stage.
    pub m_s: Removal,
    /// M_W: idealising the worst 3% of ranks.
    pub m_w: Removal,
    /// Per (dp rank, stage): min(S_dp, S_stage), the heatmap of Lin et al.'s Fig. 14.
    pub worker_scores: Vec<Vec<f64>>,
    /// The job fitted to the hybrid-parallel model (None when it has no
    /// compute op to fit).
    pub model: Option<HybridFit>,
    /// Every attribution as one row (the CSV).
    #[serde(skip)]
    pub rows: Vec<AttributionRow>,
}

/// One attribution: the slowdown when only the ops of `key` straggle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttributionRow {
    /// "all", "optype", "dp_rank", "stage" or "step".
    pub by: &'static str,
    /// The op-type group, rank, stage or step ("" for the job's S).
    pub key: String,
    /// The slowdown.
    pub slowdown: f64,
}

/// The measured job on the graph: per-op arrays, node-major.
pub(crate) struct Job<'a> {
    pub trace: &'a OpTrace,
    pub graph: &'a Graph,
    pub lanes: Lanes<'a>,
    pub start: Vec<f64>,
    pub duration: Vec<f64>,
    pub transfer: Vec<f64>,
    /// Transfer times at or below −10 ms, set to 0.
    pub clipped_transfers: usize,
}

impl Analysis {
    /// Analyses a trace under a layout.
    pub fn new(trace: &OpTrace, spec: &LayoutSpec) -> Result<Self, WhatIfError> {
        Ok(Self::build(trace, spec, |_, _| Ok(()))?.0)
    }

    /// Analyses a trace, and replays `step` (by default the step with the
    /// largest S, the first of `by_step`) op by op, as measured and ideal.
    pub fn with_timelines(
        trace: &OpTrace,
        spec: &LayoutSpec,
        step: Option<i64>,
    ) -> Result<(Self, StepTimelines), WhatIfError> {
        Self::build(trace, spec, |job, analysis| {
            let step = step.unwrap_or(analysis.by_step.0[0].0);
            check_step(&analysis.steps, step)?;
            Ok(job.timelines(analysis, step))
        })
    }

    /// The analysis, and what `then` makes of the job and the analysis.
    fn build<T>(
        trace: &OpTrace,
        spec: &LayoutSpec,
        then: impl FnOnce(&Job<'_>, &Analysis) -> Result<T, WhatIfError>,
    ) -> Result<(Self, T), WhatIfError> {
        let layout = spec.resolve(trace)?;
        let mut steps = trace.step.clone();
        steps.sort_unstable();
        steps.dedup();
        let first = steps[0];
        let template: Vec<usize> = (0..trace.len())
            .filter(|&i| trace.step[i] == first && trace.dp_rank[i] == 0)
            .collect();
        let lane = format!("step {first}, dp_rank 0");
        let graph = Graph::build(trace, &layout, template, lane)?;
        let slot_row = lane_rows(trace, &graph, &steps, layout.dp, layout.pp)?;
        let lanes = Lanes::new(&graph, layout.dp as usize, steps.len());
        let job = Job::new(trace, &graph, lanes, slot_row, &steps);
        let analysis = attribution::analyse(&job, layout, steps)?;
        let more = then(&job, &analysis)?;
        Ok((analysis, more))
    }
}

impl<'a> Job<'a> {
    fn new(trace: &'a OpTrace, graph: &'a Graph, lanes: Lanes<'a>, slot_row: Vec<u32>, steps: &[i64]) -> Self {
        let mut first = vec![f64::INFINITY; steps.len()];
        for i in 0..trace.len() {
            let s = steps.binary_search(&trace.step[i]).unwrap_or(0);
            first[s] = first[s].min(trace.start[i]);
        }
        let per_lane = lanes.lanes();
        let dp = lanes.dp;
        let start: Vec<f64> = slot_row
            .iter()
            .enumerate()
            .map(|(slot, &r)| trace.start[r as usize] - first[(slot % per_lane) / dp])
            .collect();
        let duration: Vec<f64> = slot_row.iter().map(|&r| trace.duration[r as usize]).collect();
        let mut job = Job {
            trace,
            graph,
            lanes,
            start,
            duration,
            transfer: Vec::new(),
            clipped_transfers: 0,
        };
        (job.transfer, job.clipped_transfers) = job.transfers();
        job
    }

    pub fn end(&self, slot: usize) -> f64 {
        self.start[slot] + self.duration[slot]
    }

    /// Each collective member's transfer time: its end minus the latest
    /// start of its collective's members (over the step's dp ranks for a
    /// data-parallel collective). Other ops get their duration. Also counts
    /// the transfers clipped to 0.
    fn transfers(&self) -> (Vec<f64>, usize) {
        let lanes = self.lanes.lanes();
        let mut x = self.duration.clone();
        let mut clipped = 0;
        let mut peak = vec![0.0; lanes];
        for members in &self.graph.groups {
            self.lanes.group_peak(members, &self.start, &mut peak);
            for &w in members {
                let at = w as usize * lanes;
                for l in 0..lanes {
                    let t = self.end(at + l) - peak[l];
                    x[at + l] = if t <= CLIP {
                        clipped += 1;
                        0.0
                    } else {
                        t
                    };
                }
            }
        }
        (x, clipped)
    }

    /// Each op's launch delay: its start minus the last end of its
    /// predecessors (minus the step's start for a source), and the number
    /// clipped to 0.
    pub fn delays(&self) -> (Vec<f64>, usize) {
        let lanes = self.lanes.lanes();
        let mut delay = vec![0.0; self.start.len()];
        let mut clipped = 0;
        for (v, deps) in self.graph.deps.iter().enumerate() {
            for l in 0..lanes {
                let ready = if deps.is_empty() {
                    0.0
                } else {
                    deps.iter()
                        .map(|&u| self.end(u as usize * lanes + l))
                        .fold(f64::NEG_INFINITY, f64::max)
                };
                let d = self.start[v * lanes + l] - ready;
                delay[v * lanes + l] = if d <= CLIP {
                    clipped += 1;
                    0.0
                } else {
                    d
                };
            }
        }
        (delay, clipped)
    }

    /// The replay with launch delays against the trace: the largest |end| difference.
    pub fn replay_check(&self, delay: &[f64]) -> f64 {
        let t: Timeline = self.lanes.replay(&self.duration, &self.transfer, Some(delay));
        t.end
            .iter()
            .enumerate()
            .map(|(slot, &e)| (e - self.end(slot)).abs())
            .fold(0.0, f64::max)
    }

    /// Step times of the replay with the given durations and transfers.
    pub fn step_times(&self, d: &[f64], x: &[f64]) -> Vec<f64> {
        self.lanes.step_times(&self.lanes.replay(d, x, None))
    }

    /// Measured step times: last end − first start (0 after rebasing).
    pub fn measured(&self) -> Vec<f64> {
        let lanes = self.lanes.lanes();
        let mut times = vec![f64::NEG_INFINITY; self.lanes.steps];
        for slot in 0..self.start.len() {
            let s = (slot % lanes) / self.lanes.dp;
            times[s] = times[s].max(self.end(slot));
        }
        times
    }

    /// The trace.
    pub fn trace(&self) -> &OpTrace {
        self.trace
    }

    /// Each (dp rank, stage) worker's rank, where the trace records one.
    pub fn worker_ranks(&self, dp: usize, pp: usize) -> Vec<Option<u32>> {
        let trace = self.trace;
        let mut rank_of = vec![None; dp * pp];
        for i in 0..trace.len() {
            rank_of[trace.dp_rank[i] as usize * pp + trace.stage[i] as usize] = Some(trace.rank[i]);
        }
        rank_of
    }

    /// Step `step` (one the trace records) replayed with the measured
    /// durations and with the ideal ones.
    fn timelines(&self, analysis: &Analysis, step: i64) -> StepTimelines {
        let s = analysis.steps.binary_search(&step).unwrap_or(0);
        let (_, d_ideal, x_ideal) = attribution::ideal(self);
        let (dp, pp) = (analysis.layout.dp, analysis.layout.pp);
        let actual = format!("actual: step {step} replayed with the measured durations (no launch delay)");
        let ideal = format!("ideal: step {step} with every op at its type's ideal duration");
        StepTimelines {
            step,
            dp,
            pp,
            ranks: self.worker_ranks(dp as usize, pp as usize),
            runs: [
                self.step_run(s, "actual", actual, (&self.duration, &self.transfer)),
                self.step_run(s, "ideal", ideal, (&d_ideal, &x_ideal)),
            ],
        }
    }

    /// The ops of step index `s` in the replay with durations and transfers `(d, x)`.
    fn step_run(&self, s: usize, kind: &'static str, label: String, (d, x): (&[f64], &[f64])) -> StepRun {
        let t = self.lanes.replay(d, x, None);
        let (lanes, dp) = (self.lanes.lanes(), self.lanes.dp);
        let mut ops = Vec::with_capacity(self.graph.len() * dp);
        for (v, node) in self.graph.nodes.iter().enumerate() {
            for k in 0..dp {
                let slot = v * lanes + s * dp + k;
                ops.push(TimedOp {
                    node: node.clone(),
                    dp_rank: k as u32,
                    start: t.start[slot],
                    end: t.end[slot],
                });
            }
        }
        StepRun { kind, label, ops }
    }
}

/// Which ops a selection takes: entry `node * dp + dp_rank`, in every step.
pub(crate) type Pick = Vec<bool>;

/// The selection of the ops (node, dp rank) for which `keep` holds.
pub(crate) fn pick(job: &Job<'_>, keep: impl Fn(usize, usize) -> bool) -> Pick {
    let dp = job.lanes.dp;
    (0..job.graph.len() * dp).map(|i| keep(i / dp, i % dp)).collect()
}

/// Replays in parallel, one per selection of ops taking `other`'s values
/// over `base`'s; returns each replay's step times.
pub(crate) fn mixed_replays(
    job: &Job<'_>,
    base: (&[f64], &[f64]),
    other: (&[f64], &[f64]),
    selections: &[Pick],
) -> Vec<Vec<f64>> {
    let (lanes, dp) = (job.lanes.lanes(), job.lanes.dp);
    selections
        .par_iter()
        .map(|pick| {
            let mut d = base.0.to_vec();
            let mut x = base.1.to_vec();
            for (i, _) in pick.iter().enumerate().filter(|(_, p)| **p) {
                let (node, rank) = (i / dp, i % dp);
                for slot in (node * lanes + rank..(node + 1) * lanes).step_by(dp) {
                    d[slot] = other.0[slot];
                    x[slot] = other.1[slot];
                }
            }
            job.step_times(&d, &x)
        })
        .collect()
}
