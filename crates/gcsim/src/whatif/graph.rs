//! The job's dependency graph, built once from one (step, dp rank) lane of
//! the trace and applied to every lane, as the what-if analysis of Lin et
//! al. (OSDI 2025) models a Megatron-style pipeline job:
//! - each stage's compute ops run in their recorded order, and each of the
//!   four send/recv types is its own ordered stream;
//! - a send follows the compute that produced its data, a compute follows
//!   the receive of its input, and the k-th valid send on a stage meets the
//!   k-th valid receive on the neighbouring stage;
//! - in an interleaved pipeline (vpp > 1) stage s holds the global model
//!   chunks gmc = mc · pp + s: a send or receive whose peer chunk (gmc ± 1)
//!   does not exist is a no-op, and the stage after the last is stage 0,
//!   the one before stage 0 the last (`get_sender_stage` and
//!   `get_peer_p2p_optype` of the artifact's dependency_model.py);
//! - after the last compute: gc, the layer-norm all-reduce, the embedding
//!   all-reduce (first and last stage together), the gradient
//!   reduce-scatters, the global gradient-norm clip and the optimizer;
//! - the data-parallel collectives (all-gather, reduce-scatter) and the clip
//!   wait for every dp rank of the step.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::WhatIfError;
use super::meta::Layout;
use super::optype::OpType;
use super::table::OpTrace;

/// Sends and receives this far (seconds) outside a stage's compute span are
/// the profiler's no-ops, as in the artifact (`setup_pp_dependency`).
const NO_OP_EPS: f64 = 5e-5;

/// One op of the template lane.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    /// Its type.
    pub optype: OpType,
    /// Its index among the same type's ops of its stage.
    pub seq: u32,
    /// Its pipeline stage.
    pub stage: u32,
}

impl Node {
    /// `<optype>_<seq>_<stage>`, the artifact's op name.
    pub fn name(&self) -> String {
        format!("{}_{}_{}", self.optype, self.seq, self.stage)
    }
}

/// A unit of the simulation: one op, or one collective whose members all
/// wait for the last of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// An op outside any collective.
    Op(u32),
    /// A collective (index into [`Graph::groups`]).
    Group(u32),
}

/// The dependency template.
#[derive(Debug, Clone)]
pub struct Graph {
    /// The ops of one lane.
    pub nodes: Vec<Node>,
    /// Each op's in-lane predecessors.
    pub deps: Vec<Vec<u32>>,
    /// The collectives (send/recv pairs, data-parallel collectives, the
    /// embedding all-reduce, the clip), as lists of ops.
    pub groups: Vec<Vec<u32>>,
    /// Each op's collective.
    pub group_of: Vec<Option<u32>>,
    /// Whether the op's collective also joins every dp rank of the step.
    pub dp_sync: Vec<bool>,
    /// The units in an order that respects every dependency.
    pub order: Vec<Unit>,
    /// Each (op type, stage, seq) slot's node, for mapping rows to nodes.
    lookup: Vec<u32>,
    /// The largest seq of the template, plus one.
    seqs: u32,
    /// Stages.
    stages: u32,
}

/// The template's rows in "start order": by start, then seq_id, then type name.
fn start_order(trace: &OpTrace, rows: &mut [usize]) {
    rows.sort_by(|&a, &b| {
        trace.start[a]
            .total_cmp(&trace.start[b])
            .then(trace.seq_id[a].cmp(&trace.seq_id[b]))
            .then(trace.optype[a].name().cmp(trace.optype[b].name()))
    });
}

/// Builds the graph from the rows of the template lane (dp rank 0 of the
/// first step).
struct Builder<'a> {
    trace: &'a OpTrace,
    rows: Vec<usize>,
    index: HashMap<Node, u32>,
    nodes: Vec<Node>,
    deps: Vec<Vec<u32>>,
    groups: Vec<Vec<u32>>,
    p2p: Vec<build::P2p>,
    lane: String,
}

