//! Fitting the α–β cost of an all-reduce to NVIDIA nccl-tests'
//! `all_reduce_perf` output, for `--latency` and `--bandwidth`.
//!
//! A flat all-reduce algorithm among p ranks costs a(p)·α + b(p)·S·β for S
//! bytes ([`Algorithm::coefficients`]; ring: a = 2(p−1), b = 2(p−1)/p). Over
//! the table's rows (S_i, t_i) that is a line t = c₀ + c₁·S, so α = c₀/a and
//! the bandwidth 1/β = b/c₁.
//!
//! **Weights.** The sizes run from bytes to gigabytes and the times over
//! four orders of magnitude. Ordinary least squares on the times lets the
//! largest sizes decide the line alone, and its intercept, α, is then
//! noise that can miss the small sizes' times several-fold. The line here
//! minimises the relative error instead, Σ((t_i − c₀ − c₁S_i)/t_i)²: a
//! weighted least squares with weights 1/t_i², in which every size counts
//! alike. R² is that weighted fit's (1 − weighted residual / weighted total
//! sum of squares); the largest relative error |t̂ − t|/t is reported beside
//! it.
//!
//! **Bus bandwidth.** nccl-tests reports busbw = (S/t)·2(p−1)/p for an
//! all-reduce, which is b(p)·S/t for the ring: at sizes where the latency
//! term is negligible, the ring's fitted bandwidth is the table's busbw.
//!
//! Rows of size 0 are left out: NCCL returns from an all-reduce of no
//! elements without communicating.

mod export;
mod table;

use std::path::Path;

use serde::Serialize;
use thiserror::Error;

pub use table::{Measurement, Table};

use crate::collective::Algorithm;

/// Why a table cannot be read or fitted.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum NcclError {
    /// The file cannot be read.
    #[error("{file}: cannot read: {reason}")]
    Read {
        /// The file.
        file: String,
        /// The system's reason.
        reason: String,
    },
    /// Nothing but white space.
    #[error("{file}: the file is empty; accepted: the output of nccl-tests' all_reduce_perf")]
    Empty {
        /// The file.
        file: String,
    },
    /// No line starts with a size.
    #[error(
        "{file}: no data rows (lines starting with a size in bytes); accepted: the output of nccl-tests' all_reduce_perf (strip a launcher's prefix such as srun --label's `0: ` first)"
    )]
    NoRows {
        /// The file.
        file: String,
    },
    /// A bad line.
    #[error("{file}:{line}: {reason}")]
    Line {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The table cannot be fitted as asked.
    #[error("{file}: {reason}")]
    Fit {
        /// The file.
        file: String,
        /// What is wrong and the flag that changes it.
        reason: String,
    },
}

impl NcclError {
    fn line(file: &str, line: usize, reason: impl Into<String>) -> Self {
        NcclError::Line {
            file: file.to_string(),
            line,
            reason: reason.into(),
        }
    }

    fn fit(file: &str, reason: impl Into<String>) -> Self {
        NcclError::Fit {
            file: file.to_string(),
            reason: reason.into(),
        }
    }
}

/// What to fit.
#[derive(Debug, Clone, PartialEq)]
pub struct NcclOptions {
    /// The flat algorithm whose coefficients a(p), b(p) the fit uses.
    pub algorithm: Algorithm,
    /// p, where given (`--ranks`); else counted from the `# Rank` lines.
    pub ranks: Option<usize>,
    /// The in-place times instead of the out-of-place ones.
    pub in_place: bool,
    /// The smallest size used, in bytes.
    pub min_size: u64,
    /// The largest size used, in bytes.
    pub max_size: u64,
}

/// One size of the fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NcclRow {
    /// S: the size summed, in bytes.
    pub size_bytes: u64,
    /// The measured time, in microseconds.
    pub time_us: f64,
    /// The fitted line's time a·α + b·S/bandwidth, in microseconds.
    pub fitted_us: f64,
    /// (fitted − measured)/measured.
    pub relative_error: f64,
    /// The table's bus bandwidth for this size, in GB/s (empty where the table has none).
    pub busbw_gbps: Option<f64>,
}

