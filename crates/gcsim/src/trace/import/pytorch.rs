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

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{ImportError, Imported};
use crate::trace::TimeUnit;

/// The prefix of the step events' names.
const STEP_PREFIX: &str = "ProfilerStep#";

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
pub fn read(path: &Path) -> Result<ProfilerTrace, ImportError> {
    let file = path.display().to_string();
    let read_err = |reason: String| ImportError::Read {
        file: file.clone(),
        reason,
    };
    let mut reader = BufReader::new(File::open(path).map_err(|e| read_err(e.to_string()))?);
    let start = reader.fill_buf().map_err(|e| read_err(e.to_string()))?;
    if start.starts_with(&[0x1f, 0x8b]) {
        return Err(ImportError::Compressed { file });
    }
    // A UTF-8 byte-order mark, which editors on Windows write first, is not
    // JSON: skip it.
    if start.starts_with(&[0xef, 0xbb, 0xbf]) {
        reader.consume(3);
    }
    let trace = parse(&file, reader)?;
    if trace.steps.is_empty() {
        return Err(ImportError::NoSteps { file });
    }
    Ok(trace)
}

/// Parses a trace from `reader`; `file` names it in errors.
fn parse(file: &str, reader: impl Read) -> Result<ProfilerTrace, ImportError> {
    let newlines = Rc::new(Cell::new(0));
    let reader = Lines {
        inner: reader,
        newlines: Rc::clone(&newlines),
    };
    let context = Context {
        newlines,
        problem: RefCell::new(None),
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    // The path to the value being read, for errors: `distributedInfo.rank`.
    let mut track = serde_path_to_error::Track::new();
    serde_path_to_error::Deserializer::new(&mut de, &mut track)
        .deserialize_any(TraceVisitor(&context))
        .and_then(|t| de.end().map(|()| t))
        .map_err(|e| match context.problem.take() {
            Some((line, reason)) => ImportError::Line {
                file: file.to_string(),
                line,
                reason,
            },
            None => json_error(file, e, &track.path().to_string()),
        })
}

/// serde_json's error, which carries the line and column, for `file`; a
/// value of the wrong kind is named by its JSON path (`path`) and what is
/// accepted there, not by the reader's Rust types.
fn json_error(file: &str, e: serde_json::Error, path: &str) -> ImportError {
    use serde_json::error::Category;
    match e.classify() {
        Category::Io => ImportError::Read {
            file: file.to_string(),
            reason: e.to_string(),
        },
        Category::Syntax | Category::Eof => ImportError::Json {
            file: file.to_string(),
            reason: format!("not JSON (a PyTorch profiler trace is Chrome-trace JSON): {e}"),
        },
        Category::Data => {
            // serde's message without its position, then its expectation.
            let message = e.to_string();
            let message = message.rsplit_once(" at line ").map_or(message.as_str(), |m| m.0);
            let (found, expected) = message.split_once(", expected ").unwrap_or((message, ""));
            let accepted = accepted_at(path).unwrap_or(expected);
            let path = if path == "." { "the top level" } else { path };
            ImportError::Json {
                file: file.to_string(),
                reason: format!(
                    "line {}, column {}: {path}: {found}; accepted: {accepted}",
                    e.line(),
                    e.column()
                ),
            }
        }
    }
}

/// What the reader accepts at the JSON path `path`, where its message
/// would otherwise name a Rust type.
fn accepted_at(path: &str) -> Option<&'static str> {
    let field = path.rsplit_once('.').map_or(path, |p| p.1);
    Some(match field {
        "distributedInfo" => "an object with the rank, e.g. {\"rank\": 0, \"world_size\": 8}",
        "rank" => "a whole number >= 0",
        "traceEvents" => "an array of trace events",
        "ph" | "name" | "cat" => "a string",
        "." => "a Chrome trace: an object with traceEvents, or an array of events",
        _ => return None,
    })
}

/// A reader that counts the newlines it has passed. serde_json reads its
/// input one byte at a time, so when it hands over an event the count
/// places the event's last line.
struct Lines<R> {
    inner: R,
    newlines: Rc<Cell<u64>>,
}

