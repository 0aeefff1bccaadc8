//! The run and sweep report as CSV, JSON and an aligned table.

use std::io::{self, Write};

use super::{Report, Row};
use crate::export::{Columns, Digits, Export, short, short_cell, write_aligned, write_columns, write_vertical};

impl Export for Report {
    type Row = Row;

    fn rows(&self) -> &[Row] {
        &self.rows
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        write_table(self, out)
    }

    fn write_table_of(&self, columns: &Columns, out: &mut dyn Write) -> io::Result<()> {
        write_header(self, out)?;
        write_columns(self, columns, &Digits::TABLE, self.one_configuration(), out)
    }
}

/// The columns shown only where they say something: the approximation
/// error and the data share where some row decodes an inexact gradient,
/// the undecodable fraction where some row is decoded by a code, the
/// deadline where some row has one, the extra work where some row copies,
/// the staleness where some row is asynchronous, the partitions per worker
/// where some row is a partial-straggler code, the partitions' inclusion
/// shares where some row runs several iterations of an inexact strategy,
/// the cost view's columns where its flags gave them, and a collective's
/// participants and time where the gradients are summed by one, and the
/// pipelines' idle share under a hybrid-parallel layout, with each row's
/// microbatches where a sweep runs several.
const OPTIONAL: [&str; 19] = [
    "approx_error",
    "undecodable",
    "data_fraction",
    "timeout",
    "extra_work",
    "staleness",
    "parts",
    "inclusion_min",
    "inclusion_max",
    "iterations_per_hour",
    "run_hours",
    "gpu_hours",
    "cost",
    "storage_bytes",
    "bytes_per_iteration",
    "participants",
    "collective_time",
    "bubble_fraction",
    "microbatches",
];

/// The values of the [`OPTIONAL`] columns, in order.
fn optional_values(r: &Row) -> [Option<f64>; 19] {
    [
        r.approx_error,
        r.undecodable,
        r.data_fraction,
        r.timeout,
        r.extra_work,
        r.staleness,
        r.parts.map(|l| l as f64),
        r.inclusion_min,
        r.inclusion_max,
        r.iterations_per_hour,
        r.run_hours,
        r.gpu_hours,
        r.cost,
        r.storage_bytes,
        r.bytes_per_iteration,
        r.participants,
        r.collective_time,
        r.bubble_fraction,
        r.microbatches.map(|m| m as f64),
    ]
}

/// The values that call for their column: the error and the data share
/// only where the gradient is inexact.
fn optional_cells(r: &Row) -> [Option<f64>; 19] {
    let mut v = optional_values(r);
    if r.exact {
        (v[0], v[2]) = (None, None);
    }
    v
}

fn table_cells(r: &Row) -> Vec<String> {
    let d = &Digits::TABLE;
    let ci = match (r.ci95_low, r.ci95_high) {
        (Some(lo), Some(hi)) => format!("[{}, {}]", short(lo, d), short(hi, d)),
        _ => "-".into(),
    };
    vec![
        r.scheme.name().to_string(),
        r.n.to_string(),
        r.s.to_string(),
        r.m.map_or("-".into(), |m| m.to_string()),
        r.k.to_string(),
        short(r.load, d),
        short(r.message, d),
        if r.exact { "yes" } else { "no" }.into(),
        short(r.mean, d),
        short_cell(r.std_err, d),
        ci,
        short(r.p50, d),
        short(r.p90, d),
        short(r.p99, d),
        short(r.p999, d),
        short_cell(r.speedup, d),
        short_cell(r.p99_speedup, d),
        short_cell(r.analytic_mean, d),
        short_cell(r.analytic_p99, d),
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

impl Report {
    /// A `run`'s report (also merged from its shards): one configuration,
    /// whose table is `key: value` lines rather than one row too wide for
    /// a terminal.
    fn one_configuration(&self) -> bool {
        self.config.command == super::Command::Run && self.rows.len() == 1
    }
}

/// The rows under a `#` header naming every parameter: aligned columns,
/// or for one configuration (`run`) a `key: value` line per column that
/// has a value.
pub fn write_table(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    write_header(report, out)?;
    let cells = table_rows(report);
    if report.one_configuration() {
        let pairs: Vec<(String, String)> = (cells[0].iter().cloned())
            .zip(cells[1].iter().cloned())
            .filter(|(_, value)| value != "-")
            .collect();
        return write_vertical(&pairs, out);
    }
    write_aligned(&cells, 1, out)
}

/// The `#` lines above the table: what was run, the units, the notes.
fn write_header(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let c = &report.config;
    let fields: Vec<String> = c.header_fields().into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    writeln!(out, "# gcsim {} {}", c.command, fields.join("  "))?;
    writeln!(
        out,
        "# {}; percentiles: {}",
        crate::units::sentence(c.time_unit),
        c.quantile_definition
    )?;
    if c.iterations > 1 {
        writeln!(
            out,
            "# each trial is {} consecutive iterations: mean, percentiles and speedups are of their total time",
            c.iterations
        )?;
    }
    for note in &c.skipped {
        writeln!(out, "# skipped: {note}")?;
    }
    for warning in &c.warnings {
        writeln!(out, "# warning: {warning}")?;
    }
    Ok(())
}

/// The table's header row and its rows: the columns every row has, then
/// the optional ones some row has.
fn table_rows(report: &Report) -> Vec<Vec<String>> {
    let shown: Vec<usize> = (0..OPTIONAL.len())
        .filter(|&i| report.rows.iter().any(|r| optional_cells(r)[i].is_some()))
        .collect();
    let mut header: Vec<String> = TABLE_HEADER.iter().map(|s| s.to_string()).collect();
    header.extend(shown.iter().map(|&i| OPTIONAL[i].to_string()));
    let mut cells = vec![header];
    cells.extend(report.rows.iter().map(|r| {
        let mut row = table_cells(r);
        let optional = optional_values(r);
        row.extend(shown.iter().map(|&i| match (OPTIONAL[i], r.parts, r.microbatches) {
            ("parts", Some(l), _) => l.to_string(),
            ("microbatches", _, Some(m)) => m.to_string(),
            _ => short_cell(optional[i], &Digits::TABLE),
        }));
        row
    }));
    cells
}
