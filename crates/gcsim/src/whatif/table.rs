//! A per-op trace: one row per recorded op, in the schema of the what-if
//! artifact of Lin et al. (OSDI 2025), read from Parquet or CSV.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use super::WhatIfError;
use super::columns::{INT_COLUMNS, RawColumns, TIME_COLUMNS, parse_optype, required_columns};
use super::optype::OpType;
use crate::table::read_trace;

/// A validated per-op trace. Times are in seconds, as recorded; each step's
/// times are taken relative to its earliest start by the analysis.
#[derive(Debug, Clone)]
pub struct OpTrace {
    /// The file it was read from, for messages.
    pub file: String,
    /// Data-parallel rank of the op's worker.
    pub dp_rank: Vec<u32>,
    /// Pipeline stage of the op's worker.
    pub stage: Vec<u32>,
    /// Global rank of the op's worker.
    pub rank: Vec<u32>,
    /// Training step.
    pub step: Vec<i64>,
    /// Op type.
    pub optype: Vec<OpType>,
    /// Start time (seconds).
    pub start: Vec<f64>,
    /// Measured duration (seconds).
    pub duration: Vec<f64>,
    /// Index of the op among the same type's ops of its worker and step.
    pub seq_id: Vec<u32>,
    /// Model chunk within the stage (-1 where it does not apply).
    pub mc: Vec<i32>,
    /// Global model chunk (-1 where it does not apply).
    pub gmc: Vec<i32>,
    /// Whether rows are numbered as CSV lines (header on line 1) rather than
    /// Parquet rows, for messages.
    csv_lines: bool,
}

impl OpTrace {
    /// Reads a trace from a Parquet file (recognised by its magic bytes) or
    /// a CSV file with a header row.
    pub fn read(path: &Path) -> Result<Self, WhatIfError> {
        let file = path.display().to_string();
        let cannot = |e: std::io::Error| WhatIfError::new(format!("{file}: cannot read the trace: {e}"));
        let mut opened = std::fs::File::open(path).map_err(cannot)?;
        let mut magic = Vec::with_capacity(4);
        (&mut opened).take(4).read_to_end(&mut magic).map_err(cannot)?;
        if magic == b"PAR1" {
            let mut bytes = magic;
            opened.read_to_end(&mut bytes).map_err(cannot)?;
            let raw = super::parquet::read(&file, bytes)?;
            Self::from_raw(file, raw, false)
        } else {
            // Text through the shared reader, which refuses a file without
            // line breaks (`/dev/zero`) rather than reading it until memory
            // runs out.
            let (_, bytes) = read_trace(path).map_err(|e| WhatIfError::new(e.to_string()))?;
            let raw = read_csv(&file, &bytes)?;
            Self::from_raw(file, raw, true)
        }
    }

    /// Reads a CSV trace from text (a header row, then one row per op).
    pub fn from_csv(file: &str, text: &str) -> Result<Self, WhatIfError> {
        let raw = read_csv(file, text.as_bytes())?;
        Self::from_raw(file.to_string(), raw, true)
    }

    /// The number of ops.
    pub fn len(&self) -> usize {
        self.step.len()
    }

    /// Whether the trace holds no op.
    pub fn is_empty(&self) -> bool {
        self.step.is_empty()
    }

    /// End time of row `i`.
    pub fn end(&self, i: usize) -> f64 {
        self.start[i] + self.duration[i]
    }

    /// Where row `i` is, for messages: "FILE: row R" (Parquet, first row 1)
    /// or "FILE: line L" (CSV, header on line 1).
    pub fn locate(&self, i: usize) -> String {
        locate(&self.file, self.csv_lines, i)
    }

    /// The op's name in the dependency model: `<optype>_<seq_id>_<stage>`.
    pub fn op_name(&self, i: usize) -> String {
        format!("{}_{}_{}", self.optype[i], self.seq_id[i], self.stage[i])
    }

