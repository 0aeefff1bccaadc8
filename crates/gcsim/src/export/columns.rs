//! `--columns`: a chosen few of a result's CSV columns, by name, in the
//! CSV and the table. The names are the row type's serde field names, read
//! from the header of a default row, so they never drift from the CSV.

use std::io::{self, Write};

use serde::Serialize;

use super::{Digits, Export, short, write_aligned_by};

/// The CSV column names of rows of type `T`, in order.
pub fn column_names<T: Serialize + Default>() -> Vec<String> {
    let mut csv = Vec::new();
    super::write_csv(&[T::default()], &mut csv).expect("writing to a Vec does not fail");
    let mut reader = csv::Reader::from_reader(csv.as_slice());
    let header = reader.headers().expect("a header row was written");
    header.iter().map(String::from).collect()
}

/// A column name that rows do not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ColumnError {
    /// Not a column of these rows.
    #[error("unknown column `{name}`{hint}; accepted: {}", accepted.join(", "))]
    Unknown {
        /// The name as given.
        name: String,
        /// ` (did you mean `p99`?)` for a near name, else empty.
        hint: String,
        /// Every column of these rows.
        accepted: Vec<String>,
    },
    /// No name at all.
    #[error("no column named; give one or more of: {}", .0.join(", "))]
    Empty(Vec<String>),
}

/// Chosen columns, each a CSV column name of the rows, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    names: Vec<String>,
}

impl Columns {
    /// The columns `given`, each one of `accepted` in any case; a name
    /// given twice is kept once.
    pub fn new(given: &[String], accepted: &[String]) -> Result<Self, ColumnError> {
        let mut names: Vec<String> = Vec::new();
        for name in given.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            let Some(column) = accepted.iter().find(|a| a.eq_ignore_ascii_case(name)) else {
                return Err(ColumnError::Unknown {
                    name: crate::param::one_line(name),
                    hint: crate::suggest::did_you_mean(name, accepted.iter().map(String::as_str)),
                    accepted: accepted.to_vec(),
                });
            };
            if !names.contains(column) {
                names.push(column.clone());
            }
        }
        if names.is_empty() {
            return Err(ColumnError::Empty(accepted.to_vec()));
        }
        Ok(Self { names })
    }

    /// The names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The header and rows of `report`'s CSV, these columns only.
    pub fn cells<R: Export + ?Sized>(&self, report: &R) -> io::Result<Vec<Vec<String>>> {
        let mut csv = Vec::new();
        report.write_csv(&mut csv)?;
        let mut reader = csv::Reader::from_reader(csv.as_slice());
        let header = reader.headers().map_err(io::Error::other)?.clone();
        let index: Vec<usize> = self
            .names
            .iter()
            .map(|n| header.iter().position(|h| h == n))
            .collect::<Option<_>>()
            .ok_or_else(|| io::Error::other("a chosen column is not in the CSV"))?;
        let mut cells = vec![self.names.clone()];
        for record in reader.records() {
            let record = record.map_err(io::Error::other)?;
            cells.push(index.iter().map(|&i| record.get(i).unwrap_or("").to_string()).collect());
        }
        Ok(cells)
    }

    /// `report`'s CSV, these columns only.
    pub fn write_csv<R: Export + ?Sized>(&self, report: &R, out: &mut dyn Write) -> io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        for row in self.cells(report)? {
            w.write_record(&row)?;
        }
        w.flush()
    }

    /// The header and rows of `report`'s CSV, these columns only, as a
    /// table shows them (see [`table_cell`]).
    pub fn table_cells<R: Export + ?Sized>(&self, report: &R, digits: &Digits) -> io::Result<Vec<Vec<String>>> {
        let mut cells = self.cells(report)?;
        for row in cells.iter_mut().skip(1) {
            for cell in row.iter_mut() {
                *cell = table_cell(cell, digits);
            }
        }
        Ok(cells)
    }
}

/// A CSV value as a table shows it: `-` for an empty one, yes/no for a
/// boolean, a fraction in few digits, anything else (names, whole numbers,
/// `inf`) as it is.
pub fn table_cell(value: &str, digits: &Digits) -> String {
    match value {
        "" => "-".into(),
        "true" => "yes".into(),
        "false" => "no".into(),
        v if v.bytes().all(|b| b.is_ascii_digit() || b == b'-') => v.into(),
        v => v.parse::<f64>().map_or_else(|_| v.to_string(), |x| short(x, digits)),
    }
}

