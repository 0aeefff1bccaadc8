//! One replica's pipeline: its stages' ops in schedule order, evaluated as
//! a max-plus recursion over an order that puts every op after its
//! dependencies.
//!
//! A stage holds V model chunks (V = 1 but under the interleaved
//! schedule): chunk c of stage i is virtual stage s = c·P + i of P·V, and
//! activations flow from virtual stage s to s + 1 (from stage P − 1 back to
//! stage 0 between chunks), their gradients from s + 1 to s.

use super::Schedule;

/// One op of a stage: the forward or the backward pass of a microbatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// The stage that runs it.
    pub stage: u32,
    /// The stage's model chunk it runs (0 but under the interleaved
    /// schedule).
    pub chunk: u32,
    /// The microbatch.
    pub microbatch: u32,
    /// Whether it is the backward pass.
    pub backward: bool,
}

/// A replica's pipeline of P stages over m microbatches under a schedule:
/// its ops in an order in which each comes after the op its stage ran
/// before it and after the op it depends on (the previous virtual stage's
/// forward of the same microbatch, or the next virtual stage's backward;
/// the last virtual stage's backward after its own forward).
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    stages: usize,
    chunks: usize,
    microbatches: usize,
    order: Vec<Op>,
}

/// The times one evaluation of a [`Program`] leaves: per op its end, per
/// stage when it is free (the end of its last op) and how long it computed.
#[derive(Debug, Clone, Default)]
pub struct Times {
    /// The end of F(s, j) at `s·m + j`, s the virtual stage (the stage
    /// with one chunk).
    pub forward_end: Vec<f64>,
    /// The end of B(s, j) at `s·m + j`.
    pub backward_end: Vec<f64>,
    /// Per stage, the end of its last op so far.
    pub free: Vec<f64>,
    /// Per stage, the total duration of its ops.
    pub busy: Vec<f64>,
}

/// Stage `stage`'s ops in the order `schedule` runs them, for `stages`
/// stages and `microbatches` microbatches.
pub fn stage_ops(schedule: Schedule, stages: usize, stage: usize, microbatches: usize) -> Vec<Op> {
    let op = |chunk: usize, j: usize, backward: bool| Op {
        stage: stage as u32,
        chunk: chunk as u32,
        microbatch: j as u32,
        backward,
    };
    let m = microbatches;
    match schedule {
        Schedule::GPipe => (0..m)
            .map(|j| op(0, j, false))
            .chain((0..m).map(|j| op(0, j, true)))
            .collect(),
        Schedule::OneFOneB | Schedule::Interleaved(1) => {
            let warm_up = (stages - stage - 1).min(m);
            one_f_one_b(warm_up, m, |k| op(0, k, false), |k| op(0, k, true))
        }
        Schedule::Interleaved(v) => {
            let (p, v) = (stages, v as usize);
            assert!(
                m.is_multiple_of(p),
                "the interleaved schedule runs microbatches in groups of P"
            );
            // Megatron-LM's get_model_chunk_id and
            // get_microbatch_id_in_model_chunk: the k-th op runs chunk
            // ⌊(k mod PV)/P⌋ (reversed for a backward) of microbatch
            // ⌊k/(PV)⌋·P + k mod P.
            let chunk = |k: usize| (k % (p * v)) / p;
            let microbatch = |k: usize| k / (p * v) * p + k % p;
            let warm_up = (2 * (p - stage - 1) + (v - 1) * p).min(v * m);
            one_f_one_b(
                warm_up,
                v * m,
                |k| op(chunk(k), microbatch(k), false),
                |k| op(v - 1 - chunk(k), microbatch(k), true),
            )
        }
    }
}

/// `warm_up` forwards, then forward `warm_up + k` and backward k in turn,
/// then the remaining backwards, over `ops` forwards and as many backwards.
fn one_f_one_b(warm_up: usize, ops: usize, forward: impl Fn(usize) -> Op, backward: impl Fn(usize) -> Op) -> Vec<Op> {
    let mut order: Vec<Op> = (0..warm_up).map(&forward).collect();
    for k in 0..ops - warm_up {
        order.push(forward(warm_up + k));
        order.push(backward(k));
    }
    order.extend((ops - warm_up..ops).map(backward));
    order
}

