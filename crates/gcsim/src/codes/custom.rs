//! A user's encoding matrix, read from CSV (`--code FILE`).
//!
//! The file has no header: n rows (workers) by P columns (data partitions),
//! real entries. Row i holds worker i's coefficients; its support is the
//! partitions worker i stores and processes. The master needs the sum of the
//! P partial gradients, so it decodes when the all-ones vector lies in the
//! row span of the arrived rows.

use std::path::Path;

use faer::Mat;
use thiserror::Error;

use crate::scheme::CustomShape;

/// The largest matrix read: as for the built-in codes, B is dense.
pub(crate) const MAX_ENTRIES: usize = super::MAX_CODE_N * super::MAX_CODE_N;

/// Why a matrix file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CustomError {
    /// The file cannot be read.
    #[error("--code {file}: {reason}")]
    Read {
        /// The file.
        file: String,
        /// The system's reason.
        reason: String,
    },
    /// A cell that is not a finite number.
    #[error(
        "--code {file}: row {row}, column {column}: `{text}` is not a finite number; accepted: a CSV of real numbers without header"
    )]
    Entry {
        /// The file.
        file: String,
        /// 1-based row.
        row: usize,
        /// 1-based column.
        column: usize,
        /// The cell.
        text: String,
    },
    /// Rows of different lengths.
    #[error(
        "--code {file}: row {row} has {found} entries but row 1 has {expected}; every row (worker) needs one entry per partition"
    )]
    Ragged {
        /// The file.
        file: String,
        /// 1-based row.
        row: usize,
        /// Its entries.
        found: usize,
        /// Row 1's entries.
        expected: usize,
    },
    /// No row, or a matrix too large to decode densely.
    #[error("--code {file}: {reason}")]
    Shape {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
}

/// A user's matrix and where it came from.
#[derive(Debug, Clone)]
pub struct CustomMatrix {
    /// The file, as given.
    pub source: String,
    /// The n × P encoding matrix.
    pub b: Mat<f64>,
    /// What is decided once about the set of all workers, shared by the
    /// codes built from the matrix (see [`super::Code`]).
    pub(crate) full: super::full::Shared,
}

/// Two matrices are equal when their sources and entries are: the shared
/// facts are a function of the entries.
impl PartialEq for CustomMatrix {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.b == other.b
    }
}

impl CustomMatrix {
    /// The matrix `b` read from `source`.
    pub fn new(source: String, b: Mat<f64>) -> Self {
        Self {
            source,
            b,
            full: Default::default(),
        }
    }
}

impl CustomMatrix {
    /// Reads `path` (see the module notes).
    pub fn read(path: &Path) -> Result<Self, CustomError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| CustomError::Read {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        Self::parse(&file, &text)
    }

    /// Parses the text of a matrix file named `file` (CSV without a header,
    /// read by the `csv` crate). Blank lines and lines starting with `#` are
    /// skipped.
    pub fn parse(file: &str, text: &str) -> Result<Self, CustomError> {
        let mut rows: Vec<Vec<f64>> = Vec::new();
        let mut records = crate::table::Rows::new(text, true);
        while let Some(record) = records.next() {
            let (_, record) = record.map_err(|(line, reason)| CustomError::Shape {
                file: file.into(),
                reason: format!("line {line}: {reason}"),
            })?;
            // A comment may be indented.
            if record.get(0).is_some_and(|c| c.starts_with('#')) {
                continue;
            }
            let row = rows.len() + 1;
            let mut values = Vec::new();
            for (c, cell) in record.iter().enumerate() {
                match cell.parse::<f64>() {
                    Ok(v) if v.is_finite() => values.push(v),
                    _ => {
                        return Err(CustomError::Entry {
                            file: file.into(),
                            row,
                            column: c + 1,
                            text: cell.into(),
                        });
                    }
                }
            }
            if let Some(first) = rows.first()
                && first.len() != values.len()
            {
                return Err(CustomError::Ragged {
                    file: file.into(),
                    row,
                    found: values.len(),
                    expected: first.len(),
                });
            }
            if (rows.len() + 1) * values.len() > MAX_ENTRIES {
                return Err(CustomError::Shape {
                    file: file.into(),
                    reason: format!("more than {MAX_ENTRIES} entries; gcsim decodes dense matrices"),
                });
            }
            rows.push(values);
        }
        if rows.is_empty() {
            return Err(CustomError::Shape {
                file: file.into(),
                reason: "no rows; accepted: n rows (workers) of P comma-separated numbers (partitions)".into(),
            });
        }
        let (n, p) = (rows.len(), rows[0].len());
        Ok(Self::new(file.into(), Mat::from_fn(n, p, |i, j| rows[i][j])))
    }

    /// Workers, partitions and the largest row support.
    pub fn shape(&self) -> CustomShape {
        CustomShape {
            n: self.b.nrows(),
            partitions: self.b.ncols(),
            max_support: self.supports().into_iter().max().unwrap_or(0),
        }
    }

    /// The number of nonzeros of each row: the partitions each worker stores.
    pub fn supports(&self) -> Vec<usize> {
        self.b
            .row_iter()
            .map(|r| r.iter().filter(|&&v| v != 0.0).count())
            .collect()
    }

    /// Whether every row has the same support size (then every worker has
    /// the same load).
    pub(crate) fn is_regular(&self) -> bool {
        let s = self.supports();
        s.iter().all(|&x| x == s[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let m = CustomMatrix::parse("f", "\u{feff}1,1,0\n# comment\n\n0,1,1\n").unwrap();
        let rows = [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]];
        assert_eq!(m.b, Mat::from_fn(2, 3, |i, j| rows[i][j]));
        assert_eq!(
            m.shape(),
            CustomShape {
                n: 2,
                partitions: 3,
                max_support: 2
            }
        );
        assert!(m.is_regular());
        let e = CustomMatrix::parse("f", "1,x\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--code f: row 1, column 2: `x` is not a finite number; accepted: a CSV of real numbers without header"
        );
        assert!(matches!(
            CustomMatrix::parse("f", "1,1\n1\n"),
            Err(CustomError::Ragged { row: 2, .. })
        ));
        assert!(matches!(
            CustomMatrix::parse("f", "# only\n"),
            Err(CustomError::Shape { .. })
        ));
        assert!(matches!(
            CustomMatrix::parse("f", "1,inf\n"),
            Err(CustomError::Entry { .. })
        ));
        assert!(!CustomMatrix::parse("f", "1,1\n0,1\n").unwrap().is_regular());
    }

    /// The dense limit: 2000 × 2000 entries are read, one more row is not,
    /// and neither is one row of more entries than the limit.
    #[test]
    fn the_entry_limit_is_exact() {
        let row = |len: usize| vec!["0"; len].join(",") + "\n";
        let at_limit = row(super::super::MAX_CODE_N).repeat(super::super::MAX_CODE_N);
        let m = CustomMatrix::parse("f", &at_limit).unwrap();
        assert_eq!(m.b.nrows() * m.b.ncols(), MAX_ENTRIES);
        let over = at_limit + &row(super::super::MAX_CODE_N);
        let e = CustomMatrix::parse("f", &over).unwrap_err();
        assert!(e.to_string().contains("more than 4000000 entries"), "{e}");
        let wide = row(MAX_ENTRIES + 1);
        assert!(matches!(
            CustomMatrix::parse("f", &wide),
            Err(CustomError::Shape { .. })
        ));
    }
}
