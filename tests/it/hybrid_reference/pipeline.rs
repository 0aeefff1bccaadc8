//! One data-parallel replica's pipeline as an explicit event queue.
//!
//! Stage i runs its ops one at a time in its schedule's order. Under the
//! interleaved schedule it holds V model chunks: chunk c is virtual stage
//! s = c·P + i of P·V, and its ops take 1/V of the stage's compute (V = 1
//! otherwise, s = i). An op runs once its stage is idle and its input has
//! arrived: F(0, j)'s input is there at time 0; F(s, j)'s arrives τ after
//! F(s − 1, j) ends (from stage P − 1 back to stage 0 between chunks);
//! B(PV − 1, j)'s when F(PV − 1, j) ends (the loss is on the last virtual
//! stage, no transfer); B(s, j)'s τ after B(s + 1, j) ends. Time only moves by popping the earliest event of
//! a binary heap, an op's completion or an input's arrival; each event wakes
//! the one stage it concerns, which starts its next op at the event's time if
//! it can. This is the definition of the schedule read literally, written
//! without the max-plus recursions an engine would use, so that the two
//! can check each other.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The pipeline schedules: the order in which a stage runs its ops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// GPipe (Huang et al. 2019): every forward, then every backward.
    Gpipe,
    /// PipeDream-Flush's 1F1B (Narayanan et al. 2021): min(P − i − 1, m)
    /// warm-up forwards, then forward and backward in turn, then the
    /// remaining backwards.
    OneFOneB,
    /// Megatron-LM's interleaved 1F1B with V chunks per stage (Narayanan
    /// et al. 2021, §2.2.2); m a multiple of P. The microbatches run in
    /// groups of P: within a group, every chunk in turn forwards the
    /// group's P microbatches (chunk 0 first), and the backwards take the
    /// same turns, chunk V − 1 first. Stage i warms up with
    /// min(2(P − i − 1) + (V − 1)P, V·m) forwards, then runs forward and
    /// backward in turn, then the remaining backwards. V = 1 is 1F1B.
    Interleaved(usize),
}

/// One op of a stage: microbatch `j`'s forward or backward pass of the
/// stage's chunk `c`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Op {
    pub backward: bool,
    pub j: usize,
    pub c: usize,
}

const fn forward(j: usize) -> Op {
    Op {
        backward: false,
        j,
        c: 0,
    }
}

const fn backward(j: usize) -> Op {
    Op {
        backward: true,
        j,
        c: 0,
    }
}

/// `w` warm-up forwards of `forwards`, then forward and backward in turn,
/// then the remaining backwards.
fn warm_up_then_alternate(w: usize, forwards: &[Op], backwards: &[Op]) -> Vec<Op> {
    let n = forwards.len();
    let mut ops = forwards[..w].to_vec();
    for k in 0..n - w {
        ops.push(forwards[w + k]);
        ops.push(backwards[k]);
    }
    ops.extend_from_slice(&backwards[n - w..]);
    ops
}

impl Schedule {
    /// Stage `i`'s ops, in the order it runs them, among `p` stages and `m`
    /// microbatches.
    pub fn order(self, p: usize, i: usize, m: usize) -> Vec<Op> {
        match self {
            Schedule::Gpipe => (0..m).map(forward).chain((0..m).map(backward)).collect(),
            Schedule::OneFOneB | Schedule::Interleaved(1) => {
                let w = (p - i - 1).min(m);
                let forwards: Vec<Op> = (0..m).map(forward).collect();
                let backwards: Vec<Op> = (0..m).map(backward).collect();
                warm_up_then_alternate(w, &forwards, &backwards)
            }
            Schedule::Interleaved(v) => {
                assert_eq!(m % p, 0, "the interleaved schedule needs m a multiple of P");
                let (mut forwards, mut backwards) = (Vec::new(), Vec::new());
                for group in (0..m).step_by(p) {
                    for turn in 0..v {
                        for j in group..group + p {
                            forwards.push(Op {
                                backward: false,
                                j,
                                c: turn,
                            });
                            backwards.push(Op {
                                backward: true,
                                j,
                                c: v - 1 - turn,
                            });
                        }
                    }
                }
                let w = (2 * (p - i - 1) + (v - 1) * p).min(v * m);
                warm_up_then_alternate(w, &forwards, &backwards)
            }
        }
    }

    /// The model chunks per stage.
    pub fn chunks(self) -> usize {
        match self {
            Schedule::Interleaved(v) => v,
            _ => 1,
        }
    }
}

/// What an event says happened at its time.
#[derive(Debug, Clone, Copy)]
enum What {
    /// The stage finished the op.
    Done(Op),
    /// The op's input reached the stage.
    Arrived(Op),
}

/// A timed event at a stage; the heap pops the earliest first, ties in the
/// order they were pushed.
#[derive(Debug, Clone, Copy)]
struct Event {
    time: f64,
    seq: u64,
    stage: usize,
    what: What,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest.
    fn cmp(&self, other: &Self) -> Ordering {
        other.time.total_cmp(&self.time).then(other.seq.cmp(&self.seq))
    }
}

/// A pipeline's fixed shape: its stages' orders, the split of a
/// microbatch's compute between forward and backward, and the transfer time.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub stages: usize,
    /// V, the model chunks per stage.
    pub chunks: usize,
    pub microbatches: usize,
    pub orders: Vec<Vec<Op>>,
    pub backward_ratio: f64,
    pub p2p: f64,
}