impl Program {
    /// The program of `stages` stages over `microbatches` microbatches.
    ///
    /// The evaluation order is found by advancing each stage through its
    /// schedule as far as its next op's dependency has been placed, round
    /// after round; the schedules never stall (each round places at least
    /// one op).
    pub fn new(schedule: Schedule, stages: usize, microbatches: usize) -> Self {
        assert!(
            stages >= 1 && microbatches >= 1,
            "a pipeline has a stage and a microbatch"
        );
        let (m, chunks) = (microbatches, schedule.chunks());
        let virtual_stages = stages * chunks;
        let ops: Vec<Vec<Op>> = (0..stages).map(|i| stage_ops(schedule, stages, i, m)).collect();
        let mut next = vec![0usize; stages];
        let mut forward_done = vec![false; virtual_stages * m];
        let mut backward_done = vec![false; virtual_stages * m];
        let mut order = Vec::with_capacity(2 * virtual_stages * m);
        while order.len() < 2 * virtual_stages * m {
            let before = order.len();
            for i in 0..stages {
                while let Some(&op) = ops[i].get(next[i]) {
                    let j = op.microbatch as usize;
                    let s = op.chunk as usize * stages + i;
                    let ready = match (op.backward, s) {
                        (false, 0) => true,
                        (false, _) => forward_done[(s - 1) * m + j],
                        (true, s) if s + 1 == virtual_stages => forward_done[s * m + j],
                        (true, _) => backward_done[(s + 1) * m + j],
                    };
                    if !ready {
                        break;
                    }
                    if op.backward {
                        backward_done[s * m + j] = true;
                    } else {
                        forward_done[s * m + j] = true;
                    }
                    order.push(op);
                    next[i] += 1;
                }
            }
            assert!(order.len() > before, "the {} schedule stalls", schedule.name());
        }
        Self {
            stages,
            chunks,
            microbatches,
            order,
        }
    }

    /// The number of stages.
    pub fn stages(&self) -> usize {
        self.stages
    }

    /// The model chunks per stage.
    pub fn chunks(&self) -> usize {
        self.chunks
    }

    /// The number of microbatches.
    pub fn microbatches(&self) -> usize {
        self.microbatches
    }

    /// Every op, in evaluation order.
    pub fn order(&self) -> &[Op] {
        &self.order
    }

    /// `op`'s duration when its microbatch's compute on its stage is `x`:
    /// the forward's share `forward_share` of it, or the backward's rest,
    /// over the stage's chunks.
    #[inline]
    pub fn duration(&self, op: &Op, x: f64, forward_share: f64) -> f64 {
        let forward = x * forward_share;
        let part = if op.backward { x - forward } else { forward };
        part / self.chunks as f64
    }

    /// The duration of a stage's last op, the last microbatch's backward of
    /// its first chunk, when that microbatch's compute is `x`.
    pub fn last_backward(&self, x: f64, forward_share: f64) -> f64 {
        (x - x * forward_share) / self.chunks as f64
    }

    /// Where `op`'s end is in [`Times::forward_end`] or
    /// [`Times::backward_end`].
    #[inline]
    pub fn slot(&self, op: &Op) -> usize {
        (op.chunk as usize * self.stages + op.stage as usize) * self.microbatches + op.microbatch as usize
    }

    /// `op`'s end in `times`, as [`Self::run`] left them.
    pub fn end(&self, times: &Times, op: &Op) -> f64 {
        if op.backward {
            times.backward_end[self.slot(op)]
        } else {
            times.forward_end[self.slot(op)]
        }
    }

    /// Evaluates the pipeline from time 0: `compute[i·stride + j]` is
    /// microbatch j's compute on stage i (`stride` ≥ m), of which each of
    /// the stage's V chunks does 1/V: its forward op takes the share
    /// `forward_share` and its backward the rest; `p2p` is the transfer
    /// between consecutive virtual stages. Each op starts when its stage is
    /// free and its dependency has ended (plus `p2p` across stages).
    pub fn run(&self, compute: &[f64], stride: usize, forward_share: f64, p2p: f64, times: &mut Times) {
        let (p, m) = (self.stages, self.microbatches);
        let last = p * self.chunks - 1;
        assert!(
            stride >= m && compute.len() >= (p - 1) * stride + m,
            "a compute time per op"
        );
        times.forward_end.resize((last + 1) * m, 0.0);
        times.backward_end.resize((last + 1) * m, 0.0);
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
            let s = op.chunk as usize * p + i;
            let at = s * m + j;
            let duration = self.duration(op, compute[i * stride + j], forward_share);
            let ready = match (op.backward, s) {
                (false, 0) => 0.0,
                (false, _) => forward_end[at - m] + p2p,
                (true, s) if s == last => forward_end[at],
                (true, _) => backward_end[at + m] + p2p,
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
