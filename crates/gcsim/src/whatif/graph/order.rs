//! The simulation order of the template's units, and the placement of every
//! row of the trace in its lane.

use std::collections::VecDeque;

use super::{Builder, Graph, Unit};
use crate::whatif::WhatIfError;
use crate::whatif::optype::OpType;
use crate::whatif::table::OpTrace;

impl Builder<'_> {
    /// The finished graph: collectives marked, units in topological order.
    pub(super) fn finish(self) -> Result<Graph, WhatIfError> {
        let n = self.nodes.len();
        let mut group_of = vec![None; n];
        for (g, members) in self.groups.iter().enumerate() {
            for &m in members {
                group_of[m as usize] = Some(g as u32);
            }
        }
        let dp_sync: Vec<bool> = (0..n)
            .map(|v| {
                group_of[v].is_some()
                    && matches!(
                        self.nodes[v].optype,
                        OpType::ParamsAllGather
                            | OpType::GradsReduceScatter
                            | OpType::SeparateGradsAllReduce
                            | OpType::OptimizerClipMainGrad
                    )
            })
            .collect();
        let order = self.topological(&group_of)?;
        let stages = self.nodes.iter().map(|v| v.stage + 1).max().unwrap_or(1);
        let seqs = self.nodes.iter().map(|v| v.seq + 1).max().unwrap_or(1);
        let mut lookup = vec![u32::MAX; OpType::ALL.len() * (stages * seqs) as usize];
        for (i, v) in self.nodes.iter().enumerate() {
            let t = OpType::ALL.iter().position(|&x| x == v.optype).unwrap_or(0) as u32;
            lookup[((t * stages + v.stage) * seqs + v.seq) as usize] = i as u32;
        }
        let mut deps = self.deps;
        for d in &mut deps {
            d.sort_unstable();
            d.dedup();
        }
        Ok(Graph {
            nodes: self.nodes,
            deps,
            groups: self.groups,
            group_of,
            dp_sync,
            order,
            lookup,
            seqs,
            stages,
        })
    }

    /// Kahn's algorithm over units (an op outside collectives, or a whole
    /// collective); a cycle is an error naming one of its ops.
    fn topological(&self, group_of: &[Option<u32>]) -> Result<Vec<Unit>, WhatIfError> {
        let n = self.nodes.len();
        let ops = n as u32;
        // Units 0..n are ops (those in a collective unused), n.. are collectives.
        let unit = |v: u32| group_of[v as usize].map_or(v, |g| ops + g);
        let units = n + self.groups.len();
        let mut next: Vec<Vec<u32>> = vec![Vec::new(); units];
        let mut indegree = vec![0usize; units];
        for v in 0..ops {
            for &u in &self.deps[v as usize] {
                let (a, b) = (unit(u), unit(v));
                if a == b {
                    return Err(self.cycle(v));
                }
                next[a as usize].push(b);
                indegree[b as usize] += 1;
            }
        }
        let live = |x: usize| x >= n || group_of[x].is_none();
        let mut queue: VecDeque<u32> = (0..units)
            .filter(|&x| live(x) && indegree[x] == 0)
            .map(|x| x as u32)
            .collect();
        let mut order = Vec::new();
        while let Some(x) = queue.pop_front() {
            order.push(if (x as usize) < n {
                Unit::Op(x)
            } else {
                Unit::Group(x - ops)
            });
            for &y in &next[x as usize] {
                indegree[y as usize] -= 1;
                if indegree[y as usize] == 0 {
                    queue.push_back(y);
                }
            }
        }
        let expected = (0..units).filter(|&x| live(x)).count();
        if order.len() != expected {
            let stuck = (0..n).find(|&v| indegree[unit(v as u32) as usize] > 0).unwrap_or(0);
            return Err(self.cycle(stuck as u32));
        }
        Ok(order)
    }

    fn cycle(&self, v: u32) -> WhatIfError {
        WhatIfError::new(format!(
            "{}: the dependency model of {} has a cycle through {}: the recorded op order contradicts the pipeline schedule",
            self.trace.file,
            self.lane,
            self.nodes[v as usize].name()
        ))
    }
}

/// The rows of the trace placed by node and lane (step, dp rank): entry
/// `node * lanes + lane` is the row's index. Lanes are step-major, dp rank
/// minor; every lane must hold exactly the template's ops, and every (dp
/// rank, stage) one rank.
pub(crate) fn lane_rows(
    trace: &OpTrace,
    graph: &Graph,
    steps: &[i64],
    dp: u32,
    pp: u32,
) -> Result<Vec<u32>, WhatIfError> {
    let nodes = graph.len();
    let lanes = steps.len() * dp as usize;
    let mut slot_row = vec![u32::MAX; lanes * nodes];
    let mut rank_of = vec![u32::MAX; (dp * pp) as usize];
    for i in 0..trace.len() {
        let step = steps.binary_search(&trace.step[i]).unwrap_or(0);
        let lane = step * dp as usize + trace.dp_rank[i] as usize;
        let Some(node) = graph.node_of(trace.optype[i], trace.seq_id[i], trace.stage[i]) else {
            return Err(WhatIfError::new(format!(
                "{}: op {} (step {}, dp_rank {}) is not in the first step's dp_rank 0; every step and dp rank must record the same ops",
                trace.locate(i),
                trace.op_name(i),
                trace.step[i],
                trace.dp_rank[i]
            )));
        };
        let slot = node as usize * lanes + lane;
        if slot_row[slot] != u32::MAX {
            return Err(WhatIfError::new(format!(
                "{}: op {} of step {}, dp_rank {} is recorded twice (also in {})",
                trace.locate(i),
                trace.op_name(i),
                trace.step[i],
                trace.dp_rank[i],
                trace.locate(slot_row[slot] as usize).rsplit(": ").next().unwrap_or("")
            )));
        }
        slot_row[slot] = i as u32;
        let worker = (trace.dp_rank[i] * pp + trace.stage[i]) as usize;
        if rank_of[worker] == u32::MAX {
            rank_of[worker] = trace.rank[i];
        } else if rank_of[worker] != trace.rank[i] {
            return Err(WhatIfError::new(format!(
                "{}: rank {} for dp_rank {}, stage {}, which other rows give rank {}: record one rank per (dp rank, stage); tensor- and context-parallel peers are not modelled",
                trace.locate(i),
                trace.rank[i],
                trace.dp_rank[i],
                trace.stage[i],
                rank_of[worker]
            )));
        }
    }
    if let Some(slot) = slot_row.iter().position(|&r| r == u32::MAX) {
        let (node, lane) = (slot / lanes, slot % lanes);
        return Err(WhatIfError::new(format!(
            "{}: step {}, dp_rank {} has no op {}; every step and dp rank must record the same ops as the first step's dp_rank 0",
            trace.file,
            steps[lane / dp as usize],
            lane % dp as usize,
            graph.nodes[node].name()
        )));
    }
    Ok(slot_row)
}
