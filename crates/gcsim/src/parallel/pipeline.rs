//! One replica's pipeline: its stages' ops in schedule order, evaluated as
//! a max-plus recursion over an order that puts every op after its
//! dependencies.

use super::Schedule;

/// One op of a stage: the forward or the backward pass of a microbatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// The stage that runs it.
    pub stage: u32,
    /// The microbatch.
    pub microbatch: u32,
    /// Whether it is the backward pass.
    pub backward: bool,
}

/// A replica's pipeline of P stages over m microbatches under a schedule:
/// its ops in an order in which each comes after the op its stage ran
/// before it and after the op it depends on (the previous stage's forward
/// of the same microbatch, or the next stage's backward; the last stage's
/// backward after its own forward).
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    stages: usize,
    microbatches: usize,
    order: Vec<Op>,
}

/// The times one evaluation of a [`Program`] leaves: per op its end, per
/// stage when it is free (the end of its last op) and how long it computed.
#[derive(Debug, Clone, Default)]
pub struct Times {
    /// The end of F(i, j) at `i·m + j`.
    pub forward_end: Vec<f64>,
    /// The end of B(i, j) at `i·m + j`.
    pub backward_end: Vec<f64>,
    /// Per stage, the end of its last op so far.
    pub free: Vec<f64>,
    /// Per stage, the total duration of its ops.
    pub busy: Vec<f64>,
}

/// Stage `stage`'s ops in the order `schedule` runs them, for `stages`
/// stages and `microbatches` microbatches.
pub fn stage_ops(schedule: Schedule, stages: usize, stage: usize, microbatches: usize) -> Vec<Op> {
    let op = |j: usize, backward: bool| Op {
        stage: stage as u32,
        microbatch: j as u32,
        backward,
    };
    let m = microbatches;
    match schedule {
        Schedule::GPipe => (0..m)
            .map(|j| op(j, false))
            .chain((0..m).map(|j| op(j, true)))
            .collect(),
        Schedule::OneFOneB => {
            let warm_up = (stages - stage - 1).min(m);
            let mut ops: Vec<Op> = (0..warm_up).map(|j| op(j, false)).collect();
            for k in 0..m - warm_up {
                ops.push(op(warm_up + k, false));
                ops.push(op(k, true));
            }
            ops.extend((m - warm_up..m).map(|j| op(j, true)));
            ops
        }
    }
}

impl Program {
    /// The program of `stages` stages over `microbatches` microbatches.
    ///
    /// The evaluation order is found by advancing each stage through its
    /// schedule as far as its next op's dependency has been placed, round
    /// after round; GPipe and 1F1B never stall (each round places at least
    /// one op).
    pub fn new(schedule: Schedule, stages: usize, microbatches: usize) -> Self {
        assert!(
            stages >= 1 && microbatches >= 1,
            "a pipeline has a stage and a microbatch"
        );
        let m = microbatches;
        let ops: Vec<Vec<Op>> = (0..stages).map(|i| stage_ops(schedule, stages, i, m)).collect();
        let mut next = vec![0usize; stages];
        let mut forward_done = vec![false; stages * m];
        let mut backward_done = vec![false; stages * m];
        let mut order = Vec::with_capacity(2 * stages * m);
        while order.len() < 2 * stages * m {
            let before = order.len();
            for i in 0..stages {
                while let Some(&op) = ops[i].get(next[i]) {
                    let j = op.microbatch as usize;
                    let ready = match (op.backward, i) {
                        (false, 0) => true,
                        (false, _) => forward_done[(i - 1) * m + j],
                        (true, i) if i + 1 == stages => forward_done[i * m + j],
                        (true, _) => backward_done[(i + 1) * m + j],
                    };
                    if !ready {
                        break;
                    }
                    if op.backward {
                        backward_done[i * m + j] = true;
                    } else {
                        forward_done[i * m + j] = true;
                    }
                    order.push(op);
                    next[i] += 1;
                }
            }
            assert!(order.len() > before, "the {} schedule stalls", schedule.name());
        }
        Self {
            stages,
            microbatches,
            order,
        }
    }

    /// The number of stages.
    pub fn stages(&self) -> usize {
        self.stages
    }

    /// The number of microbatches.
    pub fn microbatches(&self) -> usize {
        self.microbatches
    }

    /// Every op, in evaluation order.
    pub fn order(&self) -> &[Op] {
        &self.order
    }

    /// Evaluates the pipeline from time 0: `compute[i·stride + j]` is
    /// microbatch j's compute on stage i (`stride` ≥ m), of which the forward op takes the share
    /// `forward_share` and the backward the rest; `p2p` is the transfer
    /// between neighbouring stages. Each op starts when its stage is free
    /// and its dependency has ended (plus `p2p` across stages).
    pub fn run(&self, compute: &[f64], stride: usize, forward_share: f64, p2p: f64, times: &mut Times) {
        let (p, m) = (self.stages, self.microbatches);
        assert!(
            stride >= m && compute.len() >= (p - 1) * stride + m,
            "a compute time per op"
        );
        times.forward_end.resize(p * m, 0.0);
        times.backward_end.resize(p * m, 0.0);
        times.free.clear();
        times.free.resize(p, 0.0);
        times.busy.clear();
        times.busy.resize(p, 0.0);
        let Times {
            forward_end,
            backward_end,
            free,
            busy,
        } = times;
        for op in &self.order {
            let (i, j) = (op.stage as usize, op.microbatch as usize);
            let at = i * m + j;
            let x = compute[i * stride + j];
            let forward = x * forward_share;
            let (ready, duration) = if op.backward {
                let ready = if i + 1 == p {
                    forward_end[at]
                } else {
                    backward_end[at + m] + p2p
                };
                (ready, x - forward)
            } else {
                let ready = if i == 0 { 0.0 } else { forward_end[at - m] + p2p };
                (ready, forward)
            };
            let end = free[i].max(ready) + duration;
            free[i] = end;
            busy[i] += duration;
            if op.backward {
                backward_end[at] = end;
            } else {
                forward_end[at] = end;
            }
        }
    }
}
