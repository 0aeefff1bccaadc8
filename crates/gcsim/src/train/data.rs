//! Training data: a CSV file or a synthetic problem (`synthetic.rs`), a
//! seeded train/test split, and a standardiser fitted on the training rows
//! (`standardize.rs`).
//!
//! The split is a uniformly random permutation (Fisher–Yates on the
//! Xoshiro256++ stream of the seed), so contiguous row ranges of the
//! training set, the partitions a gradient code assigns, are random subsets.

use std::ops::Range;
use std::path::Path;

use rand::Rng;
use thiserror::Error;

use crate::rng::trial_rng;

mod standardize;
mod synthetic;

pub use standardize::Standardizer;
pub use synthetic::{DataSource, Synthetic, SyntheticError};

/// Mixed into the seed of a split, so that a split and a synthetic data set of one seed draw unrelated streams.
const SPLIT_STREAM: u64 = 0x5350_4C49_5400_0001;

/// A data set: rows of features and one target per row.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Feature names, `d` of them, in column order.
    pub names: Vec<String>,
    /// Row-major features: row i is `features[i * d..(i + 1) * d]`.
    pub features: Vec<f64>,
    /// One target per row.
    pub targets: Vec<f64>,
    /// Features per row.
    pub d: usize,
}

/// Why a data set cannot be used: names the file and, where it applies, the line and column.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DataError {
    /// The file cannot be read (or is not UTF-8 text).
    #[error("{file}: cannot read the data: {reason}")]
    Read {
        /// The file.
        file: String,
        /// The system's reason.
        reason: String,
    },
    /// Not even a header.
    #[error("{file}: the file is empty; the data needs a header row of column names, then one row per example")]
    NoHeader {
        /// The file.
        file: String,
    },
    /// A first row of numbers: a file without a header row.
    #[error(
        "{file}:{line}: the first row `{row}` is numbers, not column names; give the file a header row naming its columns (the last, or --target, is the target)"
    )]
    NumericHeader {
        /// The file.
        file: String,
        /// 1-based line of the first row.
        line: usize,
        /// The row, as written (on one line, shortened).
        row: String,
    },
    /// A header and nothing under it.
    #[error("{file}: a header but no data rows; the data needs at least one row under the header")]
    NoRows {
        /// The file.
        file: String,
    },
    /// One column only: a target and no features.
    #[error(
        "{file}:{line}: the only column is `{column}`; the data needs a target column and at least one feature column"
    )]
    SingleColumn {
        /// The file.
        file: String,
        /// 1-based line of the header.
        line: usize,
        /// The column's name.
        column: String,
    },
    /// Two columns of one name.
    #[error("{file}:{line}: column `{column}` appears twice in the header; column names must be distinct")]
    DuplicateColumn {
        /// The file.
        file: String,
        /// 1-based line of the header.
        line: usize,
        /// The name.
        column: String,
    },
    /// The target column asked for is not in the header.
    #[error("{file}:{line}: no column named `{target}` for the target; the columns are: {columns}")]
    NoTargetColumn {
        /// The file.
        file: String,
        /// 1-based line of the header.
        line: usize,
        /// The name asked for.
        target: String,
        /// The header's names, comma-separated.
        columns: String,
    },
    /// A row with more or fewer fields than the header.
    #[error("{file}:{line}: {fields} fields, the header has {columns}; every row needs one value per column")]
    Ragged {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// Fields in the row.
        fields: usize,
        /// Columns in the header.
        columns: usize,
    },
    /// A cell that is not a finite number.
    #[error(
        "{file}:{line}: column {column} (`{name}`) holds `{value}`; every cell must be a finite number (e.g. 3, -0.5, 1e-4)"
    )]
    NotANumber {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The column's name.
        name: String,
        /// The cell as written.
        value: String,
    },
    /// Logistic regression on a target without exactly two values.
    #[error(
        "logistic regression needs a target with two values; the target column has {count} distinct value{} ({values})",
        if *count == 1 { "" } else { "s" }
    )]
    TargetValues {
        /// Distinct values seen over the training and test rows.
        count: usize,
        /// The smallest of them, comma-separated, `...` when there are more.
        values: String,
    },
}

/// Checks the header row `columns` (line `line` of `file`): names, not
/// numbers (a file without a header would lose its first row to them),
/// each once, and at least two (features and the target).
fn check_header(file: &str, line: usize, columns: &[String]) -> Result<(), DataError> {
    if columns.iter().all(|c| c.trim().parse::<f64>().is_ok()) {
        let row = crate::param::one_line(&columns.join(","));
        let row = match row.char_indices().nth(60) {
            Some((at, _)) => format!("{}…", &row[..at]),
            None => row,
        };
        return Err(DataError::NumericHeader {
            file: file.to_string(),
            line,
            row,
        });
    }
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].contains(c) {
            return Err(DataError::DuplicateColumn {
                file: file.to_string(),
                line,
                column: c.clone(),
            });
        }
    }
    if columns.len() == 1 {
        return Err(DataError::SingleColumn {
            file: file.to_string(),
            line,
            column: columns[0].clone(),
        });
    }
    Ok(())
}

