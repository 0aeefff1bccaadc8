//! Traces with a `load` column: CSV with the columns `step,worker,time,load`
//! (any order, more columns ignored), one row per worker and step, `load` the
//! worker's work in that step as a multiple of the uncoded share (e.g. the
//! batch size over the base batch size). The time column may name its
//! unit as a plain trace's does (`time_ms`, `time_us`; `time` and `time_s`
//! are seconds); times are held in seconds.
//!
//! The times are kept by load and, within a load, by step: the steps are the
//! clusters of the load fit (times within a step may be correlated). A step
//! number may recur at another load (runs numbered from 1 at each batch
//! size): a step is a (load, step) pair. Unlike `gcsim`'s plain trace
//! reader, incomplete steps are kept: the fit pools times, it does not
//! replay steps.

use std::collections::{BTreeMap, btree_map::Entry};
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::LoadFitError;
use crate::param::quoted;
use crate::table::{Table, TraceFileError, read_trace, trace_text};
use crate::units::TimeUnit;

/// Times measured at two or more loads, grouped by load and step.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadTrace {
    file: String,
    workers: usize,
    loads: Vec<LoadTimes>,
}

/// The times recorded at one load.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadTimes {
    /// The load ℓ > 0.
    pub load: f64,
    /// The times, step by step (steps ascending, workers ascending within one).
    pub times: Vec<f64>,
    /// Where each step's times end in `times`: step s holds
    /// `times[step_ends[s-1]..step_ends[s]]` (from 0 for the first).
    pub step_ends: Vec<usize>,
}

impl LoadTimes {
    /// Steps at this load.
    pub fn steps(&self) -> usize {
        self.step_ends.len()
    }
}

/// Whether the first non-empty line of `path` names a column `load`; false
/// when the file cannot be read as text, which the plain reader then reports.
pub fn names_load_column(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut reader = BufReader::new(crate::table::LineLimit::new(file));
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) if line.trim().is_empty() => continue,
            Ok(_) => break,
        }
    }
    let mut header = crate::table::Rows::new(&line, false);
    header
        .next()
        .is_some_and(|r| r.is_ok_and(|(_, columns)| columns.iter().any(|c| c == "load")))
}

/// The columns a load trace needs, in the order errors list them.
const COLUMNS: [&str; 4] = ["step", "worker", "time", "load"];

impl LoadTrace {
    /// Reads a load trace file.
    pub fn from_file(path: &Path) -> Result<Self, LoadFitError> {
        let (file, bytes) = read_trace(path)?;
        Self::parse(&file, trace_text(&file, &bytes)?)
    }

    /// Parses a load trace's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, LoadFitError> {
        let line_err = |line: usize, reason: String| {
            LoadFitError::from(TraceFileError::Line {
                file: file.to_string(),
                line,
                reason,
            })
        };
        let Some(table) = Table::checked(text) else {
            return Err(LoadFitError::Empty { file: file.to_string() });
        };
        let mut table = table.map_err(|(line, reason)| line_err(line, reason))?;
        let (header, columns) = (table.header, table.columns.clone());
        // The time column may name its unit (`time_ms`), as in a plain trace.
        let unit = columns.iter().find_map(|c| TimeUnit::of_time_column(c));
        let index: Vec<usize> = COLUMNS
            .iter()
            .filter_map(|&name| match name {
                "time" => columns.iter().position(|c| TimeUnit::of_time_column(c).is_some()),
                name => columns.iter().position(|c| *c == name),
            })
            .collect();
        let (&[ci_step, ci_worker, ci_time, ci_load], Some(unit)) = (index.as_slice(), unit) else {
            return Err(line_err(
                table.header_line,
                format!(
                    "the header {} lacks a column; a trace with loads needs step, worker, time and load, the time as {}",
                    quoted(header),
                    TimeUnit::accepted_columns()
                ),
            ));
        };
        // Load (by its bits: positive floats order as their bits) → step → worker → time.
        let mut by_load: BTreeMap<u64, BTreeMap<u64, BTreeMap<u64, f64>>> = BTreeMap::new();
        let mut workers = std::collections::BTreeSet::new();
        while let Some(row) = table.next() {
            let (line, cells) = row.map_err(|(line, reason)| line_err(line, reason))?;
            let whole = |c: usize, name: &str| {
                cells[c]
                    .parse::<u64>()
                    .map_err(|_| line_err(line, format!("{name} {} is not a whole number >= 0", quoted(&cells[c]))))
            };
            let positive = |c: usize, name: &str| {
                let value: f64 = cells[c]
                    .parse()
                    .map_err(|_| line_err(line, format!("{name} {} is not a number", quoted(&cells[c]))))?;
                if value.is_finite() && value > 0.0 {
                    Ok(value)
                } else {
                    Err(line_err(
                        line,
                        format!("{name} `{}` is out of range; accepted: a finite number > 0", &cells[c]),
                    ))
                }
            };
            let (step, worker) = (whole(ci_step, "step")?, whole(ci_worker, "worker")?);
            let (time, load) = (positive(ci_time, "time")?, positive(ci_load, "load")?);
            let time = unit.parse_seconds(&cells[ci_time]).unwrap_or(time);
            let steps = by_load.entry(load.to_bits()).or_default();
            match steps.entry(step).or_default().entry(worker) {
                Entry::Occupied(_) => {
                    return Err(line_err(
                        line,
                        format!("step {step}, worker {worker} appears twice at load {load}"),
                    ));
                }
                Entry::Vacant(v) => v.insert(time),
            };
            workers.insert(worker);
        }
        let loads: Vec<LoadTimes> = by_load
            .into_iter()
            .map(|(bits, steps)| {
                let mut times = Vec::new();
                let mut step_ends = Vec::with_capacity(steps.len());
                for row in steps.values() {
                    times.extend(row.values());
                    step_ends.push(times.len());
                }
                LoadTimes {
                    load: f64::from_bits(bits),
                    times,
                    step_ends,
                }
            })
            .collect();
        match loads.as_slice() {
            [] => Err(LoadFitError::Empty { file: file.to_string() }),
            [one] => Err(LoadFitError::OneLoad {
                file: file.to_string(),
                load: one.load,
            }),
            _ => Ok(Self {
                file: file.to_string(),
                workers: workers.len(),
                loads,
            }),
        }
    }

    /// The file it came from.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Distinct workers in the trace.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The times of each load, loads ascending.
    pub fn loads(&self) -> &[LoadTimes] {
        &self.loads
    }

    /// Steps over all loads.
    pub fn steps(&self) -> usize {
        self.loads.iter().map(LoadTimes::steps).sum()
    }

    /// Times over all loads.
    pub fn times(&self) -> usize {
        self.loads.iter().map(|l| l.times.len()).sum()
    }
}
