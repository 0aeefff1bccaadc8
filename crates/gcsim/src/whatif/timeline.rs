//! One step of a measured job, op by op, in the replay with the measured
//! durations (the "actual" run that S compares, with no launch delay) and
//! in the ideal run, written as a Chrome trace (ui.perfetto.dev): a process
//! per run, a group of threads per (dp rank, stage) worker, a complete
//! event per op named as the artifact names it (`forward-compute_3_1`).
//!
//! A worker's compute ops (forward, backward, gc, optimizer) run one after
//! another and share its first thread; its communication ops may overlap
//! them and each other (each send/recv type is its own stream, and a
//! collective member spans its wait for the peers), so they go on the
//! worker's further threads, each op on the first whose last op has ended:
//! a viewer draws no op over another.

use std::io::{self, Write};

use super::WhatIfError;
use super::graph::Node;
use super::optype::OpType;
use crate::export::chrome::{self, Event};

/// One op of a step's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedOp {
    /// Its type, seq and stage.
    pub node: Node,
    /// Its dp rank.
    pub dp_rank: u32,
    /// When it starts (seconds from the step's start).
    pub start: f64,
    /// When it ends.
    pub end: f64,
}

/// One run of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRun {
    /// `actual` or `ideal`.
    pub kind: &'static str,
    /// What the run is, as the viewer names its process.
    pub label: String,
    /// Every op of the step, over every dp rank.
    pub ops: Vec<TimedOp>,
}

impl StepRun {
    /// The last end of an op of the run.
    pub fn end(&self) -> f64 {
        self.ops.iter().map(|op| op.end).fold(f64::NEG_INFINITY, f64::max)
    }
}

/// The actual and the ideal run of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTimelines {
    /// The step.
    pub step: i64,
    /// Data-parallel ranks.
    pub dp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Each worker's rank (dp rank · pp + stage), where the trace records it.
    pub ranks: Vec<Option<u32>>,
    /// The replay with the measured durations, then the ideal.
    pub runs: [StepRun; 2],
}

/// Refuses a step the trace does not record, listing a few it does.
pub fn check_step(steps: &[i64], step: i64) -> Result<(), WhatIfError> {
    if steps.contains(&step) {
        return Ok(());
    }
    let mut sorted = steps.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let shown: Vec<String> = sorted.iter().take(5).map(i64::to_string).collect();
    let more = if sorted.len() > 5 {
        format!(", ... ({} in all)", sorted.len())
    } else {
        String::new()
    };
    Err(WhatIfError::new(format!(
        "--step {step}: the trace has no step {step}; its steps are {}{more}",
        shown.join(", ")
    )))
}

/// The threads an op may go on: the compute thread, or a communication one.
fn is_compute_thread(t: OpType) -> bool {
    t.is_compute() || matches!(t, OpType::Gc | OpType::Optimizer)
}

/// Each op's thread within its worker (0: compute; communication from 1,
/// each op on the first whose ops have ended by its start).
fn threads(ops: &[&TimedOp]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by(|&a, &b| ops[a].start.total_cmp(&ops[b].start));
    let mut ends: Vec<f64> = vec![f64::NEG_INFINITY];
    let mut thread = vec![0; ops.len()];
    for i in order {
        let op = ops[i];
        if is_compute_thread(op.node.optype) {
            ends[0] = ends[0].max(op.end);
            continue;
        }
        let t = match (1..ends.len()).find(|&t| ends[t] <= op.start) {
            Some(t) => t,
            None => {
                ends.push(f64::NEG_INFINITY);
                ends.len() - 1
            }
        };
        ends[t] = op.end;
        thread[i] = t;
    }
    thread
}

/// Threads per worker at most, for thread ids and sort order.
const THREADS: usize = 1000;

impl StepTimelines {
    /// Writes the Chrome trace (times in microseconds).
    pub fn write_chrome_trace(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut events = Vec::new();
        for (pid, run) in self.runs.iter().enumerate() {
            events.push(Event::name("process_name", (pid, 0), run.label.clone()));
            events.push(Event::sort_index("process_sort_index", (pid, 0), pid));
            self.run_events(pid, run, &mut events);
        }
        chrome::write(&events, out)
    }

    /// The events of one run: its threads' names and its ops.
    fn run_events(&self, pid: usize, run: &StepRun, events: &mut Vec<Event>) {
        let pp = self.pp as usize;
        let mut by_worker: Vec<Vec<&TimedOp>> = vec![Vec::new(); self.dp as usize * pp];
        for op in &run.ops {
            by_worker[op.dp_rank as usize * pp + op.node.stage as usize].push(op);
        }
        for (w, ops) in by_worker.iter().enumerate() {
            let (dp_rank, stage) = (w / pp, w % pp);
            let rank = self.ranks[w].map_or(String::new(), |r| format!(" (rank {r})"));
            let worker = format!("dp {dp_rank} stage {stage}{rank}");
            let thread = threads(ops);
            for t in 0..=thread.iter().copied().max().unwrap_or(0) {
                let tid = w * THREADS + t;
                let name = match t {
                    0 => worker.clone(),
                    t => format!("{worker} comm {t}"),
                };
                events.push(Event::name("thread_name", (pid, tid), name));
                events.push(Event::sort_index("thread_sort_index", (pid, tid), tid));
            }
            for (op, t) in ops.iter().zip(thread) {
                let optype = op.node.optype.name();
                let args = serde_json::json!({
                    "optype": optype,
                    "seq": op.node.seq,
                    "step": self.step,
                    "dp_rank": op.dp_rank,
                    "stage": op.node.stage,
                });
                let thread = (pid, w * THREADS + t);
                events.push(Event::span(
                    op.node.name(),
                    optype,
                    (op.start, op.end),
                    1e6,
                    thread,
                    args,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(optype: OpType, start: f64, end: f64) -> TimedOp {
        TimedOp {
            node: Node {
                optype,
                seq: 0,
                stage: 0,
            },
            dp_rank: 0,
            start,
            end,
        }
    }

    #[test]
    fn overlapping_communication_gets_its_own_thread() {
        use OpType::{BackwardRecv as Recv, ForwardCompute as F, ForwardSend as Send};
        let spans = [
            (F, 0.0, 1.0),
            (Send, 1.0, 3.0),
            (F, 1.0, 2.0),
            (Recv, 1.5, 2.5),
            (Send, 3.0, 4.0),
        ];
        let ops: Vec<TimedOp> = spans.iter().map(|&(t, a, b)| op(t, a, b)).collect();
        let refs: Vec<&TimedOp> = ops.iter().collect();
        assert_eq!(threads(&refs), [0, 1, 0, 2, 1]);
    }

    #[test]
    fn an_unknown_step_lists_the_steps() {
        let e = check_step(&[9, 3, 4, 5, 6, 7, 8], 2).unwrap_err().to_string();
        assert_eq!(
            e,
            "--step 2: the trace has no step 2; its steps are 3, 4, 5, 6, 7, ... (7 in all)"
        );
        assert!(check_step(&[3], 3).is_ok());
    }
}