impl Graph {
    /// Builds the template from `rows`, the rows of one lane.
    pub fn build(trace: &OpTrace, layout: &Layout, rows: Vec<usize>, lane: String) -> Result<Graph, WhatIfError> {
        let mut b = Builder::new(trace, rows, lane)?;
        let use_dp = layout.dp * layout.cp > 1;
        let overlapped = b.nodes.iter().any(|n| n.optype == OpType::SeparateGradsAllReduce);
        for stage in 0..layout.pp {
            b.compute_and_p2p_streams(stage, layout.pp, layout.vpp)?;
        }
        b.pair_p2p(layout.pp)?;
        if use_dp {
            for stage in 0..layout.pp {
                b.dp_stream(stage, overlapped)?;
            }
        }
        for stage in 0..layout.pp {
            b.post_compute(stage, layout.pp, use_dp, overlapped)?;
        }
        b.collectives(layout.pp, use_dp)?;
        b.finish()
    }

    /// The number of ops per lane.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the template has no op.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node of an op, if the template has it.
    pub fn node_of(&self, optype: OpType, seq: u32, stage: u32) -> Option<u32> {
        if seq >= self.seqs || stage >= self.stages {
            return None;
        }
        let t = OpType::ALL.iter().position(|&x| x == optype).unwrap_or(0) as u32;
        let slot = ((t * self.stages + stage) * self.seqs + seq) as usize;
        Some(self.lookup[slot]).filter(|&n| n != u32::MAX)
    }
}

impl<'a> Builder<'a> {
    fn new(trace: &'a OpTrace, rows: Vec<usize>, lane: String) -> Result<Self, WhatIfError> {
        let mut index = HashMap::new();
        let mut nodes = Vec::new();
        for &r in &rows {
            let node = Node {
                optype: trace.optype[r],
                seq: trace.seq_id[r],
                stage: trace.stage[r],
            };
            if index.insert(node.clone(), nodes.len() as u32).is_some() {
                return Err(WhatIfError::new(format!(
                    "{}: op {} appears twice in {lane} (each op of a step and dp rank is recorded once)",
                    trace.locate(r),
                    node.name()
                )));
            }
            nodes.push(node);
        }
        let deps = vec![Vec::new(); nodes.len()];
        Ok(Builder {
            trace,
            rows,
            index,
            nodes,
            deps,
            groups: Vec::new(),
            p2p: Vec::new(),
            lane,
        })
    }

    fn node(&self, optype: OpType, seq: u32, stage: u32) -> Option<u32> {
        self.index.get(&Node { optype, seq, stage }).copied()
    }

    /// The node the model needs, or an error saying why it is needed.
    fn need(&self, optype: OpType, seq: u32, stage: u32, why: &str) -> Result<u32, WhatIfError> {
        self.node(optype, seq, stage).ok_or_else(|| {
            WhatIfError::new(format!(
                "{}: {} has no op {}_{seq}_{stage}, which the dependency model needs ({why})",
                self.trace.file, self.lane, optype
            ))
        })
    }

    fn row(&self, node: u32) -> usize {
        self.rows[node as usize]
    }

    /// The stage's nodes of the given types, in start order.
    fn ordered(&self, stage: u32, keep: impl Fn(OpType) -> bool) -> Vec<u32> {
        let mut rows: Vec<usize> = self
            .rows
            .iter()
            .copied()
            .filter(|&r| self.trace.stage[r] == stage && keep(self.trace.optype[r]))
            .collect();
        start_order(self.trace, &mut rows);
        rows.iter().map(|&r| self.index[&self.node_of(r)]).collect()
    }

    fn node_of(&self, r: usize) -> Node {
        Node {
            optype: self.trace.optype[r],
            seq: self.trace.seq_id[r],
            stage: self.trace.stage[r],
        }
    }

    fn dep(&mut self, op: u32, on: u32) {
        self.deps[op as usize].push(on);
    }

    fn chain(&mut self, ops: &[u32], first_after: &[u32]) {
        let mut last: Vec<u32> = first_after.to_vec();
        for &op in ops {
            for &u in &last {
                self.dep(op, u);
            }
            last = vec![op];
        }
    }
}

mod build;
mod order;

pub(crate) use order::lane_rows;

/// Orders two floats that are never NaN here.
pub(crate) fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.total_cmp(&b)
}

#[cfg(test)]
mod tests;