impl<R: Read> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let seen = buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        self.newlines.set(self.newlines.get() + seen);
        Ok(n)
    }
}

/// What the event reader shares with [`parse`]: the line count, and the
/// first problem with a step event, with the line the event ends on.
struct Context {
    newlines: Rc<Cell<u64>>,
    problem: RefCell<Option<(u64, String)>>,
}

impl Context {
    /// Records `reason` at the current line and stops the parse.
    fn stop<E: de::Error>(&self, reason: String) -> E {
        *self.problem.borrow_mut() = Some((self.newlines.get() + 1, reason));
        E::custom("a step event cannot be used")
    }
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

/// The top-level keys this reader looks at.
#[derive(Deserialize)]
#[serde(field_identifier)]
enum Key {
    #[serde(rename = "traceEvents")]
    TraceEvents,
    #[serde(rename = "distributedInfo")]
    DistributedInfo,
    #[serde(other)]
    Other,
}

/// `distributedInfo`: only the rank is read.
#[derive(Deserialize)]
struct DistributedInfo {
    rank: Option<u64>,
}

/// The trace: an object with `traceEvents` (what the profiler writes), or a
/// bare array of events (the Chrome trace format's other form).
struct TraceVisitor<'a>(&'a Context);

impl<'de> Visitor<'de> for TraceVisitor<'_> {
    type Value = ProfilerTrace;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace: an object with traceEvents, or an array of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProfilerTrace, A::Error> {
        let mut trace = ProfilerTrace::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::TraceEvents => map.next_value_seed(Events(&mut trace.steps, self.0))?,
                Key::DistributedInfo => trace.rank = map.next_value::<DistributedInfo>()?.rank,
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(trace)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ProfilerTrace, A::Error> {
        let mut trace = ProfilerTrace::default();
        Events(&mut trace.steps, self.0).visit_seq(seq)?;
        Ok(trace)
    }
}

/// One event, as far as a step needs it; every other field is skipped
/// unread, and only a step's name is kept.
#[derive(Deserialize)]
struct Event {
    /// Whether the phase is `X` (a complete event, with `dur`).
    #[serde(default, rename = "ph", deserialize_with = "is_complete")]
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

/// A string seen without keeping it: `F` makes what is kept.
struct Text<F>(F);

impl<'de, T, F: FnOnce(&str) -> T> Visitor<'de> for Text<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok((self.0)(v))
    }
}

fn is_complete<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_str(Text(|s: &str| s == "X"))
}

fn step_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    d.deserialize_str(Text(|s: &str| s.strip_prefix(STEP_PREFIX).map(str::to_string)))
}

fn on_device<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_str(Text(|s: &str| s.starts_with("gpu_")))
}

/// `traceEvents`, read one event at a time into step durations; a step
/// event that cannot be used stops the parse with its line (see
/// [`Context::stop`]).
struct Events<'a>(&'a mut BTreeMap<u64, f64>, &'a Context);

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<Event>()? {
            let (true, false, Some(number)) = (event.complete, event.device, event.step) else {
                continue;
            };
            let name = format!("{STEP_PREFIX}{number}");
            let step: u64 = number.parse().map_err(|_| {
                self.1.stop(format!(
                    "event `{name}`: the step `{number}` is not a whole number >= 0"
                ))
            })?;
            let dur = match &event.dur {
                Some(serde_json::Value::Number(n)) => n.as_f64().filter(|d| d.is_finite() && *d > 0.0),
                _ => None,
            };
            let Some(dur) = dur else {
                let shown = event.dur.map_or("none".to_string(), |v| format!("`{v}`"));
                return Err(self.1.stop(format!(
                    "event `{name}` has dur {shown}; accepted: a number of microseconds > 0"
                )));
            };
            if self.0.insert(step, dur).is_some() {
                return Err(self.1.stop(format!("event `{name}` appears twice on the CPU side")));
            }
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
