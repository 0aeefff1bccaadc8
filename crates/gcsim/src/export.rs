//! The forms of a result: CSV (header row, the output column order), JSON
//! (`{"config": …, "rows": […]}`), an aligned table for terminals, and the
//! CSV's columns as a Markdown table or a LaTeX `tabular` ([`markup`]). Every
//! result type implements [`Export`]; [`write()`] is the one place a format
//! chooses its writer.

use std::fmt;
use std::io::{self, Write};
use std::ops::Range;
use std::str::FromStr;

use serde::Serialize;

pub mod chrome;
mod columns;
pub mod markup;
pub use columns::{ColumnError, Columns, column_names, table_cell, write_cells, write_columns, write_vertical};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object.
    Json,
    /// The CSV's columns as a Markdown table.
    Markdown,
    /// The CSV's columns as a LaTeX `tabular` (booktabs rules).
    Latex,
}

impl Format {
    /// Every format, in the order of [`Format::NAMES`].
    pub const ALL: [Format; 5] = [
        Format::Table,
        Format::Csv,
        Format::Json,
        Format::Markdown,
        Format::Latex,
    ];
    /// The name of each format, as `--format` takes it.
    pub const NAMES: [&'static str; 5] = ["table", "csv", "json", "markdown", "latex"];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// What it writes, for `--format`'s help.
    pub fn help(self) -> &'static str {
        match self {
            Format::Table => "Aligned columns (the default on a terminal)",
            Format::Csv => "Comma-separated values with a header row (the default when piped)",
            Format::Json => r#"{"config": {...}, "rows": [...]}"#,
            Format::Markdown => "The CSV's columns as a Markdown table, numbers as the table writes them (.md)",
            Format::Latex => "The CSV's columns as a LaTeX tabular with booktabs rules, _ % & # escaped (.tex)",
        }
    }

    /// The format a file name's extension implies (`.csv`, `.json`, `.txt`,
    /// `.md`, `.tex`).
    pub fn from_extension(path: &std::path::Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            "txt" | "table" => Some(Format::Table),
            "md" | "markdown" => Some(Format::Markdown),
            "tex" => Some(Format::Latex),
            _ => None,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`Format::NAMES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}`; accepted: {names}", names = Format::NAMES.join(", "))]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::NAMES
            .iter()
            .position(|&n| n == s)
            .map(|i| Self::ALL[i])
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// A result that can be written in every [`Format`]: its rows make the
/// CSV, the whole result the JSON.
pub trait Export: Serialize {
    /// One CSV row; its serde fields are the columns.
    type Row: Serialize;
    /// The result's rows, in the order they are written.
    fn rows(&self) -> &[Self::Row];
    /// Aligned columns under a `#` header naming what was run.
    fn write_table(&self, out: &mut dyn Write) -> io::Result<()>;
    /// One CSV row per result row, the header from the row type.
    fn write_csv(&self, out: &mut dyn Write) -> io::Result<()> {
        write_csv(self.rows(), out)
    }
    /// The whole result as one pretty-printed JSON object.
    fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        write_json(self, out)
    }
    /// The table of only `columns` (`--columns`): the values of those CSV
    /// columns, as [`table_cell`] shows them. Results override it to keep
    /// their `#` lines.
    fn write_table_of(&self, columns: &Columns, out: &mut dyn Write) -> io::Result<()> {
        write_columns(self, columns, self.digits(), false, out)
    }
    /// How the table writes numbers, and so the Markdown and LaTeX tables.
    fn digits(&self) -> &'static Digits {
        &Digits::TABLE
    }
}

/// Writes `report` to `out` in `format`.
pub fn write<R: Export + ?Sized>(report: &R, format: Format, out: &mut dyn Write) -> io::Result<()> {
    write_selected(report, format, None, out)
}

/// Writes `report` to `out` in `format`, the table and the CSV with only
/// `columns` where given. JSON keeps every field: it is the complete
/// record, which a reader selects from by key.
pub fn write_selected<R: Export + ?Sized>(
    report: &R,
    format: Format,
    columns: Option<&Columns>,
    out: &mut dyn Write,
) -> io::Result<()> {
    match (format, columns) {
        (Format::Table, None) => report.write_table(out),
        (Format::Table, Some(c)) => report.write_table_of(c, out),
        (Format::Csv, None) => report.write_csv(out),
        (Format::Csv, Some(c)) => c.write_csv(report, out),
        (Format::Json, _) => report.write_json(out),
        (Format::Markdown, c) => markup::write_markdown(&markup::markup_cells(report, c, report.digits())?, out),
        (Format::Latex, c) => markup::write_latex(&markup::markup_cells(report, c, report.digits())?, out),
    }
}

/// CSV via `csv::Writer::serialize`: the header comes from the row type.
pub fn write_csv<T: Serialize>(rows: &[T], out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for row in rows {
        w.serialize(row).map_err(io::Error::other)?;
    }
    w.flush()
}

