//! `gcsim codes` output: the run's configuration and its rows, as CSV
//! (header from the row type), JSON (`{"config": …, "rows": […]}`) and an
//! aligned table.

use std::io::{self, Write};

use serde::Serialize;

use super::check::CodesRow;
use crate::export::Export;

/// Everything that determines a `gcsim codes` result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodesConfig {
    /// gcsim version that produced the result.
    pub gcsim: &'static str,
    /// The subcommand (`codes`).
    pub command: &'static str,
    /// Patterns decoded exhaustively up to this many, else this many at random.
    pub limit: u64,
    /// Seed of the random matrices, the pattern sample and the end-to-end problem.
    pub seed: u64,
    /// What the residual and condition number are.
    pub definitions: &'static str,
}

/// A complete `gcsim codes` result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodesReport {
    /// What was run.
    pub config: CodesConfig,
    /// One row per code.
    pub rows: Vec<CodesRow>,
}

/// The `definitions` text of [`CodesConfig`].
pub const DEFINITIONS: &str = "residual = |A*B_F - T|_F / |T|_F for the least-squares decoder A; condition = sigma_max/sigma_r of B_F over its numerically nonzero singular values";

impl Export for CodesReport {
    type Row = CodesRow;

    fn rows(&self) -> &[CodesRow] {
        &self.rows
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        write_table(self, out)
    }
}

/// A fraction to four decimals, or to as many more as it takes not to print
/// a fraction short of 1 as `1.0000` or one above 0 as `0.0000` (one pattern
/// in 83 682 that does not decode must show).
pub(crate) fn fraction(x: f64) -> String {
    let shown = format!("{x:.4}");
    let rounded_away = (shown == "1.0000" && x < 1.0) || (shown == "0.0000" && x > 0.0);
    if !rounded_away {
        return shown;
    }
    let gap = x.min(1.0 - x);
    let digits = (-gap.log10()).ceil() as usize + 1;
    format!("{x:.digits$}")
}

/// Three significant digits in scientific notation (residuals and condition
/// numbers span many orders of magnitude).
fn sci(x: f64) -> String {
    if x == 0.0 { "0".into() } else { format!("{x:.3e}") }
}

const HEADER: [&str; 14] = [
    "scheme",
    "generator",
    "n",
    "s",
    "m",
    "k",
    "patterns",
    "checked",
    "decodable",
    "max_residual",
    "median_cond",
    "max_cond",
    "e2e_error",
    "result",
];

fn cells(r: &CodesRow) -> Vec<String> {
    let result = match (r.pass, r.exact) {
        (true, _) => "ok",
        (false, true) => "FAIL",
        (false, false) => "inexact",
    };
    vec![
        r.scheme.name().into(),
        r.generator.map_or("-", |g| g.name()).into(),
        r.n.to_string(),
        r.s.to_string(),
        r.m.map_or("-".into(), |m| m.to_string()),
        r.k.to_string(),
        if r.patterns_total < 1e6 {
            format!("{}", r.patterns_total)
        } else {
            format!("{:.3e}", r.patterns_total)
        },
        format!("{}{}", r.patterns_checked, if r.exhaustive { "" } else { " (sample)" }),
        fraction(r.decodable_fraction),
        sci(r.max_residual),
        sci(r.median_condition),
        sci(r.max_condition),
        sci(r.e2e_error),
        result.into(),
    ]
}

/// The rows aligned under a `#` header with the configuration and tolerances.
pub fn write_table(report: &CodesReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &report.config;
    writeln!(out, "# gcsim codes  limit={}  seed={}", c.limit, c.seed)?;
    writeln!(out, "# {}", c.definitions)?;
    if let Some(r) = report.rows.first() {
        writeln!(
            out,
            "# decodable: residual < {:e}; end to end: relative gradient error < {:e} over {} random sets of n-s workers",
            r.tolerance, r.e2e_tolerance, r.e2e_sets
        )?;
    }
    let mut rows = vec![HEADER.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    rows.extend(report.rows.iter().map(cells));
    crate::export::write_aligned(&rows, 2, out)
}
