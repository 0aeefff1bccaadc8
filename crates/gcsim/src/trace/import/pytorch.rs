//! Step times from the PyTorch profiler's traces. `torch.profiler.profile`
//! with `on_trace_ready=tensorboard_trace_handler(dir)` writes, per rank and
//! profiling cycle, a `*.pt.trace.json`: Chrome-trace JSON (Kineto's
//! export), an object whose `traceEvents` array holds every recorded event,
//! beside `schemaVersion`, `deviceProperties`, `distributedInfo` (`rank`,
//! `world_size`, under torch.distributed), `traceName`, `displayTimeUnit`,
//! `baseTimeNanoseconds` and others. Each `prof.step()` closes a step
//! recorded as a complete event (`"ph": "X"`) named `ProfilerStep#N` with
//! its duration `dur` in microseconds; Kineto also copies the annotation
//! onto the GPU streams (`"cat": "gpu_user_annotation"`), spanning only the
//! kernels of that step, so those copies are skipped and the CPU-side event
//! (`"cat": "user_annotation"`, `cpu_op` in older versions) gives the step's
//! wall time.
//!
//! The files are read as a stream: a trace of hundreds of megabytes holds
//! millions of events, of which only the step events are kept.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::Deserializer;

use super::chrome::{self, Micros, Sink, Text};
use super::{ImportError, Imported};
use crate::trace::TimeUnit;

/// The prefix of the step events' names.
pub const STEP_PREFIX: &str = "ProfilerStep#";

/// What one profiler trace holds.
#[derive(Debug, Default, PartialEq)]
pub struct ProfilerTrace {
    /// `distributedInfo.rank`, when the file has it.
    pub rank: Option<u64>,
    /// Each step's CPU-side duration, in microseconds, by step number.
    pub steps: BTreeMap<u64, f64>,
}

/// Reads the step events of one profiler trace; a file without any is an
/// [`ImportError::NoSteps`].
pub fn read(path: &std::path::Path) -> Result<ProfilerTrace, ImportError> {
    let (file, reader) = chrome::open(path)?;
    let trace = parse(&file, reader)?;
    if trace.steps.is_empty() {
        return Err(ImportError::NoSteps { file });
    }
    Ok(trace)
}

/// Parses a trace from `reader`; `file` names it in errors.
fn parse(file: &str, reader: impl std::io::Read) -> Result<ProfilerTrace, ImportError> {
    let mut steps = Steps::default();
    let header = chrome::parse(file, reader, &mut steps)?;
    Ok(ProfilerTrace {
        rank: header.rank,
        steps: steps.0,
    })
}

/// Reads every file and gathers the step times, each file's rank from its
/// `distributedInfo.rank` or, when no file has one, from its place in
/// `files` (0, 1, ...). Files of the same rank (profiling cycles) add their
/// steps; a step of a rank found twice is an error.
pub fn import(files: &[PathBuf]) -> Result<Imported, ImportError> {
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(ImportError::Ranks(format!(
                "{name} is named twice; give each file once"
            )));
        }
    }
    let traces = files.iter().map(|p| read(p)).collect::<Result<Vec<_>, _>>()?;
    let with_rank = traces.iter().position(|t| t.rank.is_some());
    let without_rank = traces.iter().position(|t| t.rank.is_none());
    let mut imported = Imported::default();
    let ranks: Vec<u64> = match (with_rank, without_rank) {
        (Some(w), Some(wo)) => {
            return Err(ImportError::Ranks(format!(
                "{} has distributedInfo.rank but {} has none; give files that all name their rank, or none (ranks then follow the order of the files)",
                names[w], names[wo]
            )));
        }
        (Some(_), None) => {
            imported.note(format!(
                "ranks from each file's distributedInfo.rank: {}",
                listing(names.iter().zip(traces.iter().map(|t| t.rank.unwrap_or_default())))
            ));
            traces.iter().map(|t| t.rank.unwrap_or_default()).collect()
        }
        (None, _) => {
            imported.note(format!(
                "no file has distributedInfo.rank: ranks follow the order of the files: {}",
                listing(names.iter().zip(0..))
            ));
            (0..files.len() as u64).collect()
        }
    };
    for ((name, trace), &rank) in names.iter().zip(&traces).zip(&ranks) {
        for (&step, &dur) in &trace.steps {
            imported.add(name, name.clone(), step, rank, seconds(dur))?;
        }
    }
    Ok(imported)
}