impl Pipeline {
    pub fn new(schedule: Schedule, stages: usize, microbatches: usize, backward_ratio: f64, p2p: f64) -> Self {
        let orders = (0..stages).map(|i| schedule.order(stages, i, microbatches)).collect();
        Pipeline {
            stages,
            chunks: schedule.chunks(),
            microbatches,
            orders,
            backward_ratio,
            p2p,
        }
    }

    /// An op's duration from its microbatch's compute x on its stage: the
    /// forward takes x/(V(1 + R)), the backward R·x/(V(1 + R)).
    fn duration(&self, op: Op, x: f64) -> f64 {
        let r = self.backward_ratio;
        let v = self.chunks as f64;
        if op.backward {
            r * x / (v * (1.0 + r))
        } else {
            x / (v * (1.0 + r))
        }
    }
}

/// A replica's stages after one iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// g_i: when stage i's last backward ended.
    pub done: Vec<f64>,
    /// b_i: that backward's duration. It is the stage's last op, B(i, m − 1)
    /// (of chunk 0), in every schedule, and the only one its gradient
    /// buckets overlap.
    pub last: Vec<f64>,
    /// Each stage's busy time, the sum of its ops' durations.
    pub busy: Vec<f64>,
}

impl Timeline {
    /// The replica's idle share: 1 − Σ busy / (P · max g).
    pub fn bubble(&self) -> f64 {
        let makespan = self.done.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        1.0 - self.busy.iter().sum::<f64>() / (self.done.len() as f64 * makespan)
    }
}

/// The state of one replica's event simulation.
struct Run<'a> {
    pipe: &'a Pipeline,
    compute: &'a [f64],
    heap: BinaryHeap<Event>,
    seq: u64,
    /// Per stage, the position of its next op in its order.
    next: Vec<usize>,
    idle: Vec<bool>,
    /// Per virtual stage and op (forward j at 2j, backward j at 2j + 1):
    /// whether its input is there.
    arrived: Vec<bool>,
    timeline: Timeline,
}

impl Run<'_> {
    fn push(&mut self, time: f64, stage: usize, what: What) {
        self.seq += 1;
        let seq = self.seq;
        self.heap.push(Event { time, seq, stage, what });
    }

    fn slot(&self, stage: usize, op: Op) -> usize {
        let s = op.c * self.pipe.stages + stage;
        (s * self.pipe.microbatches + op.j) * 2 + op.backward as usize
    }

    /// Starts stage i's next op at `now` if the stage is idle and the op's
    /// input has arrived.
    fn wake(&mut self, i: usize, now: f64) {
        let Some(&op) = self.pipe.orders[i].get(self.next[i]) else {
            return;
        };
        if !self.idle[i] || !self.arrived[self.slot(i, op)] {
            return;
        }
        let x = self.compute[i * self.pipe.microbatches + op.j];
        let d = self.pipe.duration(op, x);
        self.idle[i] = false;
        self.next[i] += 1;
        self.timeline.busy[i] += d;
        self.push(now + d, i, What::Done(op));
    }

    /// An op of stage i ended at `now`: the stage is free, and the op's
    /// output starts on its way to the stage that needs it.
    fn finished(&mut self, i: usize, op: Op, now: f64) {
        self.idle[i] = true;
        let p = self.pipe.stages;
        let s = op.c * p + i;
        let last = p * self.pipe.chunks - 1;
        // The op virtual stage `t` runs next for the same microbatch.
        let at = |t: usize, backward: bool| {
            (
                t % p,
                Op {
                    backward,
                    j: op.j,
                    c: t / p,
                },
            )
        };
        match (op.backward, s) {
            (false, s) if s < last => {
                let (to, next) = at(s + 1, false);
                self.push(now + self.pipe.p2p, to, What::Arrived(next));
            }
            (false, _) => {
                let slot = self.slot(i, Op { backward: true, ..op });
                self.arrived[slot] = true;
            }
            (true, 0) => {}
            (true, s) => {
                let (to, next) = at(s - 1, true);
                self.push(now + self.pipe.p2p, to, What::Arrived(next));
            }
        }
        if op.backward {
            self.timeline.done[i] = now;
            let x = self.compute[i * self.pipe.microbatches + op.j];
            self.timeline.last[i] = self.pipe.duration(op, x);
        }
        self.wake(i, now);
    }
}

/// One replica's iteration: `compute[i * m + j]` is microbatch j's compute
/// on stage i, x_{i,j}. Panics if an op can never run (a schedule that
/// deadlocks), which a stage left with ops would show.
pub fn replica(pipe: &Pipeline, compute: &[f64]) -> Timeline {
    let (p, m) = (pipe.stages, pipe.microbatches);
    assert_eq!(compute.len(), p * m);
    let ops = 2 * m * pipe.chunks;
    let mut run = Run {
        pipe,
        compute,
        heap: BinaryHeap::with_capacity(2 * p),
        seq: 0,
        next: vec![0; p],
        idle: vec![true; p],
        arrived: vec![false; p * ops],
        timeline: Timeline {
            done: vec![f64::NAN; p],
            last: vec![f64::NAN; p],
            busy: vec![0.0; p],
        },
    };
    for j in 0..m {
        let slot = run.slot(0, forward(j));
        run.arrived[slot] = true;
    }
    for i in 0..p {
        run.wake(i, 0.0);
    }
    while let Some(event) = run.heap.pop() {
        match event.what {
            What::Done(op) => run.finished(event.stage, op, event.time),
            What::Arrived(op) => {
                let slot = run.slot(event.stage, op);
                run.arrived[slot] = true;
                run.wake(event.stage, event.time);
            }
        }
    }
    for i in 0..p {
        assert_eq!(run.next[i], ops, "stage {i} deadlocked");
    }
    run.timeline
}