/// The fitted latency and bandwidth, with the rows they were fitted to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NcclFit {
    /// The table's file.
    pub file: String,
    /// The algorithm fitted.
    pub aggregation: &'static str,
    /// p: the ranks of the all-reduce.
    pub ranks: usize,
    /// Where p came from: `--ranks` or the file's `# Rank` lines.
    pub ranks_from: &'static str,
    /// Which of the table's times: `out-of-place` or `in-place`.
    pub times: &'static str,
    /// The weighting: `relative` (weights 1/time²).
    pub weighting: &'static str,
    /// a(p): the number of α terms of the algorithm among p ranks.
    pub a: f64,
    /// b(p): the multiple of S·β of the algorithm among p ranks.
    pub b: f64,
    /// α: the fitted latency of one message, in seconds.
    pub latency: f64,
    /// The fitted link bandwidth, in bytes per second.
    pub bandwidth: f64,
    /// R² of the weighted fit.
    pub r_squared: f64,
    /// The largest |fitted − measured|/measured over the sizes used.
    pub max_relative_error: f64,
    /// Data rows in the table.
    pub table_rows: usize,
    /// Lines skipped as neither comments nor data rows (log lines).
    pub skipped_lines: usize,
    /// The flags that put the fit into a study.
    pub flags: String,
    /// The sizes fitted, smallest first.
    pub rows: Vec<NcclRow>,
    /// Cautions about the result.
    pub warnings: Vec<String>,
}

/// The largest relative error above which the fit warns.
pub const WARN_RELATIVE_ERROR: f64 = 0.25;

/// Reads `path` and fits it.
pub fn fit_file(path: &Path, options: &NcclOptions) -> Result<NcclFit, NcclError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| NcclError::Read {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|_| NcclError::Read {
        file: file.clone(),
        reason: "not UTF-8 text".to_string(),
    })?;
    fit_text(&file, text, options)
}

/// Fits the table in `text`, read from `file`.
pub fn fit_text(file: &str, text: &str, options: &NcclOptions) -> Result<NcclFit, NcclError> {
    let table = table::read(file, text, options.in_place)?;
    let (ranks, ranks_from) = ranks(file, &table, options.ranks)?;
    let used: Vec<&Measurement> = table
        .rows
        .iter()
        .filter(|r| r.size_bytes > 0 && (options.min_size..=options.max_size).contains(&r.size_bytes))
        .collect();
    let mut sizes: Vec<u64> = used.iter().map(|r| r.size_bytes).collect();
    sizes.dedup();
    if sizes.len() < 2 {
        return Err(NcclError::fit(
            file,
            format!(
                "{} size(s) above 0 bytes within --min-size and --max-size; the fit needs 2 or more",
                sizes.len()
            ),
        ));
    }
    let points: Vec<(f64, f64)> = used.iter().map(|r| (r.size_bytes as f64, r.time)).collect();
    let line = relative_least_squares(&points);
    let (a, b) = options.algorithm.coefficients(ranks);
    let range = format!("{} to {} bytes", sizes[0], sizes[sizes.len() - 1]);
    if line.slope <= 0.0 {
        return Err(NcclError::fit(
            file,
            format!(
                "the time does not grow with the size over {range} (slope {:e} s/byte), so no bandwidth can be fitted; include larger sizes (--max-size)",
                line.slope
            ),
        ));
    }
    if line.intercept < 0.0 {
        return Err(NcclError::fit(
            file,
            format!(
                "the fitted latency is negative (intercept {:.3e} s): the sizes used ({range}) are too large to show it; include small sizes (all_reduce_perf -b 8, or a lower --min-size)",
                line.intercept
            ),
        ));
    }
    let latency = line.intercept / a;
    let bandwidth = b / line.slope;
    let rows: Vec<NcclRow> = used
        .iter()
        .map(|r| {
            let fitted = line.intercept + line.slope * r.size_bytes as f64;
            NcclRow {
                size_bytes: r.size_bytes,
                time_us: r.time_us,
                fitted_us: fitted * 1e6,
                relative_error: (fitted - r.time) / r.time,
                busbw_gbps: r.busbw_gbps,
            }
        })
        .collect();
    let max_relative_error = rows.iter().map(|r| r.relative_error.abs()).fold(0.0, f64::max);
    let algorithm = options.algorithm.name();
    let flags = format!(
        "--aggregation {algorithm} --latency {} --bandwidth {}GB/s",
        export::sig(latency),
        export::plain_sig(bandwidth / 1e9)
    );
    let mut warnings = Vec::new();
    if max_relative_error > WARN_RELATIVE_ERROR {
        warnings.push(format!(
            "the fitted line misses some sizes by up to {:.0}%: NCCL changes protocol (LL, LL128, Simple) and channels with the size, which one alpha-beta line does not follow; fit the sizes of your gradient buckets with --min-size and --max-size",
            100.0 * max_relative_error
        ));
    }
    Ok(NcclFit {
        file: file.to_string(),
        aggregation: algorithm,
        ranks,
        ranks_from,
        times: if options.in_place { "in-place" } else { "out-of-place" },
        weighting: "relative",
        a,
        b,
        latency,
        bandwidth,
        r_squared: line.r_squared,
        max_relative_error,
        table_rows: table.rows.len(),
        skipped_lines: table.skipped,
        flags,
        rows,
        warnings,
    })
}

