//! One sampled iteration of a hybrid-parallel job, op by op, written as a
//! Chrome trace (the JSON that ui.perfetto.dev and chrome://tracing open):
//! a process per replica, a thread per rank, a complete event per op, per
//! stage gradient sum and for the optimizer step. Under the interleaved
//! schedule an op's name and arguments also give its model chunk.

use std::io::{self, Write};

use super::Layout;
use crate::export::chrome::{self, Event};

/// One op of one stage of one replica in a sampled iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineOp {
    /// The replica.
    pub replica: usize,
    /// The stage.
    pub stage: usize,
    /// The stage's model chunk (0 but under the interleaved schedule).
    pub chunk: usize,
    /// The microbatch.
    pub microbatch: usize,
    /// Whether it is the backward pass.
    pub backward: bool,
    /// When it starts and ends.
    pub start: f64,
    /// When it ends.
    pub end: f64,
    /// Each of the stage's tensor ranks' own compute of the op: the op
    /// takes the largest.
    pub own: Vec<f64>,
}

/// One stage's gradient sum across the replicas.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineSum {
    /// The stage.
    pub stage: usize,
    /// When the scheme's rule is met, and the sum starts.
    pub start: f64,
    /// When it ends.
    pub end: f64,
    /// The replicas whose gradients it sums.
    pub participants: Vec<usize>,
}

/// One sampled iteration of a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The layout.
    pub layout: Layout,
    /// Every op.
    pub ops: Vec<TimelineOp>,
    /// Every stage's sum.
    pub sums: Vec<TimelineSum>,
    /// When the optimizer step starts and the iteration ends.
    pub optimizer: (f64, f64),
}

impl Timeline {
    /// The iteration's end.
    pub fn end(&self) -> f64 {
        self.optimizer.1
    }

    /// Writes the Chrome trace: times multiplied by `to_micros` (the trace
    /// format's unit is the microsecond).
    pub fn write_chrome_trace(&self, to_micros: f64, out: &mut dyn Write) -> io::Result<()> {
        let l = self.layout;
        let mut events = Vec::new();
        for d in 0..l.dp {
            events.push(Event::name("process_name", (d, 0), format!("replica {d}")));
            for i in 0..l.pp {
                for t in 0..l.tp {
                    let name = format!("stage {i} tp {t} (rank {})", l.rank(d, i, t));
                    events.push(Event::name("thread_name", (d, i * l.tp + t), name));
                }
            }
        }
        let span = |name, cat, times, thread, args| Event::span(name, cat, times, to_micros, thread, args);
        // Chunks are named only where a stage has more than one.
        let chunked = self.ops.iter().any(|op| op.chunk > 0);
        for op in &self.ops {
            let (mut name, cat) = if op.backward {
                (format!("B{}", op.microbatch), "backward")
            } else {
                (format!("F{}", op.microbatch), "forward")
            };
            let mut args = serde_json::json!({ "microbatch": op.microbatch });
            if chunked {
                name.push_str(&format!(" chunk {}", op.chunk));
                args["chunk"] = op.chunk.into();
            }
            for (t, own) in op.own.iter().enumerate() {
                args["own_compute"] = (own * to_micros).into();
                events.push(span(
                    name.clone(),
                    cat,
                    (op.start, op.end),
                    (op.replica, op.stage * l.tp + t),
                    args.clone(),
                ));
            }
        }
        for sum in &self.sums {
            for &d in &sum.participants {
                for t in 0..l.tp {
                    events.push(span(
                        "gradient sum".into(),
                        "collective",
                        (sum.start, sum.end),
                        (d, sum.stage * l.tp + t),
                        serde_json::json!({ "participants": sum.participants.len() }),
                    ));
                }
            }
        }
        for d in (0..l.dp).filter(|_| self.optimizer.1 > self.optimizer.0) {
            for k in 0..l.pp * l.tp {
                events.push(span(
                    "optimizer".into(),
                    "optimizer",
                    self.optimizer,
                    (d, k),
                    serde_json::Value::Null,
                ));
            }
        }
        chrome::write(&events, out)
    }
}
