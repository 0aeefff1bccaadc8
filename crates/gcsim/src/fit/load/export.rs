//! The load fit's report: per-load summaries, one row per model (ranked),
//! the `best:` line, and its writers (table, CSV of the model rows, JSON).

use std::io::{self, Write};

use serde::Serialize;

use super::moments::{LoadMoments, MomentFit};
use super::{ALPHA, Candidate, LoadTrace, PERMUTATIONS, RESAMPLES};
use crate::export::Export;

/// One load's times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadSummary {
    /// The load ℓ (multiples of the uncoded share).
    pub load: f64,
    /// Steps measured at this load.
    pub steps: usize,
    /// Times measured at this load (steps × workers, where complete).
    pub times: usize,
    /// Mean time (the trace's unit).
    pub mean: f64,
    /// Standard error of the mean, from the clustered covariance (the trace's unit).
    pub mean_std_err: f64,
    /// Standard deviation of the times (the trace's unit).
    pub std_dev: f64,
}

/// One load model's tests: a flat row of the output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelFit {
    /// Rank, 1 = best (see the report's `ranked_by`).
    pub rank: usize,
    /// The model's `--load-model` name.
    pub model: Candidate,
    /// Parameters of its moment fit (X's mean and variance; affine adds c).
    pub parameters: usize,
    /// Affine's unit time c (the trace's unit per unit of load): the minimiser of A²_akN over c ≥ 0.
    pub unit_time: Option<f64>,
    /// Bootstrap standard error of `unit_time` (resamples of whole steps).
    pub unit_time_std_err: Option<f64>,
    /// Minimum chi-square statistic Q of the per-load means and variances.
    pub moments_chi2: f64,
    /// Its degrees of freedom, 2·loads − parameters.
    pub moments_df: usize,
    /// P(χ²_df ≥ Q).
    pub moments_p: f64,
    /// Affine's c as fitted by the moment test (weighted least squares on the means), for comparison.
    pub moments_unit_time: Option<f64>,
    /// k-sample Anderson–Darling statistic A²_akN of the base times across loads (not for additive).
    pub ad: Option<f64>,
    /// Its p-value from step permutations.
    pub ad_p: Option<f64>,
    /// The model's p-value: min(1, 2·min(moments_p, ad_p)), or moments_p for additive.
    pub p: f64,
    /// Whether the model fits: p ≥ 0.01.
    pub fits: bool,
    /// The base law X at load 1 as a `--dist` string: the best `gcsim fit` family for the model's base times.
    pub dist: Option<String>,
    /// Kolmogorov–Smirnov distance of `dist` to the base times it was fitted to (none when moment-matched).
    pub dist_ks_distance: Option<f64>,
    /// The simulator's flags for this model: `--load-model ... [--unit-time C] --dist ...`.
    pub flags: String,
}

impl ModelFit {
    pub(super) fn new(model: Candidate, fit: &MomentFit) -> Self {
        Self {
            rank: 0,
            model,
            parameters: model.parameters(),
            unit_time: None,
            unit_time_std_err: None,
            moments_chi2: fit.chi2,
            moments_df: fit.df,
            moments_p: fit.p,
            moments_unit_time: fit.unit_time.map(|u| u.0),
            ad: None,
            ad_p: None,
            p: fit.p,
            fits: fit.p >= ALPHA,
            dist: None,
            dist_ks_distance: None,
            flags: String::new(),
        }
    }

    pub(super) fn set_ad(&mut self, a2: f64, p: f64) {
        self.ad = Some(a2);
        self.ad_p = Some(p);
        self.p = (2.0 * self.moments_p.min(p)).min(1.0);
        self.fits = self.p >= ALPHA;
    }

    pub(super) fn set_unit_time(&mut self, c: f64, std_err: f64) {
        self.unit_time = Some(c);
        self.unit_time_std_err = Some(std_err);
    }

    pub(super) fn set_base(&mut self, (dist, ks): (String, f64)) {
        self.dist = Some(dist);
        self.dist_ks_distance = Some(ks);
    }

    pub(super) fn set_moment_base(&mut self, dist: Option<String>) {
        self.dist = dist;
    }