    fn from_raw(file: String, raw: RawColumns, csv_lines: bool) -> Result<Self, WhatIfError> {
        let n = raw.optype.len();
        if n == 0 {
            return Err(WhatIfError::new(format!("{file}: the trace has no rows")));
        }
        let at = |i: usize| locate(&file, csv_lines, i);
        let unsigned = |c: usize, max: i64| -> Result<Vec<u32>, WhatIfError> {
            raw.ints[c]
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    if (0..=max).contains(&v) {
                        Ok(v as u32)
                    } else {
                        Err(WhatIfError::new(format!(
                            "{}: column {} is {v}; accepted: a whole number from 0 to {max}",
                            at(i),
                            INT_COLUMNS[c]
                        )))
                    }
                })
                .collect()
        };
        let dp_rank = unsigned(0, 65_535)?;
        let stage = unsigned(1, 1_023)?;
        let rank = unsigned(2, 1 << 24)?;
        let seq_id = unsigned(4, 1 << 24)?;
        let chunk = |c: usize| -> Vec<i32> { raw.ints[c].iter().map(|&v| v.clamp(-1, 1 << 20) as i32).collect() };
        let (mc, gmc) = (chunk(5), chunk(6));
        for (c, values) in raw.times.iter().enumerate() {
            if let Some(i) = values.iter().position(|v| !v.is_finite() || (c == 1 && *v < 0.0)) {
                let what = if c == 1 {
                    "a finite duration >= 0 (seconds)"
                } else {
                    "a finite time (seconds)"
                };
                return Err(WhatIfError::new(format!(
                    "{}: column {} is {}; accepted: {what}",
                    at(i),
                    TIME_COLUMNS[c],
                    values[i]
                )));
            }
        }
        if let Some(i) = (0..n).find(|&i| raw.optype[i].is_compute() && mc[i] < 0) {
            return Err(WhatIfError::new(format!(
                "{}: column mc is {} for a {} op; accepted: its model chunk, 0 or more",
                at(i),
                mc[i],
                raw.optype[i]
            )));
        }
        let mut times = raw.times.into_iter();
        Ok(OpTrace {
            dp_rank,
            stage,
            rank,
            step: raw.ints[3].clone(),
            optype: raw.optype,
            start: times.next().unwrap_or_default(),
            duration: times.next().unwrap_or_default(),
            seq_id,
            mc,
            gmc,
            csv_lines,
            file,
        })
    }
}

fn locate(file: &str, csv_lines: bool, i: usize) -> String {
    if csv_lines {
        format!("{file}: line {}", i + 2)
    } else {
        format!("{file}: row {}", i + 1)
    }
}

/// Reads the columns of a CSV trace; other columns are ignored.
fn read_csv(file: &str, bytes: &[u8]) -> Result<RawColumns, WhatIfError> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|e| WhatIfError::new(format!("{file}: cannot read the header row: {e}")))?
        .clone();
    let find = |name: &str| header.iter().position(|h| h == name);
    let missing: Vec<&str> = INT_COLUMNS
        .iter()
        .chain(&TIME_COLUMNS)
        .chain(&["optype"])
        .copied()
        .filter(|c| find(c).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(WhatIfError::new(format!(
            "{file}: the header has no column {}; a per-op trace has the columns {}",
            missing.join(", "),
            required_columns()
        )));
    }
    let int_at: Vec<usize> = INT_COLUMNS.iter().filter_map(|c| find(c)).collect();
    let time_at: Vec<usize> = TIME_COLUMNS.iter().filter_map(|c| find(c)).collect();
    let optype_at = find("optype").unwrap_or_default();
    let mut raw = RawColumns {
        ints: vec![Vec::new(); 8],
        times: vec![Vec::new(); 2],
        optype: Vec::new(),
    };
    let mut names: HashMap<String, OpType> = HashMap::new();
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| WhatIfError::new(format!("{file}: line {line}: {e}")))?;
        let field = |c: usize| record.get(c).unwrap_or("");
        for (k, &c) in int_at.iter().enumerate() {
            let text = field(c);
            let value = text.parse::<i64>().ok().or_else(|| {
                text.parse::<f64>()
                    .ok()
                    .filter(|v| v.fract() == 0.0 && v.abs() < 1e15)
                    .map(|v| v as i64)
            });
            let value = value.ok_or_else(|| {
                WhatIfError::new(format!(
                    "{file}: line {line}: column {} is {text:?}; accepted: a whole number",
                    INT_COLUMNS[k]
                ))
            })?;
            raw.ints[k].push(value);
        }
        for (k, &c) in time_at.iter().enumerate() {
            let text = field(c);
            let value = text.parse::<f64>().map_err(|_| {
                WhatIfError::new(format!(
                    "{file}: line {line}: column {} is {text:?}; accepted: a time in seconds",
                    TIME_COLUMNS[k]
                ))
            })?;
            raw.times[k].push(value);
        }
        let name = field(optype_at);
        let optype = match names.get(name) {
            Some(&t) => t,
            None => {
                let t = parse_optype(name).map_err(|e| WhatIfError::new(format!("{file}: line {line}: {e}")))?;
                names.insert(name.to_string(), t);
                t
            }
        };
        raw.optype.push(optype);
    }
    Ok(raw)
}
