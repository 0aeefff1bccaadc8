//! Measured worker times: CSV files with columns `step,worker,time` (one row
//! per worker and training step, time in seconds), as in shared/data. The
//! time column may name its unit instead (`time_ms`, `time_us`, `time_s`;
//! see [`TimeUnit`]); times are converted to seconds as they are read, the
//! columns may come in any order, and other columns are ignored.
//!
//! A [`Trace`] keeps the times as a steps × workers table. Steps where a
//! worker has no row are dropped whole, so that every kept step holds a time
//! for every worker (replay needs complete steps).
//!
//! [`analysis`] is `gcsim trace`: per-worker and trace-wide statistics
//! ([`stats`]) and the two-state straggler model fitted to the trace
//! ([`hmm`]), on a bounded subsample of a large trace (`subsample.rs`).
//!
//! [`import`] is `gcsim trace import`: measured step times from a PyTorch
//! profiler trace or a CSV file of any layout, written as a trace.

pub mod analysis;
mod export;
pub mod heterogeneity;
pub mod hmm;
pub mod import;
pub mod stats;
mod subsample;
mod unit;

#[cfg(test)]
mod recovery;

pub use analysis::{TraceAnalysisError, TraceReport};
pub use unit::TimeUnit;

use std::collections::BTreeMap;
use std::path::Path;

use thiserror::Error;

use crate::fit::{self, Fit};
use crate::param::quoted;
use crate::table::{TraceFileError, read_trace, trace_text};

/// The best fit of every family to `times`, if any fits (the fits of
/// [`fit::fit_all`], spread over rayon's threads).
fn best_fit(times: &[f64]) -> Result<Fit, fit::FitError> {
    fit::fit_all_parallel(times).map(|mut fits| fits.swap_remove(0))
}

/// Why a trace file cannot be used: names the file and, where it applies, the line.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TraceError {
    /// The file cannot be read, is not text, or has a bad line.
    #[error(transparent)]
    File(#[from] TraceFileError),
    /// No header or no rows.
    #[error("{file}: the trace is empty; it needs a header `step,worker,time` and at least one row")]
    Empty {
        /// The file.
        file: String,
    },
    /// No step has a time for every worker.
    #[error("{file}: no step has a time for every one of its {workers} workers")]
    NoCompleteStep {
        /// The file.
        file: String,
        /// Workers seen.
        workers: usize,
    },
}

/// Recorded per-worker times, steps × workers, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    file: String,
    workers: usize,
    /// Row-major: `times[step * workers + worker]`, in seconds.
    times: Vec<f64>,
    /// The unit the file's time column named.
    source_unit: TimeUnit,
    steps: usize,
    /// The `worker` column's values, ascending: worker i is `worker_ids[i]`.
    worker_ids: Vec<u64>,
    /// The `step` column's values of the complete steps, ascending.
    step_ids: Vec<u64>,
    /// Steps dropped for a missing worker, and the rows they held.
    dropped: (usize, usize),
    /// The factor every recorded time was multiplied by (1 as read).
    scale: f64,
}

impl Trace {
    /// Reads a trace file.
    pub fn from_file(path: &Path) -> Result<Self, TraceError> {
        let (file, bytes) = read_trace(path)?;
        Self::from_bytes(&file, &bytes)
    }

    /// Reads a trace file's contents (UTF-8 text); `file` names it in errors.
    pub fn from_bytes(file: &str, bytes: &[u8]) -> Result<Self, TraceError> {
        Self::parse(file, trace_text(file, bytes)?)
    }

