//! A streaming reader of the PyTorch profiler's Chrome-trace JSON (Kineto's
//! export): the file's own fields (`distributedInfo`, `baseTimeNanoseconds`)
//! and its `traceEvents`, handed one event at a time to a [`Sink`] that
//! keeps what it needs. A trace of hundreds of megabytes holds millions of
//! events, so nothing else is kept in memory.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::ImportError;

/// What a file says of itself, beside its events.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// `distributedInfo.rank`, when the file has it.
    pub rank: Option<u64>,
    /// `distributedInfo.world_size`, when the file has it.
    pub world_size: Option<u64>,
    /// `baseTimeNanoseconds`: the events' `ts` count microseconds from this
    /// instant (Unix time); absent in older files, whose `ts` are Unix time.
    pub base_ns: Option<u64>,
}

/// Where the events of a trace go as they are read.
pub trait Sink {
    /// One event, as far as the sink needs it; other fields are skipped.
    type Event: DeserializeOwned;

    /// Keeps what the sink needs of `event`, which ends on line `line`; an
    /// event that cannot be used stops the read with the reason.
    fn take(&mut self, event: Self::Event, line: u64) -> Result<(), String>;
}

/// Opens a profiler trace for reading: refuses a gzip-compressed file and
/// skips a UTF-8 byte-order mark (editors on Windows write one first; it
/// is not JSON). Returns the file's name for messages and its reader.
pub fn open(path: &Path) -> Result<(String, BufReader<File>), ImportError> {
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
    if start.starts_with(&[0xef, 0xbb, 0xbf]) {
        reader.consume(3);
    }
    Ok((file, reader))
}

/// Reads a trace from `reader` into `sink`; `file` names it in errors.
pub fn parse<S: Sink>(file: &str, reader: impl Read, sink: &mut S) -> Result<Header, ImportError> {
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
        .deserialize_any(TraceVisitor(&context, sink))
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
        "world_size" => "a whole number >= 1",
        "baseTimeNanoseconds" => "a whole number of nanoseconds",
        "traceEvents" => "an array of trace events",
        "ph" | "name" | "cat" => "a string",
        "args" => "an object",
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
/// first problem with an event, with the line the event ends on.
struct Context {
    newlines: Rc<Cell<u64>>,
    problem: RefCell<Option<(u64, String)>>,
}

impl Context {
    /// The line the current event ends on (1-based).
    fn line(&self) -> u64 {
        self.newlines.get() + 1
    }

    /// Records `reason` at the current line and stops the parse.
    fn stop<E: de::Error>(&self, reason: String) -> E {
        *self.problem.borrow_mut() = Some((self.line(), reason));
        E::custom("an event cannot be used")
    }
}

/// The top-level keys this reader looks at.
#[derive(Deserialize)]
#[serde(field_identifier)]
enum Key {
    #[serde(rename = "traceEvents")]
    TraceEvents,
    #[serde(rename = "distributedInfo")]
    DistributedInfo,
    #[serde(rename = "baseTimeNanoseconds")]
    BaseTime,
    #[serde(other)]
    Other,
}

/// `distributedInfo`: the rank and the world size.
#[derive(Deserialize)]
struct DistributedInfo {
    rank: Option<u64>,
    world_size: Option<u64>,
}

/// The trace: an object with `traceEvents` (what the profiler writes), or a
/// bare array of events (the Chrome trace format's other form).
struct TraceVisitor<'a, S>(&'a Context, &'a mut S);

impl<'de, S: Sink> Visitor<'de> for TraceVisitor<'_, S> {
    type Value = Header;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chrome trace: an object with traceEvents, or an array of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Header, A::Error> {
        let mut header = Header::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::TraceEvents => map.next_value_seed(Events(&mut *self.1, self.0))?,
                Key::DistributedInfo => {
                    let info = map.next_value::<DistributedInfo>()?;
                    (header.rank, header.world_size) = (info.rank, info.world_size);
                }
                Key::BaseTime => header.base_ns = Some(map.next_value::<u64>()?),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(header)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Header, A::Error> {
        Events(self.1, self.0).visit_seq(seq)?;
        Ok(Header::default())
    }
}

/// `traceEvents`, read one event at a time into the sink; an event the
/// sink cannot use stops the parse with its line (see [`Context::stop`]).
struct Events<'a, S>(&'a mut S, &'a Context);

impl<'de, S: Sink> DeserializeSeed<'de> for Events<'_, S> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, S: Sink> Visitor<'de> for Events<'_, S> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<S::Event>()? {
            let line = self.1.line();
            self.0.take(event, line).map_err(|reason| self.1.stop(reason))?;
        }
        Ok(())
    }
}

/// A string seen without keeping it: `F` makes what is kept.
pub struct Text<F>(pub F);

impl<'de, T, F: FnOnce(&str) -> T> Visitor<'de> for Text<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok((self.0)(v))
    }
}

/// Whether an event's phase (`ph`) is `X`, a complete event with `dur`.
pub fn is_complete<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_str(Text(|s: &str| s == "X"))
}

/// What a time field of an event may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Micros {
    /// Any finite number: a timestamp, `ts`.
    Instant,
    /// A number >= 0: an op's `dur`, which may round to 0.
    Duration,
    /// A number > 0: a step's `dur`.
    Positive,
}

/// A number of microseconds from an event's `ts` or `dur`, checked as
/// `kind` says; `what` names the field in the reason.
pub fn micros(value: Option<&serde_json::Value>, what: &str, kind: Micros) -> Result<f64, String> {
    let found = match value {
        Some(serde_json::Value::Number(n)) => n.as_f64().filter(|d| {
            d.is_finite()
                && match kind {
                    Micros::Instant => true,
                    Micros::Duration => *d >= 0.0,
                    Micros::Positive => *d > 0.0,
                }
        }),
        _ => None,
    };
    found.ok_or_else(|| {
        let shown = value.map_or("none".to_string(), |v| format!("`{v}`"));
        let accepted = match kind {
            Micros::Instant => "a number of microseconds",
            Micros::Duration => "a number of microseconds >= 0",
            Micros::Positive => "a number of microseconds > 0",
        };
        format!("has {what} {shown}; accepted: {accepted}")
    })
}