    fn set_flags(&mut self) {
        let mut flags = format!("--load-model {}", self.model.name());
        if let Some(c) = self.unit_time {
            flags.push_str(&format!(" --unit-time {c}"));
        }
        if let Some(d) = &self.dist {
            flags.push_str(&format!(" --dist {d}"));
        }
        self.flags = flags;
    }

    /// Q/df of the moment test: how far the rejected models are.
    fn discrepancy(&self) -> f64 {
        self.moments_chi2 / self.moments_df as f64
    }
}

/// Which load model a trace measured at several loads supports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadFitReport {
    /// The trace file.
    pub file: String,
    /// Distinct workers in the trace.
    pub workers: usize,
    /// Steps over all loads.
    pub steps: usize,
    /// Times over all loads.
    pub times: usize,
    /// The independent units of the tests: `step` (times within a step may be correlated) or `time`.
    pub units: &'static str,
    /// Step permutations behind each `ad_p`.
    pub permutations: u64,
    /// Bootstrap resamples behind `unit_time_std_err`.
    pub resamples: u64,
    /// Seed of the permutations and resamples.
    pub seed: u64,
    /// Exponent b of variance ∝ load^b (2 under scaled, 1 additive, 0 fixed and affine).
    pub variance_growth: f64,
    /// Standard error of `variance_growth`.
    pub variance_growth_std_err: f64,
    /// The ranking criterion, in words.
    pub ranked_by: &'static str,
    /// The flags of the best model, for the simulating commands.
    pub best: String,
    /// One summary per load, loads ascending.
    pub loads: Vec<LoadSummary>,
    /// Every model, best first.
    pub models: Vec<ModelFit>,
    /// Cautions about the result.
    pub warnings: Vec<String>,
}

/// The ranking, as the report states it.
const RANKED_BY: &str = "models that fit (p >= 0.01) first, fewer parameters first, then larger p; \
                         then the rejected ones by smaller moments_chi2/moments_df";

impl LoadFitReport {
    pub(super) fn new(
        trace: &LoadTrace,
        by_step: bool,
        (growth, growth_se): (f64, f64),
        moments: &[LoadMoments],
        mut models: Vec<ModelFit>,
        mut warnings: Vec<String>,
        seed: u64,
    ) -> Self {
        models.sort_by(|a, b| {
            b.fits.cmp(&a.fits).then_with(|| {
                if a.fits {
                    a.parameters.cmp(&b.parameters).then(b.p.total_cmp(&a.p))
                } else {
                    a.discrepancy().total_cmp(&b.discrepancy())
                }
            })
        });
        for (i, m) in models.iter_mut().enumerate() {
            m.rank = i + 1;
            m.set_flags();
        }
        let best = &models[0];
        if !best.fits {
            warnings.push(format!(
                "no load model fits at the 1% level (largest p = {:.2e}); the nearest by the moment test is {}: \
                 the times may grow with the load in another way, or come from a mixture (e.g. persistently slow \
                 workers), which these models do not capture",
                models.iter().map(|m| m.p).fold(0.0, f64::max),
                best.model.name()
            ));
        }
        if best.model == Candidate::Additive {
            match &best.dist {
                Some(d) if best.dist_ks_distance.is_none() => warnings.push(format!(
                    "the trace has no times at load 1, so the shape of X under additive is not identified: \
                     {d} is the log-normal law with X's fitted mean and variance"
                )),
                None => warnings.push(
                    "the trace has no times at load 1 and X's fitted mean or variance is not positive: \
                     no --dist for additive"
                        .to_string(),
                ),
                Some(_) => {}
            }
        }
        let loads = trace
            .loads()
            .iter()
            .zip(moments)
            .map(|(l, m)| LoadSummary {
                load: l.load,
                steps: l.steps(),
                times: l.times.len(),
                mean: m.mean,
                mean_std_err: m.covariance[0].sqrt(),
                std_dev: m.variance.sqrt(),
            })
            .collect();
        Self {
            file: trace.file().to_string(),
            workers: trace.workers(),
            steps: trace.steps(),
            times: trace.times(),
            units: if by_step { "step" } else { "time" },
            permutations: PERMUTATIONS,
            resamples: RESAMPLES,
            seed,
            variance_growth: growth,
            variance_growth_std_err: growth_se,
            ranked_by: RANKED_BY,
            best: models[0].flags.clone(),
            loads,
            models,
            warnings,
        }
    }