/// Writes `key: value` lines, the values aligned: one configuration's
/// table, readable on a narrow terminal.
pub fn write_vertical(pairs: &[(String, String)], out: &mut dyn Write) -> io::Result<()> {
    let width = pairs.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0) + 1;
    for (key, value) in pairs {
        writeln!(out, "{:<width$} {value}", format!("{key}:"))?;
    }
    Ok(())
}

/// Writes the table of [`Columns::table_cells`]: aligned columns, or
/// `key: value` lines where `vertical` and there is one row.
pub fn write_columns<R: Export + ?Sized>(
    report: &R,
    columns: &Columns,
    digits: &Digits,
    vertical: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let cells = columns.table_cells(report, digits)?;
    if vertical && cells.len() == 2 {
        let pairs: Vec<(String, String)> = cells[0].iter().cloned().zip(cells[1].iter().cloned()).collect();
        return write_vertical(&pairs, out);
    }
    write_cells(&cells, out)
}

/// Writes a header row and rows as aligned columns: a column of names to
/// the left, a column of numbers to the right.
pub fn write_cells(cells: &[Vec<String>], out: &mut dyn Write) -> io::Result<()> {
    let columns = cells.first().map_or(0, Vec::len);
    let left: Vec<bool> = (0..columns)
        .map(|i| cells[1..].iter().any(|row| !numeric(&row[i])))
        .collect();
    write_aligned_by(cells, &left, out)
}

/// A table cell that holds a number (or `-`, `inf`): aligned right.
fn numeric(cell: &str) -> bool {
    matches!(cell, "-" | "inf" | "-inf") || cell.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Serialize)]
    struct Sample {
        name: &'static str,
        count: usize,
        mean: f64,
        missing: Option<f64>,
        ok: bool,
    }

    #[derive(Serialize)]
    struct Rows(Vec<Sample>);

    impl Export for Rows {
        type Row = Sample;

        fn rows(&self) -> &[Sample] {
            &self.0
        }
        fn write_table(&self, _: &mut dyn Write) -> io::Result<()> {
            Ok(())
        }
    }

    fn rows() -> Rows {
        Rows(vec![
            Sample {
                name: "a",
                count: 3,
                mean: 1.234_567,
                missing: None,
                ok: true,
            },
            Sample {
                name: "b",
                count: 40,
                mean: 2e7,
                missing: Some(0.5),
                ok: false,
            },
        ])
    }

    #[test]
    fn names_come_from_the_serialised_header() {
        assert_eq!(column_names::<Sample>(), ["name", "count", "mean", "missing", "ok"]);
    }

    #[test]
    fn chosen_columns_in_the_order_given() {
        let accepted = column_names::<Sample>();
        let given: Vec<String> = ["MEAN", "name", "mean"].map(String::from).to_vec();
        let columns = Columns::new(&given, &accepted).unwrap();
        assert_eq!(columns.names(), ["mean", "name"]);
        let mut csv = Vec::new();
        columns.write_csv(&rows(), &mut csv).unwrap();
        assert_eq!(String::from_utf8(csv).unwrap(), "mean,name\n1.234567,a\n20000000.0,b\n");
        let table = columns.table_cells(&rows(), &Digits::TABLE).unwrap();
        assert_eq!(table, [["mean", "name"], ["1.235", "a"], ["2.000e7", "b"]]);
        let cells = Columns::new(&["missing".into(), "ok".into(), "count".into()], &accepted)
            .unwrap()
            .table_cells(&rows(), &Digits::TABLE)
            .unwrap();
        assert_eq!(cells[1], ["-", "yes", "3"]);
        assert_eq!(cells[2], ["0.5000", "no", "40"]);
    }

    #[test]
    fn unknown_and_empty_names_are_refused() {
        let accepted = column_names::<Sample>();
        let err = Columns::new(&["meen".into()], &accepted).unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown column `meen` (did you mean `mean`?); accepted: name, count, mean, missing, ok"
        );
        let err = Columns::new(&[" ".into()], &accepted).unwrap_err().to_string();
        assert!(err.starts_with("no column named"), "{err}");
    }

    #[test]
    fn one_row_can_be_written_as_key_value_lines() {
        let accepted = column_names::<Sample>();
        let columns = Columns::new(&["name".into(), "missing".into()], &accepted).unwrap();
        let one = Rows(rows().0.into_iter().take(1).collect());
        let mut out = Vec::new();
        write_columns(&one, &columns, &Digits::TABLE, true, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "name:    a\nmissing: -\n");
        let mut out = Vec::new();
        write_columns(&rows(), &columns, &Digits::TABLE, true, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "name  missing\na           -\nb      0.5000\n"
        );
    }
}