/// p: `--ranks`, else the number of distinct `# Rank N` lines.
fn ranks(file: &str, table: &Table, given: Option<usize>) -> Result<(usize, &'static str), NcclError> {
    let p = match given {
        Some(p) => return check_ranks(file, p).map(|p| (p, "--ranks")),
        None => table.ranks.len(),
    };
    for (i, (rank, line)) in table.ranks.iter().enumerate() {
        if let Some((_, first)) = table.ranks[..i].iter().find(|(r, _)| r == rank) {
            return Err(NcclError::line(
                file,
                *line,
                format!(
                    "rank {rank} is listed again (first at line {first}): the output of several separate runs cannot tell the number of ranks; give --ranks P"
                ),
            ));
        }
    }
    if p == 0 {
        return Err(NcclError::fit(
            file,
            "no `#  Rank N ...` lines to count the ranks from; give the number of ranks with --ranks P",
        ));
    }
    check_ranks(file, p).map(|p| (p, "# Rank lines"))
}

fn check_ranks(file: &str, p: usize) -> Result<usize, NcclError> {
    if p < 2 {
        return Err(NcclError::fit(
            file,
            format!("{p} rank: an all-reduce among fewer than 2 ranks sends nothing; accepted: --ranks 2 or more"),
        ));
    }
    Ok(p)
}

/// A fitted line t = intercept + slope·S.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// c₀, in seconds.
    pub intercept: f64,
    /// c₁, in seconds per byte.
    pub slope: f64,
    /// R² of the weighted fit.
    pub r_squared: f64,
}

/// The line through `points` (S, t) that minimises Σ((t − c₀ − c₁S)/t)²,
/// by weighted least squares with weights 1/t², centred on the weighted
/// means for accuracy (sizes reach 10¹⁰).
pub fn relative_least_squares(points: &[(f64, f64)]) -> Line {
    let weight = |t: f64| 1.0 / (t * t);
    let sw: f64 = points.iter().map(|&(_, t)| weight(t)).sum();
    let mx = points.iter().map(|&(s, t)| weight(t) * s).sum::<f64>() / sw;
    let my = points.iter().map(|&(_, t)| weight(t) * t).sum::<f64>() / sw;
    let sxx: f64 = points.iter().map(|&(s, t)| weight(t) * (s - mx) * (s - mx)).sum();
    let sxy: f64 = points.iter().map(|&(s, t)| weight(t) * (s - mx) * (t - my)).sum();
    let syy: f64 = points.iter().map(|&(_, t)| weight(t) * (t - my) * (t - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let residual: f64 = points
        .iter()
        .map(|&(s, t)| weight(t) * (t - intercept - slope * s).powi(2))
        .sum();
    Line {
        intercept,
        slope,
        r_squared: 1.0 - residual / syy,
    }
}

/// A size in bytes: a whole number with an optional suffix K, M or G
/// (powers of 1024, as all_reduce_perf's `-b` and `-e` take them).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, factor) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .ok_or_else(|| format!("`{t}` is not a size; accepted: a whole number of bytes, optionally with K, M or G (powers of 1024), e.g. 64M"))
}

#[cfg(test)]
mod tests;
