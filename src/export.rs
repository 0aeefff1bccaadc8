//! Writers for a [`Report`]: CSV (header row, SPEC §5 column order), JSON
//! (`{"config": …, "rows": […]}`) and an aligned table for terminals.

use std::io::{self, Write};

use crate::report::{Report, Row};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object.
    Json,
}

impl Format {
    /// The format a file name's extension implies (`.csv`, `.json`, `.txt`).
    pub fn from_extension(path: &std::path::Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            "txt" | "table" => Some(Format::Table),
            _ => None,
        }
    }
}

/// Writes `report` to `out` in `format`.
pub fn write(report: &Report, format: Format, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Csv => write_csv(&report.rows, out),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, report)?;
            writeln!(out)
        }
        Format::Table => write_table(report, out),
    }
}

/// CSV via `csv::Writer::serialize`: the header comes from the row type.
pub fn write_csv(rows: &[Row], out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for row in rows {
        w.serialize(row).map_err(io::Error::other)?;
    }
    w.flush()
}

/// Four significant digits, `inf` for infinity, `-` for a missing value.
fn short(x: Option<f64>) -> String {
    match x {
        None => "-".into(),
        Some(x) if x.is_infinite() => if x > 0.0 { "inf" } else { "-inf" }.into(),
        Some(0.0) => "0".into(),
        Some(x) => {
            let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
            if x.abs() >= 1e6 || x.abs() < 1e-4 {
                format!("{x:.3e}")
            } else {
                format!("{x:.digits$}")
            }
        }
    }
}

fn table_cells(r: &Row) -> Vec<String> {
    let ci = match (r.ci95_low, r.ci95_high) {
        (Some(lo), Some(hi)) => format!("[{}, {}]", short(Some(lo)), short(Some(hi))),
        _ => "-".into(),
    };
    vec![
        r.scheme.name().to_string(),
        r.n.to_string(),
        r.s.to_string(),
        r.m.map_or("-".into(), |m| m.to_string()),
        r.k.to_string(),
        short(Some(r.load)),
        short(Some(r.message)),
        if r.exact { "yes" } else { "no" }.into(),
        short(Some(r.mean)),
        short(r.std_err),
        ci,
        short(Some(r.p50)),
        short(Some(r.p90)),
        short(Some(r.p99)),
        short(Some(r.p999)),
        short(r.speedup),
        short(r.p99_speedup),
        short(r.analytic_mean),
        short(r.analytic_p99),
    ]
}

const TABLE_HEADER: [&str; 19] = [
    "scheme",
    "n",
    "s",
    "m",
    "k",
    "load",
    "message",
    "exact",
    "mean",
    "std_err",
    "ci95",
    "p50",
    "p90",
    "p99",
    "p999",
    "speedup",
    "p99_speedup",
    "analytic_mean",
    "analytic_p99",
];

/// The rows as aligned columns under a `#` header naming every parameter.
pub fn write_table(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let c = &report.config;
    let fields: Vec<String> = c.header_fields().into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    writeln!(out, "# gcsim {} {}", c.command, fields.join("  "))?;
    writeln!(out, "# times in units of D; percentiles: {}", c.quantile_definition)?;
    for note in &c.skipped {
        writeln!(out, "# skipped: {note}")?;
    }
    for warning in &c.warnings {
        writeln!(out, "# warning: {warning}")?;
    }
    let mut cells = vec![TABLE_HEADER.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    cells.extend(report.rows.iter().map(table_cells));
    write_aligned(&cells, 1, out)
}

/// Writes rows of cells as columns two spaces apart: the first `left`
/// columns aligned left, the rest right.
pub fn write_aligned(cells: &[Vec<String>], left: usize, out: &mut dyn Write) -> io::Result<()> {
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
                if i < left {
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
        assert_eq!(short(Some(5.187_377)), "5.187");
        assert_eq!(short(Some(0.688_1)), "0.6881");
        assert_eq!(short(Some(123.456)), "123.5");
        assert_eq!(short(Some(2.5e7)), "2.500e7");
        assert_eq!(short(Some(f64::INFINITY)), "inf");
        assert_eq!(short(None), "-");
    }
}
