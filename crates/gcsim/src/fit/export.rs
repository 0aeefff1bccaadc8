//! Writers for the fits of one sample: an aligned table for terminals (with
//! the `best: --dist …` line), CSV via serde rows, and JSON.

use std::io::{self, Write};

use serde::Serialize;

use super::Fit;
use crate::export::Export;

/// The fits of one sample, with where the sample came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitReport {
    /// The trace file.
    pub file: String,
    /// Workers in the trace.
    pub workers: usize,
    /// Complete steps in the trace.
    pub steps: usize,
    /// Times fitted (workers × steps, pooled).
    pub times: usize,
    /// The ranking criterion: `ks_distance`, smallest first.
    pub ranked_by: &'static str,
    /// The `--dist` string of the best fit.
    pub best: String,
    /// Every fit, best first.
    pub fits: Vec<Fit>,
    /// Cautions about the result (e.g. that even the best fit is poor).
    pub warnings: Vec<String>,
}

impl FitReport {
    /// The report of `fits` (best first, as [`super::fit_all`] returns them).
    pub fn new(file: &str, workers: usize, steps: usize, fits: Vec<Fit>) -> Self {
        let mut warnings = Vec::new();
        if let Some(best) = fits.first() {
            let critical = super::ks_critical_1pct(best.n);
            if best.ks_distance > critical {
                warnings.push(format!(
                    "no family fits well: the best D = {:.3} exceeds {critical:.3}, the 1% critical value \
                     for {} times; the times may come from a mixture (e.g. persistently slow workers or \
                     pipeline stages), which a single law does not capture",
                    best.ks_distance, best.n
                ));
            }
        }
        Self {
            file: file.to_string(),
            workers,
            steps,
            times: fits.first().map_or(0, |f| f.n),
            ranked_by: "ks_distance",
            best: fits.first().map_or_else(String::new, |f| f.dist.clone()),
            fits,
            warnings,
        }
    }

    /// The closing line of the table: `best: --dist <string>`.
    pub fn best_line(&self) -> String {
        format!("best: --dist {}", self.best)
    }
}

/// The table ends with [`FitReport::best_line`]; CSV holds the rows only
/// (rank 1 is the best), JSON the whole report.
impl Export for FitReport {
    type Row = Fit;

    fn rows(&self) -> &[Fit] {
        &self.fits
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        write_table(self, out)
    }
}

fn write_table(report: &FitReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "# gcsim fit {}: {} times ({} steps x {} workers, pooled)",
        report.file, report.times, report.steps, report.workers
    )?;
    writeln!(
        out,
        "# maximum-likelihood fits ranked by Kolmogorov-Smirnov distance D = sup|F_n - F|; \
         log-likelihood and AIC for information"
    )?;
    for w in &report.warnings {
        writeln!(out, "# warning: {w}")?;
    }
    let header = [
        "rank",
        "family",
        "parameters",
        "log_likelihood",
        "aic",
        "ks_distance",
        "dist",
    ];
    let rows: Vec<[String; 7]> = report
        .fits
        .iter()
        .map(|f| {
            [
                f.rank.to_string(),
                f.family.name().to_string(),
                f.parameters.clone(),
                format!("{:.2}", f.log_likelihood),
                format!("{:.2}", f.aic),
                format!("{:.4}", f.ks_distance),
                f.dist.clone(),
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
    // Text columns left-aligned, numbers right-aligned; the last column unpadded.
    let numeric = [true, false, false, true, true, true, false];
    let line = |cells: &[&str]| {
        let mut s = String::new();
        for (c, cell) in cells.iter().enumerate() {
            if c > 0 {
                s.push_str("  ");
            }
            if c + 1 == cells.len() {
                s.push_str(cell);
            } else if numeric[c] {
                s.push_str(&format!("{cell:>w$}", w = widths[c]));
            } else {
                s.push_str(&format!("{cell:<w$}", w = widths[c]));
            }
        }
        s
    };
    writeln!(out, "{}", line(&header))?;
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(&cells))?;
    }
    writeln!(out, "{}", report.best_line())
}