    /// Parses a trace's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, TraceError> {
        let line_err = |line: usize, reason: String| {
            TraceError::from(TraceFileError::Line {
                file: file.to_string(),
                line,
                reason,
            })
        };
        let Some(table) = crate::table::Table::checked(text) else {
            return Err(TraceError::Empty { file: file.to_string() });
        };
        let mut table = table.map_err(|(line, reason)| line_err(line, reason))?;
        let (header, columns) = (table.header, table.columns.clone());
        let col = |name: &str| columns.iter().position(|c| *c == name);
        let time_columns: Vec<(usize, TimeUnit)> = columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| TimeUnit::of_time_column(c).map(|u| (i, u)))
            .collect();
        let (Some(ci_step), Some(ci_worker), &[(ci_time, source_unit)]) =
            (col("step"), col("worker"), time_columns.as_slice())
        else {
            let problem = if time_columns.len() > 1 {
                "has more than one time column"
            } else {
                "lacks a column"
            };
            return Err(line_err(
                table.header_line,
                format!(
                    "the header {} {problem}; it needs step, worker and one time column: {}",
                    quoted(header),
                    TimeUnit::accepted_columns()
                ),
            ));
        };
        let time_name = &columns[ci_time];
        let mut by_step: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
        let mut rows = 0;
        while let Some(row) = table.next() {
            let (line, cells) = row.map_err(|(line, reason)| line_err(line, reason))?;
            let int = |c: usize, name: &str| {
                cells[c]
                    .parse::<u64>()
                    .map_err(|_| line_err(line, format!("{name} {} is not a whole number >= 0", quoted(&cells[c]))))
            };
            let (step, worker) = (int(ci_step, "step")?, int(ci_worker, "worker")?);
            let time = source_unit
                .parse_seconds(&cells[ci_time])
                .ok_or_else(|| line_err(line, format!("{time_name} {} is not a number", quoted(&cells[ci_time]))))?;
            if !(time.is_finite() && time > 0.0) {
                return Err(line_err(
                    line,
                    format!(
                        "{time_name} {} is out of range; accepted: a finite number > 0",
                        quoted(&cells[ci_time])
                    ),
                ));
            }
            if by_step.entry(step).or_default().insert(worker, time).is_some() {
                return Err(line_err(line, format!("step {step}, worker {worker} appears twice")));
            }
            rows += 1;
        }
        if rows == 0 {
            return Err(TraceError::Empty { file: file.to_string() });
        }
        let all_workers: std::collections::BTreeSet<u64> = by_step.values().flat_map(|w| w.keys().copied()).collect();
        let workers = all_workers.len();
        let mut times = Vec::new();
        let mut steps = 0;
        let mut step_ids = Vec::new();
        let mut dropped = (0, 0);
        for (&step, row) in &by_step {
            if row.len() == workers {
                times.extend(all_workers.iter().map(|w| row[w]));
                steps += 1;
                step_ids.push(step);
            } else {
                dropped = (dropped.0 + 1, dropped.1 + row.len());
            }
        }
        if steps == 0 {
            return Err(TraceError::NoCompleteStep {
                file: file.to_string(),
                workers,
            });
        }
        Ok(Self {
            file: file.to_string(),
            workers,
            times,
            source_unit,
            steps,
            worker_ids: all_workers.into_iter().collect(),
            step_ids,
            dropped,
            scale: 1.0,
        })
    }

    /// The same trace with every time multiplied by `factor` > 0: another
    /// time unit, or a share of the work that is `factor` times as large.
    pub fn scaled(&self, factor: f64) -> Self {
        Self {
            times: self.times.iter().map(|t| t * factor).collect(),
            scale: self.scale * factor,
            ..self.without_times()
        }
    }

    /// A bootstrap replicate: as many steps as recorded, drawn with
    /// replacement in runs of `block` consecutive steps (the moving-block
    /// bootstrap of Künsch 1989, which keeps the persistence within a run;
    /// `block` 1 draws single steps). Each step keeps all its workers, so
    /// the correlation within a step survives.
    pub(crate) fn resample_steps<R: rand::Rng + ?Sized>(&self, block: usize, rng: &mut R) -> Self {
        let block = block.clamp(1, self.steps);
        let starts = self.steps - block + 1;
        let mut times = Vec::with_capacity(self.times.len());
        let mut step_ids = Vec::with_capacity(self.steps);
        while step_ids.len() < self.steps {
            let start = (rng.next_u64() % starts as u64) as usize;
            for step in start..(start + block).min(start + self.steps - step_ids.len()) {
                times.extend_from_slice(self.step(step));
                step_ids.push(self.step_ids[step]);
            }
        }
        Self {
            times,
            step_ids,
            ..self.without_times()
        }
    }

    /// The trace's description with no times and no steps: the base of a
    /// copy whose times are new, without copying the old ones.
    fn without_times(&self) -> Self {
        Self {
            file: self.file.clone(),
            workers: self.workers,
            times: Vec::new(),
            source_unit: self.source_unit,
            steps: self.steps,
            worker_ids: self.worker_ids.clone(),
            step_ids: self.step_ids.clone(),
            dropped: self.dropped,
            scale: self.scale,
        }
    }

    /// The factor the recorded times were multiplied by ([`Trace::scaled`]).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The file it came from.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The unit the file's time column named (`time_ms` → milliseconds);
    /// every time the trace holds was converted from it and is in seconds.
    #[cfg(test)]
    pub(crate) fn source_unit(&self) -> TimeUnit {
        self.source_unit
    }

    /// Workers per step.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Complete steps.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The `worker` column's value of each worker, ascending (worker i of
    /// [`Trace::step`] is `worker_ids()[i]`).
    pub fn worker_ids(&self) -> &[u64] {
        &self.worker_ids
    }

    /// The `step` column's value of each complete step, ascending.
    pub fn step_ids(&self) -> &[u64] {
        &self.step_ids
    }

    /// Steps dropped because some worker has no time in them, and the rows
    /// those steps held.
    pub fn dropped(&self) -> (usize, usize) {
        self.dropped
    }

    /// What was dropped, in words, if anything was.
    pub fn dropped_note(&self) -> Option<String> {
        let (steps, rows) = self.dropped;
        (steps > 0).then(|| {
            format!(
                "{}: dropped {steps} of {} steps ({rows} rows) in which some of the {} workers has no time; {} complete steps are used",
                self.file,
                steps + self.steps,
                self.workers,
                self.steps
            )
        })
    }

    /// The recorded times of one step, by worker, in seconds.
    pub fn step(&self, step: usize) -> &[f64] {
        &self.times[step * self.workers..(step + 1) * self.workers]
    }

    /// Every recorded time, step by step, in seconds.
    pub fn all(&self) -> &[f64] {
        &self.times
    }

    /// Why `error`, a fit of [`Trace::all`], failed, naming what to do:
    /// where an estimate left its law's range, the row whose time sets it
    /// (the one furthest from the median in ratio, by its step and worker
    /// and value), or, where every time is out of scale alike, the scale.
    pub fn fit_failure(&self, error: &fit::FitError) -> String {
        let fit::FitError::Estimate { .. } = error else {
            return error.to_string();
        };
        let mut sorted = self.times.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let distance = |t: f64| (t / median).ln().abs();
        let (i, &time) = (self.times.iter().enumerate())
            .max_by(|a, b| distance(*a.1).total_cmp(&distance(*b.1)))
            .expect("a trace has times");
        let shown = |x: f64| match (1e-3..1e6).contains(&x) {
            true => format!("{x:.4}"),
            false => format!("{x:.3e}"),
        };
        // An outlier a million times off the median sets the estimate alone.
        if distance(time) > 1e6f64.ln() {
            let (step, worker) = (self.step_ids[i / self.workers], self.worker_ids[i % self.workers]);
            format!(
                "step {step}, worker {worker}: its time, {} s ({} times the median, {} s), makes the fit impossible: {error}; remove that row if it was recorded wrongly",
                crate::param::plain(time),
                shown(time / median),
                shown(median)
            )
        } else {
            format!(
                "the times (median {} s) make the fit impossible: {error}",
                shown(median)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_complete_steps() {
        let t = Trace::parse(
            "t.csv",
            "step,worker,time\n1,0,0.5\n1,1,0.7\n2,0,0.6\n3,1,0.9\n3,0,1.5\n",
        )
        .unwrap();
        assert_eq!((t.workers(), t.steps()), (2, 2));
        assert_eq!(t.dropped(), (1, 1));
        assert_eq!(
            t.dropped_note().unwrap(),
            "t.csv: dropped 1 of 3 steps (1 rows) in which some of the 2 workers has no time; 2 complete steps are used"
        );
        assert_eq!(t.step(0), &[0.5, 0.7]);
        assert_eq!(t.step(1), &[1.5, 0.9]);
        assert_eq!((t.worker_ids(), t.step_ids()), (&[0, 1][..], &[1, 3][..]));
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_header() {
        let t = Trace::parse("t.csv", "\u{feff}step,worker,time\r\n1,0,0.5\r\n").unwrap();
        assert_eq!(t.step(0), &[0.5]);
    }

    #[test]
    fn the_time_columns_name_reads_its_unit() {
        for (header, row, unit) in [
            ("step,worker,time", "1,0,0.0125", TimeUnit::Seconds),
            ("step,worker,time_s", "1,0,0.0125", TimeUnit::Seconds),
            ("step,worker,time_ms", "1,0,12.5", TimeUnit::Milliseconds),
            ("step,worker,time_us", "1,0,12500", TimeUnit::Microseconds),
            // Any order, other columns ignored.
            ("host,time_ms,step,worker", "a,12.5,1,0", TimeUnit::Milliseconds),
        ] {
            let t = Trace::parse("t.csv", &format!("{header}\n{row}\n")).unwrap();
            assert_eq!((t.step(0), t.source_unit()), (&[0.0125][..], unit), "{header}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("", "the trace is empty"),
            ("step,worker,time\n", "the trace is empty"),
            ("step,time\n1,2\n", "t.csv:1: the header"),
            (
                "step,worker,duration_ms\n1,0,2\n",
                "t.csv:1: the header `step,worker,duration_ms` lacks a column; it needs step, worker and one time column: `time` or `time_s` (seconds), `time_ms` (milliseconds), `time_us` (microseconds)",
            ),
            ("step,worker,time,time_ms\n1,0,2,3\n", "has more than one time column"),
            (
                "step,worker,time_ms\n1,0,fast\n",
                "t.csv:2: time_ms `fast` is not a number",
            ),
            (
                "step,worker,time_us\n1,0,1e-320\n",
                "t.csv:2: time_us `1e-320` is out of range",
            ),
            ("step,worker,time\n1,0,0.5\n1,1\n", "t.csv:3: 2 fields"),
            ("step,worker,time\n1,0,fast\n", "t.csv:2: time `fast` is not a number"),
            ("step,worker,time\n1,0,-1\n", "t.csv:2: time `-1` is out of range"),
            ("step,worker,time\n1,x,1\n", "t.csv:2: worker `x`"),
            (
                "step,worker,time\n1,0,1\n1,0,2\n",
                "t.csv:3: step 1, worker 0 appears twice",
            ),
            ("step,worker,time\n1,0,1\n2,1,2\n", "no step has a time for every one"),
        ];
        for (text, expected) in cases {
            let e = Trace::parse("t.csv", text).unwrap_err().to_string();
            assert!(e.contains(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn shared_traces_parse() {
        for (name, workers) in [("trace-llm-8w.csv", 8), ("trace-llm-64w.csv", 64)] {
            let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
                .join("data")
                .join(name);
            let t = Trace::from_file(&path).unwrap();
            assert_eq!(t.workers(), workers, "{name}");
            assert!(t.steps() >= 30, "{name}");
        }
    }
}