    /// The closing line of the table: `best: --load-model ...`.
    pub fn best_line(&self) -> String {
        format!("best: {}", self.best)
    }
}

/// The table ends with [`LoadFitReport::best_line`]; CSV holds the model
/// rows only (rank 1 is the best), JSON the whole report.
impl Export for LoadFitReport {
    type Row = ModelFit;

    fn rows(&self) -> &[ModelFit] {
        &self.models
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        write_table(self, out)
    }
}

/// Aligned columns: text left, numbers right, the last column unpadded.
fn aligned(out: &mut dyn Write, header: &[&str], rows: &[Vec<String>], numeric: &[bool]) -> io::Result<()> {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
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
    writeln!(out, "{}", line(header))?;
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(&cells))?;
    }
    Ok(())
}

/// A p-value: 3 decimals, in exponent form below 0.001, `<1e-300` where
/// it underflows.
fn p_value(p: f64) -> String {
    match p {
        p if p >= 0.001 => format!("{p:.3}"),
        p if p > 0.0 => format!("{p:.1e}"),
        _ => "<1e-300".to_string(),
    }
}

fn or_dash<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

fn write_table(report: &LoadFitReport, out: &mut dyn Write) -> io::Result<()> {
    let loads: Vec<String> = report.loads.iter().map(|l| l.load.to_string()).collect();
    writeln!(
        out,
        "# gcsim fit {}: {} times at {} loads ({}), {} steps, {} workers",
        report.file,
        report.times,
        report.loads.len(),
        loads.join(", "),
        report.steps,
        report.workers
    )?;
    writeln!(
        out,
        "# moments: minimum chi-square of the per-load means and variances (covariance clustered by {}); \
         ad: k-sample Anderson-Darling A2akN of the base times (T, T/load, T - c*load) across loads, \
         p from {} permutations of whole {}s (seed {}); p = min(1, 2*min(moments_p, ad_p)), additive: moments_p; \
         fits: p >= 0.01",
        report.units, report.permutations, report.units, report.seed
    )?;
    writeln!(out, "# ranked: {}", report.ranked_by)?;
    for w in &report.warnings {
        writeln!(out, "# warning: {w}")?;
    }
    let rows: Vec<Vec<String>> = report
        .loads
        .iter()
        .map(|l| {
            vec![
                l.load.to_string(),
                l.steps.to_string(),
                l.times.to_string(),
                format!("{:.4}", l.mean),
                format!("{:.4}", l.mean_std_err),
                format!("{:.4}", l.std_dev),
            ]
        })
        .collect();
    aligned(
        out,
        &["load", "steps", "times", "mean", "mean_std_err", "std_dev"],
        &rows,
        &[true; 6],
    )?;
    writeln!(
        out,
        "# variance growth: variance ~ load^b, b = {:.3} +- {:.3} (scaled 2, additive 1, fixed and affine 0)",
        report.variance_growth, report.variance_growth_std_err
    )?;
    let rows: Vec<Vec<String>> = report
        .models
        .iter()
        .map(|m| {
            vec![
                m.rank.to_string(),
                m.model.name().to_string(),
                match (m.unit_time, m.unit_time_std_err) {
                    (Some(c), Some(se)) => format!("{c} +- {se:.2e}"),
                    _ => "-".to_string(),
                },
                format!("{:.2}", m.moments_chi2),
                m.moments_df.to_string(),
                p_value(m.moments_p),
                or_dash(m.ad, |a| format!("{a:.2}")),
                or_dash(m.ad_p, p_value),
                p_value(m.p),
                if m.fits { "yes" } else { "no" }.to_string(),
                m.dist.clone().unwrap_or_else(|| "-".to_string()),
            ]
        })
        .collect();
    aligned(
        out,
        &[
            "rank",
            "model",
            "unit_time",
            "moments_chi2",
            "df",
            "moments_p",
            "ad",
            "ad_p",
            "p",
            "fits",
            "dist",
        ],
        &rows,
        &[true, false, true, true, true, true, true, true, true, false, false],
    )?;
    writeln!(out, "{}", report.best_line())
}
