//! The rules of the dependency template, stage by stage (the artifact's
//! `dependency_model.py`, restated).

use super::{Builder, NO_OP_EPS, cmp_f64};
use crate::whatif::WhatIfError;
use crate::whatif::optype::OpType;

/// A send or receive of the template, after matching.
#[derive(Debug, Clone, Copy)]
pub(super) struct P2p {
    pub node: u32,
    /// Recorded but never launched (outside the stage's compute span, or
    /// with no peer model chunk): it waits for nobody.
    pub no_op: bool,
}

const P2P: [OpType; 4] = [
    OpType::ForwardSend,
    OpType::ForwardRecv,
    OpType::BackwardSend,
    OpType::BackwardRecv,
];

/// The stage a send/recv type talks to, and the type it meets there.
fn peer(t: OpType, stage: u32, pp: u32) -> (OpType, u32) {
    let (peer, delta) = match t {
        OpType::ForwardSend => (OpType::ForwardRecv, 1),
        OpType::ForwardRecv => (OpType::ForwardSend, -1),
        OpType::BackwardSend => (OpType::BackwardRecv, -1),
        _ => (OpType::BackwardSend, 1),
    };
    (peer, ((i64::from(stage) + delta).rem_euclid(i64::from(pp))) as u32)
}

impl Builder<'_> {
    /// The compute chain, the four send/recv streams, the match of each
    /// send/recv to its compute op, and the first backward's receive.
    pub(super) fn compute_and_p2p_streams(&mut self, stage: u32, pp: u32, vpp: u32) -> Result<(), WhatIfError> {
        let comp = self.ordered(stage, OpType::is_compute);
        self.chain(&comp, &[]);
        for t in P2P {
            let stream = self.ordered(stage, |x| x == t);
            self.chain(&stream, &[]);
        }
        for (compute, send, recv) in [
            (OpType::ForwardCompute, OpType::ForwardSend, OpType::ForwardRecv),
            (OpType::BackwardCompute, OpType::BackwardSend, OpType::BackwardRecv),
        ] {
            let ops: Vec<u32> = comp
                .iter()
                .copied()
                .filter(|&c| self.nodes[c as usize].optype == compute)
                .collect();
            for (t, is_send) in [(send, true), (recv, false)] {
                self.match_p2p(stage, pp, vpp, &ops, t, is_send)?;
            }
        }
        self.first_backward(stage, &comp)
    }

    /// Matches the stage's ops of send/recv type `t` to the compute ops of
    /// their direction (`compute`, in start order).
    fn match_p2p(
        &mut self,
        stage: u32,
        pp: u32,
        vpp: u32,
        compute: &[u32],
        t: OpType,
        is_send: bool,
    ) -> Result<(), WhatIfError> {
        let ops = self.ordered(stage, |x| x == t);
        if ops.is_empty() {
            return Ok(());
        }
        let (trace, rows) = (self.trace, &self.rows);
        let last_start = compute
            .iter()
            .map(|&c| trace.start[rows[c as usize]])
            .fold(f64::NEG_INFINITY, f64::max);
        let first_end = compute
            .iter()
            .map(|&c| trace.end(rows[c as usize]))
            .fold(f64::INFINITY, f64::min);
        let launched: Vec<bool> = ops
            .iter()
            .map(|&op| {
                let r = rows[op as usize];
                if is_send {
                    trace.end(r) >= first_end - NO_OP_EPS
                } else {
                    trace.start[r] <= last_start + NO_OP_EPS
                }
            })
            .collect();
        let valid = launched.iter().filter(|&&l| l).count();
        let mut next = 0;
        if valid != compute.len() {
            let edge = stage == 0 || stage + 1 == pp;
            if !edge || (valid != 0 && valid + 1 != compute.len()) {
                return Err(WhatIfError::new(format!(
                    "{}: {} has {valid} {t} ops on stage {stage} for {} compute ops of their direction; only the first and last stage may have none or one fewer",
                    self.trace.file,
                    self.lane,
                    compute.len()
                )));
            }
            if !is_send && valid + 1 == compute.len() {
                next = 1;
            }
        }
        let compute_type = self.nodes[compute.first().map_or(0, |&c| c as usize)].optype;
        for (&op, launched) in ops.iter().zip(launched) {
            if !launched {
                self.p2p.push(P2p { node: op, no_op: true });
                continue;
            }
            let why = format!("the compute op of {}", self.nodes[op as usize].name());
            let matched = self.need(compute_type, next, stage, &why)?;
            let gmc = i64::from(self.trace.gmc[self.row(matched)]);
            let peer_gmc = gmc
                + if (t == OpType::ForwardSend) || (t == OpType::BackwardRecv) {
                    1
                } else {
                    -1
                };
            let no_op = peer_gmc < 0 || peer_gmc >= i64::from(vpp * pp);
            self.p2p.push(P2p { node: op, no_op });
            if is_send {
                self.dep(op, matched);
            } else {
                self.dep(matched, op);
                if next >= 1 {
                    let before = self.need(compute_type, next - 1, stage, &why)?;
                    self.dep(op, before);
                }
            }
            next += 1;
        }
        Ok(())
    }

    /// The first backward receive and send wait for the forward two places
    /// before the stage's first backward (1F1B's warm-up).
    fn first_backward(&mut self, stage: u32, comp: &[u32]) -> Result<(), WhatIfError> {
        let Some(i) = comp
            .iter()
            .position(|&c| self.nodes[c as usize].optype == OpType::BackwardCompute)
        else {
            return Ok(());
        };
        if i < 2 {
            return Ok(());
        }
        if comp[i - 2..i]
            .iter()
            .any(|&c| self.nodes[c as usize].optype != OpType::ForwardCompute)
        {
            return Err(WhatIfError::new(format!(
                "{}: {} stage {stage}: the two compute ops before the first backward are not forwards",
                self.trace.file, self.lane
            )));
        }
        for t in [OpType::BackwardRecv, OpType::BackwardSend] {
            if let Some(op) = self.node(t, 0, stage) {
                self.dep(op, comp[i - 2]);
            }
        }
        Ok(())
    }

    /// Pairs the k-th launched send of a stage with the k-th launched
    /// receive of its peer stage; the no-ops wait for nobody.
    pub(super) fn pair_p2p(&mut self, pp: u32) -> Result<(), WhatIfError> {
        let launched = |b: &Self, t: OpType, stage: u32| -> Vec<u32> {
            b.p2p
                .iter()
                .filter(|p| !p.no_op && b.nodes[p.node as usize].optype == t && b.nodes[p.node as usize].stage == stage)
                .map(|p| p.node)
                .collect()
        };
        for stage in 0..pp {
            for t in [OpType::ForwardSend, OpType::BackwardSend] {
                let (peer_type, peer_stage) = peer(t, stage, pp);
                let sends = launched(self, t, stage);
                let recvs = launched(self, peer_type, peer_stage);
                if sends.len() != recvs.len() {
                    return Err(WhatIfError::new(format!(
                        "{}: {} has {} {t} ops on stage {stage} but {} {peer_type} ops on stage {peer_stage}: every send needs its receive",
                        self.trace.file,
                        self.lane,
                        sends.len(),
                        recvs.len()
                    )));
                }
                for (s, r) in sends.into_iter().zip(recvs) {
                    self.groups.push(vec![s, r]);
                }
            }
        }
        // A receive whose sender type is absent from the trace is paired with nothing.
        for p in self.p2p.clone() {
            let node = &self.nodes[p.node as usize];
            let paired = self.groups.iter().any(|g| g.contains(&p.node));
            if !p.no_op && !paired {
                let (peer_type, peer_stage) = peer(node.optype, node.stage, pp);
                return Err(WhatIfError::new(format!(
                    "{}: {} has {} but no matching {peer_type} on stage {peer_stage}",
                    self.trace.file,
                    self.lane,
                    node.name()
                )));
            }
            if p.no_op {
                self.groups.push(vec![p.node]);
            }
        }
        Ok(())
    }

    /// The data-parallel collectives of a stage: all-gathers and
    /// reduce-scatters in one ordered stream, each model chunk's first
    /// forward after its all-gather and, when the gradients are reduced
    /// during the backward passes, each chunk's reduce-scatter after its
    /// last backward.
    pub(super) fn dp_stream(&mut self, stage: u32, overlapped: bool) -> Result<(), WhatIfError> {
        let stream = self.ordered(stage, |t| {
            matches!(t, OpType::ParamsAllGather | OpType::GradsReduceScatter)
        });
        self.chain(&stream, &[]);
        let comp = self.ordered(stage, OpType::is_compute);
        let mc = |b: &Self, n: u32| b.trace.mc[b.row(n)];
        let mut gathers = self.ordered(stage, |t| t == OpType::ParamsAllGather);
        gathers.sort_by_key(|&n| std::cmp::Reverse(self.nodes[n as usize].seq));
        let mut done = Vec::new();
        for ag in gathers {
            let chunk = mc(self, ag);
            if done.contains(&chunk) {
                continue;
            }
            done.push(chunk);
            let first = comp
                .iter()
                .copied()
                .find(|&c| self.nodes[c as usize].optype == OpType::ForwardCompute && mc(self, c) == chunk)
                .ok_or_else(|| self.no_compute_of(OpType::ForwardCompute, chunk, stage))?;
            self.dep(first, ag);
        }
        if overlapped {
            let mut scatters = self.ordered(stage, |t| t == OpType::GradsReduceScatter);
            scatters.sort_by_key(|&n| self.nodes[n as usize].seq);
            done.clear();
            for rs in scatters {
                let chunk = mc(self, rs);
                if done.contains(&chunk) {
                    continue;
                }
                done.push(chunk);
                let last = self
                    .last_ending(&comp, |b, c| {
                        b.nodes[c as usize].optype == OpType::BackwardCompute && mc(b, c) == chunk
                    })
                    .ok_or_else(|| self.no_compute_of(OpType::BackwardCompute, chunk, stage))?;
                self.dep(rs, last);
            }
        }
        Ok(())
    }

    fn no_compute_of(&self, t: OpType, chunk: i32, stage: u32) -> WhatIfError {
        WhatIfError::new(format!(
            "{}: {} stage {stage} has no {t} op of model chunk {chunk} for its data-parallel collective",
            self.trace.file, self.lane
        ))
    }

    /// The first op (in start order) with the latest end among `ops` that pass `keep`.
    fn last_ending(&self, ops: &[u32], keep: impl Fn(&Self, u32) -> bool) -> Option<u32> {
        let mut best: Option<u32> = None;
        for &c in ops.iter().filter(|&&c| keep(self, c)) {
            let end = self.trace.end(self.row(c));
            if best.is_none_or(|b| cmp_f64(end, self.trace.end(self.row(b))).is_gt()) {
                best = Some(c);
            }
        }
        best
    }

    /// After the stage's last compute: gc, layer-norm all-reduce, embedding
    /// all-reduce (first and last stage), the reduce-scatters (unless they
    /// ran during the backward passes), the clip and the optimizer.
    pub(super) fn post_compute(
        &mut self,
        stage: u32,
        pp: u32,
        use_dp: bool,
        overlapped: bool,
    ) -> Result<(), WhatIfError> {
        let comp = self.ordered(stage, OpType::is_compute);
        let last = self.last_ending(&comp, |_, _| true).ok_or_else(|| {
            WhatIfError::new(format!(
                "{}: {} stage {stage} has no compute op",
                self.trace.file, self.lane
            ))
        })?;
        let why = "the ops after the last backward";
        let gc = self.need(OpType::Gc, 0, stage, why)?;
        self.dep(gc, last);
        let mut chain = vec![self.need(OpType::LayernormGradsAllReduce, 0, stage, why)?];
        if stage == 0 || stage + 1 == pp {
            chain.push(self.need(OpType::EmbeddingGradsAllReduce, 0, stage, "first and last stage")?);
        }
        let scatters = self.ordered(stage, |t| t == OpType::GradsReduceScatter).len() as u32;
        let mut after = vec![gc];
        if use_dp && overlapped {
            if scatters > 0 {
                after.insert(0, self.need(OpType::GradsReduceScatter, scatters - 1, stage, why)?);
            }
            chain.push(self.need(OpType::SeparateGradsAllReduce, 0, stage, why)?);
        } else if use_dp {
            for k in 0..scatters {
                chain.push(self.need(OpType::GradsReduceScatter, k, stage, why)?);
            }
        }
        chain.push(self.need(OpType::OptimizerClipMainGrad, 0, stage, why)?);
        chain.push(self.need(OpType::Optimizer, 0, stage, why)?);
        self.chain(&chain, &after);
        Ok(())
    }

    /// The collectives besides the send/recv pairs: each data-parallel
    /// collective (across the dp ranks), the embedding all-reduce of the
    /// first and last stage, and the clip of every stage.
    pub(super) fn collectives(&mut self, pp: u32, use_dp: bool) -> Result<(), WhatIfError> {
        if use_dp {
            for n in 0..self.nodes.len() as u32 {
                let t = self.nodes[n as usize].optype;
                if matches!(
                    t,
                    OpType::ParamsAllGather | OpType::GradsReduceScatter | OpType::SeparateGradsAllReduce
                ) {
                    self.groups.push(vec![n]);
                }
            }
        }
        let emb = OpType::EmbeddingGradsAllReduce;
        let mut group = vec![self.need(emb, 0, 0, "first and last stage")?];
        if pp > 1 {
            group.push(self.need(emb, 0, pp - 1, "first and last stage")?);
        }
        self.groups.push(group);
        let clip = (0..pp)
            .map(|s| self.need(OpType::OptimizerClipMainGrad, 0, s, "the global clip"))
            .collect::<Result<Vec<_>, _>>()?;
        self.groups.push(clip);
        Ok(())
    }
}
