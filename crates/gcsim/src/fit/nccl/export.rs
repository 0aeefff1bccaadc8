//! Writers for an all-reduce fit: the aligned table (ending with the
//! `flags:` line), CSV of the sizes fitted, and JSON of the whole fit.

use std::io::{self, Write};

use super::{NcclFit, NcclRow};
use crate::export::Export;

/// Significant digits of the fitted latency and bandwidth: well inside the
/// run-to-run spread of nccl-tests' times, short enough to paste.
const DIGITS: usize = 4;

/// `x` in scientific notation with [`DIGITS`] significant digits (`1.589e-6`).
pub(super) fn sig(x: f64) -> String {
    format!("{:.*e}", DIGITS - 1, x)
}

/// `x` rounded to [`DIGITS`] significant digits, written plainly (`86.82`).
pub(super) fn plain_sig(x: f64) -> String {
    let rounded: f64 = sig(x).parse().unwrap_or(x);
    format!("{rounded}")
}

impl NcclFit {
    /// The closing line of the table: `flags: --aggregation … --latency … --bandwidth …`.
    pub fn flags_line(&self) -> String {
        format!("flags: {}", self.flags)
    }
}

/// The table ends with [`NcclFit::flags_line`]; CSV holds one row per size
/// fitted, JSON the whole fit.
impl Export for NcclFit {
    type Row = NcclRow;

    fn rows(&self) -> &[NcclRow] {
        &self.rows
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        write_table(self, out)
    }
}

fn write_table(fit: &NcclFit, out: &mut dyn Write) -> io::Result<()> {
    let first = fit.rows.first().map_or(0, |r| r.size_bytes);
    let last = fit.rows.last().map_or(0, |r| r.size_bytes);
    writeln!(
        out,
        "# gcsim fit --nccl-tests {}: {} ranks (from {}), {} of {} rows ({} to {} bytes), {} times",
        fit.file,
        fit.ranks,
        fit.ranks_from,
        fit.rows.len(),
        fit.table_rows,
        first,
        last,
        fit.times
    )?;
    writeln!(
        out,
        "# time = a*latency + b*size/bandwidth, {} among {} ranks: a = {}, b = {}; least squares of the relative error (weights 1/time^2)",
        fit.aggregation,
        fit.ranks,
        plain_sig(fit.a),
        plain_sig(fit.b)
    )?;
    if fit.skipped_lines > 0 {
        writeln!(
            out,
            "# lines skipped as neither comments nor data rows (log lines): {}",
            fit.skipped_lines
        )?;
    }
    for w in &fit.warnings {
        writeln!(out, "# warning: {w}")?;
    }
    let header = ["size_bytes", "time_us", "fitted_us", "relative_error", "busbw_gbps"];
    let rows: Vec<[String; 5]> = fit
        .rows
        .iter()
        .map(|r| {
            [
                r.size_bytes.to_string(),
                format!("{:.2}", r.time_us),
                format!("{:.2}", r.fitted_us),
                format!("{:+.3}", r.relative_error),
                r.busbw_gbps.map_or_else(|| "-".to_string(), |b| format!("{b:.2}")),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
        padded.join("  ")
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for r in &rows {
        writeln!(out, "{}", line(r.iter().map(String::as_str).collect()))?;
    }
    writeln!(
        out,
        "# latency {} s, bandwidth {} GB/s; R2 {:.4}, max relative error {:.3}",
        sig(fit.latency),
        plain_sig(fit.bandwidth / 1e9),
        fit.r_squared,
        fit.max_relative_error
    )?;
    writeln!(out, "{}", fit.flags_line())
}
