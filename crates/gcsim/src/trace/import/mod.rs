//! `gcsim trace import`: measured step times converted into a trace
//! (`step,worker,time`, seconds), from
//!
//! - the PyTorch profiler's Chrome-trace JSON ([`pytorch`]): the CPU-side
//!   `ProfilerStep#N` events that `torch.profiler.profile` records at each
//!   `prof.step()`, one file per rank;
//! - a CSV file of any layout ([`columns`]): a mapping names the columns
//!   that hold the step, the worker and the time, and the time's unit.
//!
//! Both collect rows into an [`Imported`], which refuses a (step, worker)
//! recorded twice and writes the trace's CSV. [`ops`] makes a different
//! kind of trace from the profiler's files, one row per recorded op, for
//! `gcsim whatif`; [`chrome`] is the streaming reader both profiler paths
//! share.

pub mod chrome;
pub mod columns;
pub mod ops;
pub mod pytorch;

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;
use thiserror::Error;

/// Why measured data cannot be imported: names the file and, where it
/// applies, the line and column.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ImportError {
    /// The file cannot be read.
    #[error("{file}: cannot read: {reason}")]
    Read {
        /// The file.
        file: String,
        /// The system's reason.
        reason: String,
    },
    /// A gzip-compressed profiler trace (`use_gzip=True`).
    #[error(
        "{file}: the file is gzip-compressed (tensorboard_trace_handler(..., use_gzip=True)); decompress it first, e.g. `gunzip -k {file}`"
    )]
    Compressed {
        /// The file.
        file: String,
    },
    /// Not the JSON of a Chrome trace, or a step event that cannot be used.
    #[error("{file}: {reason}")]
    Json {
        /// The file.
        file: String,
        /// What is wrong, with serde_json's line and column.
        reason: String,
    },
    /// A profiler trace without a single step event.
    #[error(
        "{file}: no ProfilerStep#N events (\"ph\": \"X\", \"name\": \"ProfilerStep#N\"); they are recorded when the training loop calls prof.step() on a torch.profiler.profile with a schedule"
    )]
    NoSteps {
        /// The file.
        file: String,
    },
    /// Ranks that cannot be told apart.
    #[error("{0}")]
    Ranks(String),
    /// Op ranges that do not make a per-op trace under the layout.
    #[error("{0}")]
    Ops(String),
    /// A (step, worker) recorded twice.
    #[error("{file}: step {step}, worker {worker} appears twice ({first} and {second})")]
    Duplicate {
        /// The file.
        file: String,
        /// The step.
        step: u64,
        /// The worker.
        worker: u64,
        /// Where it first appeared.
        first: String,
        /// Where it appeared again.
        second: String,
    },
    /// A mapped column that the header lacks, or a bad mapping.
    #[error("{file}: {reason}")]
    Header {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A bad row of a CSV file.
    #[error("{file}:{line}: {reason}")]
    Line {
        /// The file.
        file: String,
        /// 1-based line.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// No rows at all.
    #[error("{file}: no rows; it needs a header and at least one row")]
    Empty {
        /// The file.
        file: String,
    },
}

/// One row of the written trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Row {
    /// The training step.
    pub step: u64,
    /// The worker (rank).
    pub worker: u64,
    /// The step's time on that worker, in seconds.
    pub time: f64,
}

/// Step times gathered from measured data, one per (step, worker), in
/// seconds, with notes on how the data was read.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// Time and where it was found, by (step, worker).
    times: BTreeMap<(u64, u64), (f64, String)>,
    notes: Vec<String>,
}

impl Imported {
    /// Adds worker `worker`'s time of `step` (seconds), found at `place` (a
    /// file, and a line where there is one); a second time for the same
    /// step and worker is an [`ImportError::Duplicate`] naming both places.
    pub fn add(&mut self, file: &str, place: String, step: u64, worker: u64, time: f64) -> Result<(), ImportError> {
        match self.times.entry((step, worker)) {
            std::collections::btree_map::Entry::Occupied(first) => Err(ImportError::Duplicate {
                file: file.to_string(),
                step,
                worker,
                first: first.get().1.clone(),
                second: place,
            }),
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert((time, place));
                Ok(())
            }
        }
    }

    /// Records a note on how the data was read (shown on stderr).
    pub fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The notes, in the order they were made.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The rows, by step, then by worker.
    pub fn rows(&self) -> Vec<Row> {
        self.times
            .iter()
            .map(|(&(step, worker), &(time, _))| Row { step, worker, time })
            .collect()
    }

    /// Rows added.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Distinct steps and distinct workers.
    pub fn shape(&self) -> (usize, usize) {
        let steps = self
            .times
            .keys()
            .map(|&(s, _)| s)
            .collect::<std::collections::BTreeSet<_>>();
        let workers = self
            .times
            .keys()
            .map(|&(_, w)| w)
            .collect::<std::collections::BTreeSet<_>>();
        (steps.len(), workers.len())
    }

    /// Writes the trace: the header `step,worker,time`, then one row per
    /// step and worker, by step, each time in seconds with the digits that
    /// read back as the same double.
    pub fn write_csv(&self, out: &mut dyn Write) -> io::Result<()> {
        crate::export::write_csv(&self.rows(), out)
    }
}
