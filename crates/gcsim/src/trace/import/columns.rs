//! Step times from a CSV file of any layout: a [`ColumnMap`] names the
//! columns holding the step, the worker and the time; the time's unit is
//! given, or read from the time column's name (`duration_ms`), or seconds.
//! Other columns are ignored; a leading UTF-8 byte-order mark is skipped.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use super::{ImportError, Imported};
use crate::param::quoted;
use crate::trace::TimeUnit;

/// Which column of a CSV file holds each of the step, the worker and the
/// time: `step=iteration,worker=rank,time=duration_ms`; a key left out
/// names a column of its own name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMap {
    /// The step's column.
    pub step: String,
    /// The worker's column.
    pub worker: String,
    /// The time's column.
    pub time: String,
}

/// The keys of a [`ColumnMap`].
const KEYS: [&str; 3] = ["step", "worker", "time"];

impl Default for ColumnMap {
    fn default() -> Self {
        Self {
            step: "step".into(),
            worker: "worker".into(),
            time: "time".into(),
        }
    }
}

impl ColumnMap {
    /// (key, column) for each key.
    fn pairs(&self) -> [(&'static str, &str); 3] {
        [("step", &self.step), ("worker", &self.worker), ("time", &self.time)]
    }
}

impl fmt::Display for ColumnMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [(k0, c0), (k1, c1), (k2, c2)] = self.pairs();
        write!(f, "{k0}={c0},{k1}={c1},{k2}={c2}")
    }
}

/// A column mapping that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadColumnMap(String);

impl FromStr for ColumnMap {
    type Err = BadColumnMap;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut map = ColumnMap::default();
        let mut seen = Vec::new();
        for part in s.split(',') {
            let Some((key, column)) = part.split_once('=') else {
                return Err(BadColumnMap(format!(
                    "`{part}` is not KEY=COLUMN; accepted keys: {}",
                    KEYS.join(", ")
                )));
            };
            let (key, column) = (key.trim(), column.trim());
            let slot = match key {
                "step" => &mut map.step,
                "worker" => &mut map.worker,
                "time" => &mut map.time,
                _ => {
                    return Err(BadColumnMap(format!(
                        "unknown key `{key}`; accepted: {}",
                        KEYS.join(", ")
                    )));
                }
            };
            if seen.contains(&key) {
                return Err(BadColumnMap(format!("`{key}` is given twice")));
            }
            if column.is_empty() {
                return Err(BadColumnMap(format!("`{key}=` names no column")));
            }
            seen.push(key);
            *slot = column.to_string();
        }
        let pairs = map.pairs();
        for (i, (key, column)) in pairs.iter().enumerate() {
            if let Some((other, _)) = pairs[..i].iter().find(|(_, c)| c == column) {
                return Err(BadColumnMap(format!(
                    "`{other}` and `{key}` name the same column `{column}`"
                )));
            }
        }
        Ok(map)
    }
}

/// Reads the step times of `path` by `map`. The time's unit is `unit` when
/// given, else the one the time column's name ends with (`_s`, `_ms`,
/// `_us`), else seconds; a note says which. Steps and workers are whole
/// numbers >= 0, times finite numbers > 0; each error names the file, the
/// line and the column.
pub fn import(path: &Path, map: &ColumnMap, unit: Option<TimeUnit>) -> Result<Imported, ImportError> {
    let file = path.display().to_string();
    let read_err = |e: csv::Error| ImportError::Read {
        file: file.clone(),
        reason: e.to_string(),
    };
    let line_err = |line: u64, reason: String| ImportError::Line {
        file: file.clone(),
        line,
        reason,
    };
    // Records end at `\n` only, the `\r` of a CRLF end trimmed with the
    // last field: with the CRLF terminator, the reader counts each record's
    // line before the `\n` that ends the previous one, one line short.
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .terminator(csv::Terminator::Any(b'\n'))
        .flexible(true)
        .from_reader(crate::table::LineLimit::new(
            std::fs::File::open(path).map_err(|e| read_err(e.into()))?,
        ));
    let header = match reader.headers() {
        Ok(h) => h.clone(),
        Err(e) => return Err(csv_error(&file, e)),
    };
    let names: Vec<&str> = header.iter().collect();
    let index = column_indices(&file, &names, map)?;
    let [ci_step, ci_worker, ci_time] = index;
    let mut imported = Imported::default();
    let unit = time_unit(&file, map, unit, &mut imported);
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(&file, e)),
        }
        let line = record.position().map_or(0, csv::Position::line);
        if record.iter().all(str::is_empty) {
            continue;
        }
        if record.len() != names.len() {
            return Err(line_err(
                line,
                format!("{} fields, the header has {}", record.len(), names.len()),
            ));
        }
        let whole = |ci: usize, key: &str| {
            record[ci].parse::<u64>().map_err(|_| {
                line_err(
                    line,
                    format!(
                        "column `{}` ({key}): {} is not a whole number >= 0",
                        names[ci],
                        quoted(&record[ci])
                    ),
                )
            })
        };
        let (step, worker) = (whole(ci_step, "step")?, whole(ci_worker, "worker")?);
        let cell = &record[ci_time];
        let time = unit.parse_seconds(cell).ok_or_else(|| {
            line_err(
                line,
                format!("column `{}` (time): {} is not a number", names[ci_time], quoted(cell)),
            )
        })?;
        if !(time.is_finite() && time > 0.0) {
            return Err(line_err(
                line,
                format!(
                    "column `{}` (time): {} is out of range; accepted: a finite number > 0",
                    names[ci_time],
                    quoted(cell)
                ),
            ));
        }
        imported.add(&file, format!("line {line}"), step, worker, time)?;
    }
    if imported.is_empty() {
        return Err(ImportError::Empty { file: file.clone() });
    }
    Ok(imported)
}

