//! Chrome trace, the JSON that ui.perfetto.dev and chrome://tracing open:
//! `{"traceEvents": [...], "displayTimeUnit": "ms"}` with metadata events
//! naming (and ordering) processes and threads, and one complete event
//! (`"ph": "X"`, start and duration in microseconds) per span. Both
//! timelines gcsim writes, a sampled hybrid-parallel iteration and the
//! what-if replay of a measured step, are built from these events.

use std::io::{self, Write};

use serde::Serialize;

/// One event of a Chrome trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// The span's name, or the metadata's kind (`process_name`, ...).
    pub name: String,
    /// The span's category (empty: left out).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub cat: String,
    /// `X` for a complete event, `M` for metadata.
    pub ph: &'static str,
    /// Start, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<f64>,
    /// Duration, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dur: Option<f64>,
    /// The process.
    pub pid: usize,
    /// The thread.
    pub tid: usize,
    /// The span's arguments, or the metadata's value.
    pub args: serde_json::Value,
}

impl Event {
    /// Names process `pid` (with `tid` 0) or thread (`pid`, `tid`): `kind`
    /// is `process_name` or `thread_name`.
    pub fn name(kind: &str, (pid, tid): (usize, usize), name: String) -> Self {
        Self::metadata(kind, (pid, tid), serde_json::json!({ "name": name }))
    }

    /// Orders process `pid` or thread (`pid`, `tid`) in the viewer: `kind`
    /// is `process_sort_index` or `thread_sort_index`.
    pub fn sort_index(kind: &str, (pid, tid): (usize, usize), index: usize) -> Self {
        Self::metadata(kind, (pid, tid), serde_json::json!({ "sort_index": index }))
    }

    fn metadata(kind: &str, (pid, tid): (usize, usize), args: serde_json::Value) -> Self {
        Event {
            name: kind.to_string(),
            cat: String::new(),
            ph: "M",
            ts: None,
            dur: None,
            pid,
            tid,
            args,
        }
    }

    /// A complete event from `start` to `end` (seconds, or the unit that
    /// `to_micros` converts to microseconds) on thread (`pid`, `tid`).
    pub fn span(
        name: String,
        cat: &str,
        (start, end): (f64, f64),
        to_micros: f64,
        (pid, tid): (usize, usize),
        args: serde_json::Value,
    ) -> Self {
        Event {
            name,
            cat: cat.to_string(),
            ph: "X",
            ts: Some(start * to_micros),
            dur: Some((end - start) * to_micros),
            pid,
            tid,
            args,
        }
    }
}

/// Writes `events` as a Chrome trace, one line.
pub fn write(events: &[Event], out: &mut dyn Write) -> io::Result<()> {
    let trace = serde_json::json!({ "traceEvents": events, "displayTimeUnit": "ms" });
    serde_json::to_writer(&mut *out, &trace)?;
    writeln!(out)
}
