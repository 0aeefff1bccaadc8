//! A per-op trace of a pipeline-parallel job, for `gcsim whatif`, from the
//! PyTorch profiler's traces (one `*.pt.trace.json` per rank).
//!
//! The profiler records no pipeline ops by itself: the job names them. Each
//! op runs inside `torch.profiler.record_function(NAME)`, where NAME is an
//! op type of the what-if artifact of Lin et al. (OSDI 2025), the names of
//! Megatron-LM's timers (`forward-compute`, `backward-send`,
//! `grads-reduce-scatter`, `optimizer`, ...), optionally followed by
//! `mb=J` (the microbatch) and `mc=C` (the model chunk of an interleaved
//! pipeline). Megatron's combined exchanges `forward-send-backward-recv` and
//! `backward-send-forward-recv` are two ops of the same span, as the
//! artifact's traces record them.
//!
//! Each range appears twice in the file: on the CPU (`user_annotation`, or
//! `cpu_op` in older versions) and, when it launched GPU work, on each GPU
//! stream it used (`gpu_user_annotation`, spanning that work), linked by
//! `args["External id"]`. An op's time is its GPU span (from the first
//! copy's start to the last one's end), as the artifact times ops with
//! CUDA events; an op without GPU work keeps its CPU span. Its step is the
//! `ProfilerStep#N` whose CPU span holds the op's CPU start.

mod rows;

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde::de::Deserializer;

use super::ImportError;
use super::chrome::{self, Header, Micros, Sink, Text};
use super::pytorch::{STEP_PREFIX, step_of};
use crate::whatif::OpType;

pub use rows::{OpRow, OpsImported, import};

/// The two ops of Megatron's combined exchanges, by name.
const COMBINED: [(&str, [OpType; 2]); 2] = [
    (
        "forward-send-backward-recv",
        [OpType::ForwardSend, OpType::BackwardRecv],
    ),
    (
        "backward-send-forward-recv",
        [OpType::BackwardSend, OpType::ForwardRecv],
    ),
];

/// The op types a range's first word names, if it names any.
fn op_types(word: &str) -> Option<Vec<OpType>> {
    if let Some(op) = OpType::from_name(word) {
        return Some(vec![op]);
    }
    COMBINED
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, ops)| ops.to_vec())
}

/// An event's name, when it is one this reader keeps.
enum Name {
    /// `ProfilerStep#N`: the `N`.
    Step(String),
    /// A range naming an op type: the whole name.
    Op(String),
}

fn kept_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Name>, D::Error> {
    d.deserialize_str(Text(|s: &str| {
        if let Some(number) = s.strip_prefix(STEP_PREFIX) {
            return Some(Name::Step(number.to_string()));
        }
        let first = s.split_whitespace().next()?;
        op_types(first).map(|_| Name::Op(s.to_string()))
    }))
}

/// Where an event was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Side {
    /// The host: `user_annotation`, `cpu_op`, and any category not a
    /// device's.
    #[default]
    Cpu,
    /// A GPU stream's copy of a range: `gpu_user_annotation`.
    Gpu,
    /// Another device event (kernels, memory copies): not kept.
    Device,
}

fn side<'de, D: Deserializer<'de>>(d: D) -> Result<Side, D::Error> {
    d.deserialize_str(Text(|s: &str| match s {
        "gpu_user_annotation" => Side::Gpu,
        s if s.starts_with("gpu") || s == "kernel" => Side::Device,
        _ => Side::Cpu,
    }))
}

/// The arguments this reader uses.
#[derive(Deserialize)]
struct Args {
    /// Links a range's CPU event to its GPU copies.
    #[serde(default, rename = "External id")]
    external: Option<serde_json::Value>,
}

/// One event, as far as a step or an op needs it.
#[derive(Deserialize)]
pub struct OpEvent {
    #[serde(default, rename = "ph", deserialize_with = "chrome::is_complete")]
    complete: bool,
    #[serde(default, rename = "name", deserialize_with = "kept_name")]
    name: Option<Name>,
    #[serde(default, rename = "cat", deserialize_with = "side")]
    side: Side,
    #[serde(default)]
    ts: Option<serde_json::Value>,
    #[serde(default)]
    dur: Option<serde_json::Value>,
    #[serde(default)]
    args: Option<Args>,
}

/// An op as its name describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpName {
    /// The op types of the span (two for a combined exchange).
    pub types: Vec<OpType>,
    /// `mb=J`, the microbatch.
    pub microbatch: Option<u32>,
    /// `mc=C`, the model chunk.
    pub chunk: Option<u32>,
}