/// `value` as pretty-printed JSON and a newline.
pub fn write_json<T: Serialize + ?Sized>(value: &T, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

/// How [`short`] writes a number: fixed notation with a few significant
/// digits inside a range of magnitudes, scientific outside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Digits {
    /// Significant digits in fixed notation.
    pub significant: i32,
    /// At most this many decimals in fixed notation.
    pub max_decimals: usize,
    /// Magnitudes written in fixed notation.
    pub fixed: Range<f64>,
    /// Decimals of the mantissa in scientific notation.
    pub sci_decimals: usize,
    /// Drop trailing zeros (and then a trailing point) in fixed notation.
    pub trim: bool,
    /// Write zero with `max_decimals` decimals instead of as `0`.
    pub padded_zero: bool,
}

impl Digits {
    /// Result tables: four significant digits, e.g. `5.187`, `0.6881`, `2.500e7`.
    pub const TABLE: Digits = Digits {
        significant: 4,
        max_decimals: 12,
        fixed: 1e-4..1e6,
        sci_decimals: 3,
        trim: false,
        padded_zero: false,
    };
    /// The `plan` table: as [`Digits::TABLE`], at most six decimals, zero as `0.000000`.
    pub const PLAN: Digits = Digits {
        max_decimals: 6,
        padded_zero: true,
        ..Digits::TABLE
    };
    /// Axis ticks: three significant digits, no trailing zeros, e.g. `1.5`, `250`, `1e-6`.
    pub const TICK: Digits = Digits {
        significant: 3,
        max_decimals: 4,
        fixed: 1e-3..1e5,
        sci_decimals: 0,
        trim: true,
        padded_zero: false,
    };
}

/// `x` in few characters, as `digits` says; `inf` and `-inf` for infinities.
pub fn short(x: f64, digits: &Digits) -> String {
    if x == 0.0 {
        return if digits.padded_zero {
            format!("{x:.0$}", digits.max_decimals)
        } else {
            "0".into()
        };
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let a = x.abs();
    if !digits.fixed.contains(&a) {
        return format!("{x:.0$e}", digits.sci_decimals);
    }
    let decimals = (digits.significant - 1 - a.log10().floor() as i32).clamp(0, digits.max_decimals as i32) as usize;
    let s = format!("{x:.decimals$}");
    if digits.trim && s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// [`short`] in a table cell: `-` for a missing value.
pub fn short_cell(x: Option<f64>, digits: &Digits) -> String {
    x.map_or_else(|| "-".into(), |x| short(x, digits))
}

/// Writes rows of cells as columns two spaces apart: the first `left`
/// columns aligned left, the rest right.
pub fn write_aligned(cells: &[Vec<String>], left: usize, out: &mut dyn Write) -> io::Result<()> {
    let columns = cells.iter().map(Vec::len).max().unwrap_or(0);
    let left: Vec<bool> = (0..columns).map(|i| i < left).collect();
    write_aligned_by(cells, &left, out)
}

/// Writes rows of cells as columns two spaces apart, column i aligned
/// left where `left[i]`, else right.
pub(crate) fn write_aligned_by(cells: &[Vec<String>], left: &[bool], out: &mut dyn Write) -> io::Result<()> {
    let columns = cells.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            cells
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &w))| {
                if left.get(i).copied().unwrap_or(false) {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(short(5.187_377, &Digits::TABLE), "5.187");
        assert_eq!(short(0.688_1, &Digits::TABLE), "0.6881");
        assert_eq!(short(123.456, &Digits::TABLE), "123.5");
        assert_eq!(short(2.5e7, &Digits::TABLE), "2.500e7");
        assert_eq!(short(f64::INFINITY, &Digits::TABLE), "inf");
        assert_eq!(short_cell(None, &Digits::TABLE), "-");
        assert_eq!(short(0.0, &Digits::TABLE), "0");
        assert_eq!(short(f64::NEG_INFINITY, &Digits::TABLE), "-inf");
    }

    #[test]
    fn plan_numbers() {
        assert_eq!(short(0.0, &Digits::PLAN), "0.000000");
        assert_eq!(short(0.000_123_456, &Digits::PLAN), "0.000123");
        assert_eq!(short(0.000_123_456, &Digits::TABLE), "0.0001235");
        assert_eq!(short(5.187_377, &Digits::PLAN), "5.187");
        assert_eq!(short(2.5e7, &Digits::PLAN), "2.500e7");
    }

    #[test]
    fn tick_labels() {
        assert_eq!(short(0.0, &Digits::TICK), "0");
        assert_eq!(short(1.5, &Digits::TICK), "1.5");
        assert_eq!(short(2.0, &Digits::TICK), "2");
        assert_eq!(short(0.0123, &Digits::TICK), "0.0123");
        assert_eq!(short(1e-6, &Digits::TICK), "1e-6");
        assert_eq!(short(250.0, &Digits::TICK), "250");
    }

    #[test]
    fn format_names_round_trip() {
        for (i, f) in Format::ALL.into_iter().enumerate() {
            assert_eq!(f as usize, i);
            assert_eq!(f.to_string().parse::<Format>(), Ok(f));
        }
        assert!("xml".parse::<Format>().is_err());
    }
}