impl Dataset {
    /// Rows in the data set.
    pub fn rows(&self) -> usize {
        self.targets.len()
    }

    /// The features of row `i`.
    ///
    /// # Panics
    /// If `i >= self.rows()`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.features[i * self.d..(i + 1) * self.d]
    }

    /// The features of the rows `rows`, row-major.
    #[inline]
    pub fn block(&self, rows: Range<usize>) -> &[f64] {
        &self.features[rows.start * self.d..rows.end * self.d]
    }

    /// Reads a CSV file with a header. The target is the column named
    /// `target` if given, else the last column; every other column is a
    /// feature. Every cell must parse as a finite number; blank lines and a
    /// UTF-8 byte-order mark are skipped, cells are trimmed.
    pub fn read_csv(path: &Path, target: Option<&str>) -> Result<Dataset, DataError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| DataError::Read {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        let read_err = |(_, reason): (usize, String)| DataError::Read {
            file: file.clone(),
            reason,
        };
        let mut records = crate::table::Rows::new(&text, false);
        let (header_line, header) = match records.next() {
            None => return Err(DataError::NoHeader { file }),
            Some(r) => r.map_err(read_err)?,
        };
        let header = header.clone();
        let columns: Vec<String> = header.iter().map(str::to_string).collect();
        check_header(&file, header_line, &columns)?;
        let target_col = match target {
            None => columns.len() - 1,
            Some(t) => columns
                .iter()
                .position(|c| c == t)
                .ok_or_else(|| DataError::NoTargetColumn {
                    file: file.clone(),
                    line: header_line,
                    target: t.to_string(),
                    columns: columns.join(", "),
                })?,
        };
        let d = columns.len() - 1;
        let names: Vec<String> = (0..columns.len())
            .filter(|&c| c != target_col)
            .map(|c| columns[c].clone())
            .collect();
        let (mut features, mut targets) = (Vec::new(), Vec::new());
        while let Some(record) = records.next() {
            let (line, record) = record.map_err(read_err)?;
            if record.len() != columns.len() {
                return Err(DataError::Ragged {
                    file,
                    line,
                    fields: record.len(),
                    columns: columns.len(),
                });
            }
            for (c, cell) in record.iter().enumerate() {
                let value = cell.parse::<f64>().ok().filter(|v| v.is_finite());
                let Some(value) = value else {
                    return Err(DataError::NotANumber {
                        file,
                        line,
                        column: c + 1,
                        name: columns[c].clone(),
                        value: cell.to_string(),
                    });
                };
                if c == target_col {
                    targets.push(value);
                } else {
                    features.push(value);
                }
            }
        }
        if targets.is_empty() {
            return Err(DataError::NoRows { file });
        }
        Ok(Dataset {
            names,
            features,
            targets,
            d,
        })
    }

    /// A fixed split by seed: a uniformly random permutation of the rows
    /// (Fisher–Yates on the Xoshiro256++ stream of `seed`), the first
    /// round(test_fraction·rows) of it to test, the rest to train; at least
    /// one row stays in training. Returns `(train, test)`, each in
    /// permutation order, so contiguous row ranges of the training set are
    /// random partitions.
    ///
    /// # Panics
    /// If `test_fraction` is not in [0, 1) or the data set has no rows.
    pub fn split(&self, test_fraction: f64, seed: u64) -> (Dataset, Dataset) {
        assert!(
            (0.0..1.0).contains(&test_fraction),
            "test fraction {test_fraction} is not in [0, 1)"
        );
        let n = self.rows();
        assert!(n > 0, "cannot split a data set without rows");
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = trial_rng(seed ^ SPLIT_STREAM, 0);
        for i in (1..n).rev() {
            // Lemire's multiply-shift: j uniform on 0..=i up to a bias below n/2^64.
            let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
            order.swap(i, j);
        }
        let n_test = ((test_fraction * n as f64).round() as usize).min(n - 1);
        (self.select(&order[n_test..]), self.select(&order[..n_test]))
    }

    /// The rows `order`, in that order.
    fn select(&self, order: &[usize]) -> Dataset {
        let mut features = Vec::with_capacity(order.len() * self.d);
        for &i in order {
            features.extend_from_slice(self.row(i));
        }
        Dataset {
            names: self.names.clone(),
            features,
            targets: order.iter().map(|&i| self.targets[i]).collect(),
            d: self.d,
        }
    }
}

/// xᵀy over equal-length slices.
#[inline]
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// The logistic function 1/(1 + e^{−z}), without overflow for large |z|.
#[inline]
pub(crate) fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

#[cfg(test)]
mod tests;