impl OpName {
    /// Parses `TYPE [mb=J] [mc=C]`.
    pub fn parse(name: &str) -> Result<OpName, String> {
        let mut words = name.split_whitespace();
        let first = words.next().unwrap_or_default();
        let types = op_types(first).ok_or_else(|| format!("event `{name}` names no op type"))?;
        let mut op = OpName {
            types,
            microbatch: None,
            chunk: None,
        };
        for word in words {
            let slot = match word.split_once('=') {
                Some(("mb", value)) => Some((&mut op.microbatch, value)),
                Some(("mc", value)) => Some((&mut op.chunk, value)),
                _ => None,
            };
            let parsed = slot.and_then(|(slot, value)| Some((slot, value.parse::<u32>().ok()?)));
            let Some((slot, value)) = parsed else {
                return Err(format!(
                    "event `{name}`: `{word}` is not mb=J or mc=C; accepted: an op type followed by mb=J (the microbatch) and mc=C (the model chunk), each a whole number >= 0"
                ));
            };
            *slot = Some(value);
        }
        Ok(op)
    }
}

/// A recorded range on the CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuOp {
    /// What it is.
    pub name: OpName,
    /// Its CPU start and duration, microseconds.
    pub start: f64,
    /// Its CPU duration, microseconds.
    pub dur: f64,
    /// The `External id` linking it to its GPU copies.
    pub external: Option<u64>,
    /// The line its event ends on.
    pub line: u64,
}

/// What one file holds: its steps, its ops, and its ops' GPU spans.
#[derive(Debug, Default)]
pub struct RankEvents {
    /// Each step's CPU span (start, end), microseconds.
    pub steps: Vec<(u64, f64, f64)>,
    /// The op ranges on the CPU, in file order.
    pub ops: Vec<CpuOp>,
    /// By `External id`: the earliest start and latest end of the GPU copies.
    pub gpu: HashMap<u64, (f64, f64)>,
    /// GPU copies without an `External id`, which cannot be matched.
    pub unlinked: usize,
}

/// An `External id`: a whole number.
fn external_id(args: Option<&Args>) -> Result<Option<u64>, String> {
    match args.and_then(|a| a.external.as_ref()) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("has args.\"External id\" `{v}`; accepted: a whole number >= 0")),
    }
}

impl Sink for RankEvents {
    type Event = OpEvent;

    fn take(&mut self, event: OpEvent, line: u64) -> Result<(), String> {
        let (true, Some(name), side) = (event.complete, event.name, event.side) else {
            return Ok(());
        };
        let shown = match &name {
            Name::Step(n) => format!("{STEP_PREFIX}{n}"),
            Name::Op(n) => n.clone(),
        };
        let time = |field: &Option<serde_json::Value>, what: &str, kind: Micros| {
            chrome::micros(field.as_ref(), what, kind).map_err(|reason| format!("event `{shown}` {reason}"))
        };
        match (name, side) {
            (_, Side::Device) => {}
            (Name::Step(_), Side::Gpu) => {}
            (Name::Step(number), Side::Cpu) => {
                let step = step_of(&number)?;
                let start = time(&event.ts, "ts", Micros::Instant)?;
                let dur = time(&event.dur, "dur", Micros::Positive)?;
                if self.steps.iter().any(|s| s.0 == step) {
                    return Err(format!("event `{shown}` appears twice on the CPU side"));
                }
                self.steps.push((step, start, start + dur));
            }
            (Name::Op(text), Side::Cpu) => {
                let name = OpName::parse(&text)?;
                let start = time(&event.ts, "ts", Micros::Instant)?;
                let dur = time(&event.dur, "dur", Micros::Duration)?;
                let external = external_id(event.args.as_ref()).map_err(|r| format!("event `{shown}` {r}"))?;
                self.ops.push(CpuOp {
                    name,
                    start,
                    dur,
                    external,
                    line,
                });
            }
            (Name::Op(_), Side::Gpu) => {
                let start = time(&event.ts, "ts", Micros::Instant)?;
                let end = start + time(&event.dur, "dur", Micros::Duration)?;
                match external_id(event.args.as_ref()).map_err(|r| format!("event `{shown}` {r}"))? {
                    Some(id) => {
                        let span = self.gpu.entry(id).or_insert((start, end));
                        *span = (span.0.min(start), span.1.max(end));
                    }
                    None => self.unlinked += 1,
                }
            }
        }
        Ok(())
    }
}