/// Where the step, worker and time columns `map` names are in the header:
/// each exactly once.
fn column_indices(file: &str, names: &[&str], map: &ColumnMap) -> Result<[usize; 3], ImportError> {
    let mut index = [0; 3];
    for (slot, (key, column)) in index.iter_mut().zip(map.pairs()) {
        let found: Vec<usize> = (0..names.len()).filter(|&i| names[i] == column).collect();
        *slot = match found.as_slice() {
            [i] => *i,
            [] => {
                return Err(ImportError::Header {
                    file: file.to_string(),
                    reason: format!(
                        "{key}={column}: the header has no column `{column}`; it has {}",
                        crate::param::shown(&names.join(", "))
                    ),
                });
            }
            _ => {
                return Err(ImportError::Header {
                    file: file.to_string(),
                    reason: format!(
                        "{key}={column}: the header has {} columns named `{column}`",
                        found.len()
                    ),
                });
            }
        };
    }
    Ok(index)
}

/// The unit the time column is read in (given, else from its name, else
/// seconds), with a note saying which and why.
fn time_unit(file: &str, map: &ColumnMap, unit: Option<TimeUnit>, imported: &mut Imported) -> TimeUnit {
    let named = TimeUnit::from_suffix(&map.time);
    match (unit, named) {
        (Some(u), Some(n)) if u != n => {
            imported.note(format!(
                "{file}: time column `{}` read in {u} as given, not in the {n} its name ends with; converted to seconds",
                map.time
            ));
            u
        }
        (Some(u), _) => {
            imported.note(format!(
                "{file}: time column `{}` read in {u}, converted to seconds",
                map.time
            ));
            u
        }
        (None, Some(n)) => {
            imported.note(format!(
                "{file}: time column `{}` read in {n} (from its name), converted to seconds",
                map.time
            ));
            n
        }
        (None, None) => {
            imported.note(format!(
                "{file}: time column `{}` names no unit (no _s, _ms or _us ending): read as seconds",
                map.time
            ));
            TimeUnit::Seconds
        }
    }
}

/// A csv reader's error, with its line where it has one.
fn csv_error(file: &str, e: csv::Error) -> ImportError {
    match e.kind() {
        csv::ErrorKind::Utf8 { pos, .. } => ImportError::Line {
            file: file.to_string(),
            line: pos.as_ref().map_or(0, csv::Position::line),
            reason: "not UTF-8 text".to_string(),
        },
        _ => ImportError::Read {
            file: file.to_string(),
            reason: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_mapping() {
        let m: ColumnMap = "step=iteration, worker=rank,time=duration_ms".parse().unwrap();
        assert_eq!(
            (m.step.as_str(), m.worker.as_str(), m.time.as_str()),
            ("iteration", "rank", "duration_ms")
        );
        let m: ColumnMap = "time=t_us".parse().unwrap();
        assert_eq!(m.to_string(), "step=step,worker=worker,time=t_us");
        for (text, expected) in [
            ("step=a,hue=b", "unknown key `hue`; accepted: step, worker, time"),
            ("step", "`step` is not KEY=COLUMN"),
            ("step=a,step=b", "`step` is given twice"),
            ("time=", "`time=` names no column"),
            ("step=a,worker=a", "`step` and `worker` name the same column `a`"),
            ("time=step", "`step` and `time` name the same column `step`"),
        ] {
            let e = text.parse::<ColumnMap>().unwrap_err().to_string();
            assert!(e.contains(expected), "{text}: {e}");
        }
    }
}