/// A duration in microseconds, in seconds: the decimal point moved in the
/// shortest text that reads back as `us` (the profiler's own digits, such
/// as `327358.414`), so that the result is the double nearest the exact
/// value (see [`TimeUnit::parse_seconds`]).
fn seconds(us: f64) -> f64 {
    TimeUnit::Microseconds
        .parse_seconds(&us.to_string())
        .unwrap_or_else(|| TimeUnit::Microseconds.to_seconds(us))
}

/// `a = 0, b = 1, c = 2 and 5 more`.
fn listing<'a>(pairs: impl Iterator<Item = (&'a String, u64)>) -> String {
    const SHOWN: usize = 4;
    let pairs: Vec<_> = pairs.collect();
    let mut text = pairs
        .iter()
        .take(SHOWN)
        .map(|(name, rank)| format!("{name} = {rank}"))
        .collect::<Vec<_>>()
        .join(", ");
    if pairs.len() > SHOWN {
        text += &format!(" and {} more", pairs.len() - SHOWN);
    }
    text
}

/// One event, as far as a step needs it; every other field is skipped
/// unread, and only a step's name is kept.
#[derive(Deserialize)]
pub struct StepEvent {
    /// Whether the phase is `X` (a complete event, with `dur`).
    #[serde(default, rename = "ph", deserialize_with = "chrome::is_complete")]
    complete: bool,
    /// The `N` of a `ProfilerStep#N` name; no other name is kept.
    #[serde(default, rename = "name", deserialize_with = "step_number")]
    step: Option<String>,
    /// Whether the category is a device's (`gpu_user_annotation`, ...).
    #[serde(default, rename = "cat", deserialize_with = "on_device")]
    device: bool,
    /// The duration, microseconds; checked only for a step event.
    #[serde(default)]
    dur: Option<serde_json::Value>,
}

fn step_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    d.deserialize_str(Text(|s: &str| s.strip_prefix(STEP_PREFIX).map(str::to_string)))
}

/// Whether an event's category is a device's (`gpu_user_annotation`, ...).
pub fn on_device<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_str(Text(|s: &str| s.starts_with("gpu_")))
}

/// The step number of a `ProfilerStep#N` name, or why it is not one.
pub fn step_of(number: &str) -> Result<u64, String> {
    number
        .parse()
        .map_err(|_| format!("event `{STEP_PREFIX}{number}`: the step `{number}` is not a whole number >= 0"))
}

/// Each step's CPU-side duration, microseconds, by step number.
#[derive(Default)]
struct Steps(BTreeMap<u64, f64>);

impl Sink for Steps {
    type Event = StepEvent;