/// Reads one profiler trace's steps and op ranges.
pub fn read(path: &Path) -> Result<(Header, RankEvents), ImportError> {
    let (file, reader) = chrome::open(path)?;
    let mut events = RankEvents::default();
    let header = chrome::parse(&file, reader, &mut events)?;
    if events.steps.is_empty() {
        return Err(ImportError::NoSteps { file });
    }
    Ok((header, events))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Result<RankEvents, String> {
        let mut events = RankEvents::default();
        chrome::parse("t.json", text.as_bytes(), &mut events).map_err(|e| e.to_string())?;
        Ok(events)
    }

    #[test]
    fn names_give_the_op_types_microbatch_and_chunk() {
        let op = OpName::parse("forward-compute mb=3 mc=1").unwrap();
        assert_eq!(
            (op.types, op.microbatch, op.chunk),
            (vec![OpType::ForwardCompute], Some(3), Some(1))
        );
        let op = OpName::parse("backward-send-forward-recv").unwrap();
        assert_eq!(op.types, vec![OpType::BackwardSend, OpType::ForwardRecv]);
        assert_eq!(OpName::parse("optimizer").unwrap().microbatch, None);
        for bad in [
            "forward-compute mb=x",
            "forward-compute mb=-1",
            "forward-compute micro=2",
            "forward-compute 3",
        ] {
            let e = OpName::parse(bad).unwrap_err();
            assert!(e.contains("is not mb=J or mc=C"), "{bad}: {e}");
        }
    }

    /// The GPU copies of a range are merged by `External id`; ranges that
    /// name no op type, kernels and other devices' events are skipped.
    #[test]
    fn keeps_steps_ops_and_their_gpu_spans() {
        let e = events(
            r#"{"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "ts": 10, "dur": 100},
{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#4", "ts": 12, "dur": 90},
{"ph": "X", "cat": "user_annotation", "name": "forward-compute mb=0", "ts": 20, "dur": 2, "args": {"External id": 7}},
{"ph": "X", "cat": "gpu_user_annotation", "name": "forward-compute mb=0", "ts": 30, "dur": 5, "args": {"External id": 7}},
{"ph": "X", "cat": "gpu_user_annotation", "name": "forward-compute mb=0", "ts": 25, "dur": 4, "args": {"External id": 7}},
{"ph": "X", "cat": "gpu_user_annotation", "name": "optimizer", "ts": 25, "dur": 4},
{"ph": "X", "cat": "kernel", "name": "forward-compute", "ts": 25, "dur": 4},
{"ph": "X", "cat": "user_annotation", "name": "my-range", "ts": 25, "dur": 4},
{"ph": "i", "cat": "user_annotation", "name": "optimizer", "ts": 25}
]}"#,
        )
        .unwrap();
        assert_eq!(e.steps, vec![(4, 10.0, 110.0)]);
        assert_eq!(e.ops.len(), 1);
        assert_eq!(
            (e.ops[0].start, e.ops[0].dur, e.ops[0].external, e.ops[0].line),
            (20.0, 2.0, Some(7), 4)
        );
        assert_eq!(e.gpu[&7], (25.0, 35.0));
        assert_eq!(e.unlinked, 1);
    }

    #[test]
    fn events_that_cannot_be_used_name_their_line() {
        let ev = |body: &str| {
            format!(
                "{{\"traceEvents\": [\n{{\"ph\": \"X\", \"name\": \"ProfilerStep#1\", \"ts\": 0, \"dur\": 5}},\n{body}\n]}}"
            )
        };
        let cases = [
            (
                r#"{"ph": "X", "name": "optimizer", "ts": "x", "dur": 1}"#,
                "t.json:3: event `optimizer` has ts `\"x\"`; accepted: a number of microseconds",
            ),
            (
                r#"{"ph": "X", "name": "optimizer", "ts": 1, "dur": -1}"#,
                "t.json:3: event `optimizer` has dur `-1`; accepted: a number of microseconds >= 0",
            ),
            (
                r#"{"ph": "X", "name": "optimizer", "ts": 1, "dur": 1, "args": {"External id": "a"}}"#,
                "has args.\"External id\" `\"a\"`; accepted: a whole number",
            ),
            (
                r#"{"ph": "X", "name": "optimizer mb=two", "ts": 1, "dur": 1}"#,
                "t.json:3: event `optimizer mb=two`: `mb=two` is not mb=J or mc=C",
            ),
            (
                r#"{"ph": "X", "name": "ProfilerStep#1", "ts": 1, "dur": 1}"#,
                "t.json:3: event `ProfilerStep#1` appears twice",
            ),
            (
                r#"{"ph": "X", "name": "ProfilerStep#2", "dur": 1}"#,
                "event `ProfilerStep#2` has ts none",
            ),
        ];
        for (body, expected) in cases {
            let e = events(&ev(body)).unwrap_err();
            assert!(e.contains(expected), "{body}: {e}");
        }
    }
}