    fn take(&mut self, event: StepEvent, _line: u64) -> Result<(), String> {
        let (true, false, Some(number)) = (event.complete, event.device, event.step) else {
            return Ok(());
        };
        let name = format!("{STEP_PREFIX}{number}");
        let step = step_of(&number)?;
        let dur = chrome::micros(event.dur.as_ref(), "dur", Micros::Positive)
            .map_err(|reason| format!("event `{name}` {reason}"))?;
        if self.0.insert(step, dur).is_some() {
            return Err(format!("event `{name}` appears twice on the CPU side"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ProfilerTrace, String> {
        super::parse("t.json", text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn keeps_the_cpu_side_step_events() {
        let text = r#"{
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 4},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 1712667379482786.5, "dur": 2674.125, "args": {"External id": 1}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#7", "pid": 0, "tid": 7, "ts": 1712667379482800, "dur": 99},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 3},
  {"ph": "i", "cat": "user_annotation", "name": "ProfilerStep#9", "ts": 5, "s": "t"},
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#8", "ts": 1712667379485460, "dur": 3000},
  {"ph": "M", "name": "process_name", "args": {"name": "python"}}
  ],
  "traceName": "x.pt.trace.json", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1
}"#;
        let t = parse(text).unwrap();
        assert_eq!(t.rank, Some(3));
        assert_eq!(t.steps, BTreeMap::from([(7, 2674.125), (8, 3000.0)]));
    }

    /// A value of the wrong kind is named by its JSON path and what is
    /// accepted there, not by the reader's Rust types.
    #[test]
    fn errors_name_the_json_path() {
        let cases = [
            (
                r#"{"distributedInfo": {"rank": "a"}}"#,
                r#"t.json: line 1, column 32: distributedInfo.rank: invalid type: string "a"; accepted: a whole number >= 0"#,
            ),
            (
                r#"{"distributedInfo": 3}"#,
                "distributedInfo: invalid type: integer `3`; accepted: an object with the rank",
            ),
            (
                r#"{"traceEvents": [{"ph": 5}]}"#,
                "traceEvents[0].ph: invalid type: integer `5`; accepted: a string",
            ),
            (
                r#"{"traceEvents": {}}"#,
                "traceEvents: invalid type: map; accepted: an array of trace events",
            ),
            (
                "5",
                "the top level: invalid type: integer `5`; accepted: a Chrome trace",
            ),
        ];
        for (text, says) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
            for rust in ["u64", "struct", "DistributedInfo"] {
                assert!(!e.contains(rust), "{text}: {e}");
            }
        }
    }

    #[test]
    fn errors_name_the_line() {
        let ev = |body: &str| {
            format!(
                "{{\"traceEvents\": [\n{{\"ph\": \"X\", \"name\": \"ProfilerStep#1\", \"ts\": 0, \"dur\": 5}},\n{body}\n]}}"
            )
        };
        let cases = [
            (
                ev(r#"{"ph": "X", "name": "ProfilerStep#1", "dur": 6}"#),
                "t.json:3: event `ProfilerStep#1` appears twice on the CPU side",
            ),
            (
                ev(r#"{"ph": "X", "name": "ProfilerStep#2", "dur": "fast"}"#),
                "t.json:3: event `ProfilerStep#2` has dur `\"fast\"`; accepted: a number of microseconds > 0",
            ),
            (ev(r#"{"ph": "X", "name": "ProfilerStep#2"}"#), "has dur none"),
            (ev(r#"{"ph": "X", "name": "ProfilerStep#2", "dur": 0}"#), "has dur `0`"),
            (
                ev(r#"{"ph": "X", "name": "ProfilerStep#two", "dur": 1}"#),
                "the step `two` is not a whole number",
            ),
            (
                ev(r#"{"ph": "X", "name": "ProfilerStep#2", "dur": 1"#),
                "t.json: not JSON",
            ),
            (
                "{\"distributedInfo\": {\"rank\": -1}}".to_string(),
                "t.json: line 1, column 32: distributedInfo.rank: invalid value: integer `-1`; accepted: a whole number >= 0",
            ),
        ];
        for (text, expected) in cases {
            let e = parse(&text).unwrap_err();
            assert!(e.contains(expected), "{text}: {e}");
        }
    }

    #[test]
    fn converts_the_profilers_digits() {
        assert_eq!(seconds(327358.414), 0.327358414);
        assert_eq!(seconds(2674.0), 0.002674);
        assert_eq!(seconds(1e-7), 1e-13);
    }

    #[test]
    fn reads_the_bare_array_form() {
        let t = parse(r#"[{"ph": "X", "name": "ProfilerStep#0", "dur": 10}]"#).unwrap();
        assert_eq!((t.rank, t.steps), (None, BTreeMap::from([(0, 10.0)])));
    }
}
