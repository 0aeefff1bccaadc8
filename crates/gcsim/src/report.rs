//! Result rows and the run configuration, as written to CSV, JSON and tables.
//!
//! Times are in the unit of the base distribution D. Non-finite numbers are
//! written as `inf` (a string in JSON, which has no infinity); a statistic
//! that does not exist is empty in CSV and `null` in JSON, never NaN.

use rayon::prelude::*;
use serde::{Serialize, Serializer};

mod config;
mod pipelines;
mod table;
pub use config::{Command, Mode, Report, RunConfig};
pub use table::write_table;

use crate::comm::Decoder;
use crate::engine::pairing::{Pairing, quantile_std_err, ratio_interval};
use crate::engine::{Outcome, Summary};
use crate::scheme::{Scheme, SchemeKind};
use crate::stats::QUANTILES;
use crate::study::Study;

/// Serialises a number, `inf`/`-inf` for infinities, nothing for NaN.
pub(crate) fn num<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    match *x {
        x if x.is_finite() => s.serialize_f64(x),
        x if x > 0.0 => s.serialize_str("inf"),
        x if x < 0.0 => s.serialize_str("-inf"),
        _ => s.serialize_none(),
    }
}

/// Serialises an optional number as [`num`] does, nothing for `None`.
pub(crate) fn opt_num<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => num(x, s),
        None => s.serialize_none(),
    }
}

/// One configuration's results: the output columns, in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    /// Scheme name (`crc`, `mds`, `k-async`, …: `gcsim run --help` lists them).
    pub scheme: SchemeKind,
    /// Number of workers.
    pub n: usize,
    /// Straggler tolerance s (n − k for mds, 0 for uncoded).
    pub s: usize,
    /// Message split m (comm-efficient only; empty otherwise).
    pub m: Option<usize>,
    /// Guaranteed recovery threshold: finished workers that always suffice.
    pub k: usize,
    /// Work per worker, in units of the uncoded share (1/n of the data).
    #[serde(serialize_with = "num")]
    pub load: f64,
    /// Message size, as a fraction of one full gradient.
    #[serde(serialize_with = "num")]
    pub message: f64,
    /// Whether the decoded gradient is the exact full gradient.
    pub exact: bool,
    /// Monte Carlo trials.
    pub trials: u64,
    /// Mean iteration time (the time unit).
    #[serde(serialize_with = "num")]
    pub mean: f64,
    /// Standard error of the mean (the time unit).
    #[serde(serialize_with = "opt_num")]
    pub std_err: Option<f64>,
    /// Lower end of the 95% confidence interval of the mean (the time unit).
    #[serde(serialize_with = "opt_num")]
    pub ci95_low: Option<f64>,
    /// Upper end of the 95% confidence interval of the mean (the time unit).
    #[serde(serialize_with = "opt_num")]
    pub ci95_high: Option<f64>,
    /// Median iteration time (the time unit).
    #[serde(serialize_with = "num")]
    pub p50: f64,
    /// 90th percentile of the iteration time (the time unit).
    #[serde(serialize_with = "num")]
    pub p90: f64,
    /// 99th percentile of the iteration time (the time unit).
    #[serde(serialize_with = "num")]
    pub p99: f64,
    /// 99.9th percentile of the iteration time (the time unit).
    #[serde(serialize_with = "num")]
    pub p999: f64,
    /// Mean of uncoded on the same draws divided by this mean (dimensionless).
    #[serde(serialize_with = "opt_num")]
    pub speedup: Option<f64>,
    /// p99 of uncoded on the same draws divided by this p99 (dimensionless).
    #[serde(serialize_with = "opt_num")]
    pub p99_speedup: Option<f64>,
    /// Exact mean iteration time where the theory gives one (the time unit).
    #[serde(serialize_with = "opt_num")]
    pub analytic_mean: Option<f64>,
    /// Exact 99th percentile where the theory gives one (the time unit).
    #[serde(serialize_with = "opt_num")]
    pub analytic_p99: Option<f64>,
    /// The master's link: `dedicated` or `shared` (appended after the first columns).
    pub link: &'static str,
    /// Time to transfer this row's message, τ × message (the time unit); empty
    /// when transfer times are random (`--comm-dist`).
    #[serde(serialize_with = "opt_num")]
    pub transfer_time: Option<f64>,
    /// Decoding time added to every iteration (the time unit).
    #[serde(serialize_with = "num")]
    pub decode_time: f64,
    /// `threshold` (the recovery rule) or `rank` (the real code's rank condition).
    pub decoder: &'static str,
    /// The mean over trials of ‖uᵀB_F − 1‖²/P, the squared error per
    /// partition of the gradient the master decodes with the optimal
    /// least-squares weights u from the messages F it waits for (see
    /// [`crate::engine::approx`]): 0 for the exact schemes, s/n for
    /// `ignore`, simulated for approx-regular and inexact custom codes
    /// (empty for those under `--analytic`).
    #[serde(serialize_with = "opt_num")]
    pub approx_error: Option<f64>,
    /// Where the master decodes with the real code (the rank decoder): the
    /// fraction of trials in which even all n messages did not decode to
    /// the residual tolerance, so the iteration never ended (float64 failing
    /// on an ill-conditioned code). Empty under the threshold rule.
    #[serde(serialize_with = "opt_num")]
    pub undecodable: Option<f64>,
    /// The mean share of the data whose gradient is in the update: 1 for
    /// the exact schemes, (n − s)/n for `ignore`, the share of workers
    /// arrived when the master proceeds for `timeout` (exact for i.i.d.
    /// workers), the share of partitions held by the decoded messages for
    /// approx-regular and inexact custom codes (see
    /// [`crate::engine::approx`]); empty where it is simulated and the row
    /// is exact-only (`--analytic`).
    #[serde(serialize_with = "opt_num")]
    pub data_fraction: Option<f64>,
    /// The deadline T of `timeout` (the time unit); empty for the other schemes.
    #[serde(serialize_with = "opt_num")]
    pub timeout: Option<f64>,
    /// `speculative`: the mean number of copies launched per iteration over
    /// n, the extra computation as a share of the uncoded iteration's (see
    /// `crate::engine::approx::extra_work`); empty for the other schemes.
    #[serde(serialize_with = "opt_num")]
    pub extra_work: Option<f64>,
    /// `k-async` and `k-batch-async`: the mean number of updates between
    /// the model a gradient was computed on and the update it enters (see
    /// [`crate::engine::approx::tallies`]); empty for the synchronous
    /// schemes, whose gradients are all on the current model.
    #[serde(serialize_with = "opt_num")]
    pub staleness: Option<f64>,
    /// Partitions per worker, L, of partial-frc and partial-crc; empty for
    /// the other schemes.
    pub parts: Option<usize>,
    /// Consecutive iterations per trial: `mean`, the percentiles and the
    /// speedups are of their total time.
    pub iterations: u64,
    /// The inexact strategies over a trial of several iterations: the
    /// share of the iterations whose update holds the partition used least
    /// (see [`crate::engine::approx::inclusion`]), averaged over trials;
    /// empty for the exact schemes and for one iteration.
    #[serde(serialize_with = "opt_num")]
    pub inclusion_min: Option<f64>,
    /// The same for the partition used most.
    #[serde(serialize_with = "opt_num")]
    pub inclusion_max: Option<f64>,
    /// Lower end of the 95% interval of p99: the order statistic at level
    /// 0.99 − 1.96·√(0.99·0.01/N), distribution-free (the time unit).
    #[serde(serialize_with = "opt_num")]
    pub p99_ci95_low: Option<f64>,
    /// Upper end of the 95% interval of p99, at level 0.99 + 1.96·√(0.99·0.01/N).
    #[serde(serialize_with = "opt_num")]
    pub p99_ci95_high: Option<f64>,
    /// Lower end of the paired 95% interval of `speedup`: the delta method
    /// on the log scale, with the correlation of the two means on the same
    /// draws (see [`crate::engine::pairing`]); empty where a mean is
    /// infinite. It covers the Monte Carlo error: a bootstrap over a
    /// trace's steps widens the mean's interval, not this one.
    #[serde(serialize_with = "opt_num")]
    pub speedup_ci95_low: Option<f64>,
    /// Upper end of the paired 95% interval of `speedup`.
    #[serde(serialize_with = "opt_num")]
    pub speedup_ci95_high: Option<f64>,
    /// Lower end of the paired 95% interval of `p99_speedup`: the same
    /// method, with each p99's standard error from its interval and the
    /// correlation of the two sample quantiles.
    #[serde(serialize_with = "opt_num")]
    pub p99_speedup_ci95_low: Option<f64>,
    /// Upper end of the paired 95% interval of `p99_speedup`.
    #[serde(serialize_with = "opt_num")]
    pub p99_speedup_ci95_high: Option<f64>,
    /// Iterations per hour of wall-clock time (with the time unit known and
    /// a cost flag given; see [`crate::units::CostModel`]).
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub iterations_per_hour: Option<f64>,
    /// Wall-clock hours of one run of `--iterations-per-run` iterations.
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub run_hours: Option<f64>,
    /// GPU-hours of one run: n workers for its wall-clock hours.
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub gpu_hours: Option<f64>,
    /// GPU-hours times `--gpu-hour-price`.
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Bytes each worker stores: load × `--dataset-size` / n.
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub storage_bytes: Option<f64>,
    /// Bytes all n workers send per iteration: messages × message ×
    /// `--gradient-size` × n; under a collective, its participants'
    /// traffic (see [`Row::collective_gradients`]).
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub bytes_per_iteration: Option<f64>,
    /// Under an all-reduce collective (`--aggregation`), its algorithm;
    /// absent under the master.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<&'static str>,
    /// Under a collective, the mean number of ranks whose messages it sums
    /// (see [`crate::collective`]).
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub participants: Option<f64>,
    /// Under a collective, the mean time from the start of its first
    /// bucket's collective to the end of the iteration (the time unit;
    /// per iteration), see [`crate::engine::collective::collective_times`].
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub collective_time: Option<f64>,
    /// Under a hybrid-parallel layout, the share of the stages' time they
    /// wait (see [`crate::engine::pipelines`]).
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub bubble_fraction: Option<f64>,
    /// Under a layout, each stage's mean busy time per iteration, stage
    /// by stage, separated by `;`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage_busy: Option<String>,
    /// The row's microbatches per replica M, where a sweep runs several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub microbatches: Option<usize>,
    /// Under a layout, the GPUs behind the row's n replicas (D·P·T), which
    /// the cost view counts; `None`: n.
    #[serde(skip)]
    pub gpus: Option<usize>,
    /// Under a collective, the mean gradients (units of `--gradient-size`)
    /// all ranks send per iteration (see
    /// [`crate::collective::Collective::gradients_sent`]): what
    /// `bytes_per_iteration` counts there. Not a column of its own.
    #[serde(skip)]
    pub collective_gradients: Option<f64>,
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    let r = a / b;
    (!r.is_nan()).then_some(r)
}

impl Row {
    /// Fills the cost columns of `model` for times in `unit`.
    pub fn apply_costs(&mut self, model: &crate::units::CostModel, unit: Option<crate::units::TimeUnit>) {
        let c = model.costs(
            unit,
            &crate::units::Footprint {
                n: self.gpus.unwrap_or(self.n),
                per_iteration: self.mean / self.iterations as f64,
                load: self.load,
                share_of: self.n,
                gradients_sent: crate::units::gradients_sent(self.scheme, self.s, self.parts, self.message),
                collective_gradients: self.collective_gradients,
            },
        );
        self.iterations_per_hour = c.iterations_per_hour;
        self.run_hours = c.run_hours;
        self.gpu_hours = c.gpu_hours;
        self.cost = c.cost;
        self.storage_bytes = c.storage_bytes;
        self.bytes_per_iteration = c.bytes_per_iteration;
    }

    /// Fills the interval of p99 and the paired intervals of both speedups
    /// from the two summaries and their `pairing`.
    fn paired_intervals(&mut self, summary: &Summary, baseline: &Summary, pairing: &Pairing) {
        let p99_ci = summary.quantile_ci95[2];
        // Too few trials to bound p99 at 95% leave its interval, and that of
        // its speedup, empty (see `interval_warnings`).
        if !crate::engine::interval_bounded(crate::stats::QUANTILES[2], summary.trials) {
            (self.p99_ci95_low, self.p99_ci95_high) = (None, None);
        } else {
            (self.p99_ci95_low, self.p99_ci95_high) = (Some(p99_ci.0), Some(p99_ci.1));
        }
        let speedup = pairing
            .mean
            .zip(baseline.mean.std_err.zip(summary.mean.std_err))
            .and_then(|(rho, (su, sx))| ratio_interval(baseline.mean.mean, su, summary.mean.mean, sx, rho));
        (self.speedup_ci95_low, self.speedup_ci95_high) = (speedup.map(|c| c.0), speedup.map(|c| c.1));
        let p99 = pairing.p99.filter(|_| self.p99_ci95_low.is_some()).and_then(|rho| {
            let (u, x) = (baseline.quantile_ci95[2], p99_ci);
            ratio_interval(
                baseline.quantiles[2],
                quantile_std_err(u),
                summary.quantiles[2],
                quantile_std_err(x),
                rho,
            )
        });
        (self.p99_speedup_ci95_low, self.p99_speedup_ci95_high) = (p99.map(|c| c.0), p99.map(|c| c.1));
    }

    /// The row of `scheme` before any result: the scheme's columns, a
    /// dedicated link with no transfer or decoding time, the threshold
    /// decoder, one iteration, and every statistic absent. Rows are built
    /// from it with struct update syntax.
    pub(crate) fn of_scheme(scheme: &Scheme) -> Self {
        Self {
            scheme: scheme.kind(),
            n: scheme.n(),
            s: scheme.s(),
            m: scheme.m(),
            k: scheme.k(),
            load: scheme.load(),
            message: scheme.message(),
            exact: scheme.exact_gradient(),
            link: "dedicated",
            transfer_time: Some(0.0),
            decoder: "threshold",
            timeout: scheme.deadline(),
            parts: scheme.parts(),
            iterations: 1,
            ..Self::default()
        }
    }

    /// The row of `scheme` from its simulated summary and the baseline's.
    pub fn new(scheme: &Scheme, summary: &Summary, baseline: &Summary) -> Self {
        let [p50, p90, p99, p999] = summary.quantiles;
        Self {
            trials: summary.trials,
            mean: summary.mean.mean,
            std_err: summary.mean.std_err,
            // A time is never negative: at a handful of trials the t interval
            // reaches below 0, where the mean cannot be.
            ci95_low: summary.mean.ci95.map(|c| c.0.max(0.0)),
            ci95_high: summary.mean.ci95.map(|c| c.1),
            p50,
            p90,
            p99,
            p999,
            speedup: ratio(baseline.mean.mean, summary.mean.mean),
            p99_speedup: ratio(baseline.quantiles[2], p99),
            ..Self::of_scheme(scheme)
        }
    }
}

/// Writes the communication model into a row.
fn comm_columns(row: &mut Row, study: &Study, scheme: &Scheme) {
    let comm = study.comm();
    row.link = comm.link.name();
    row.transfer_time = comm.comm_time().map(|tau| tau * scheme.message());
    row.decode_time = comm.decode_time;
    row.decoder = if scheme.rank_decoded() {
        Decoder::Rank.name()
    } else {
        study.decoder().name()
    };
    let known = crate::engine::approx::exact(study, scheme);
    row.approx_error = known.map(|i| i.error);
    row.data_fraction = known.map(|i| i.data_fraction);
    row.aggregation = study.aggregation().collective().map(|c| c.algorithm.name());
    row.participants = study.participants(scheme).map(|p| p as f64);
    row.collective_gradients = study.collective_gradients(scheme);
}

/// The rows of a simulated study, one per scheme, in the study's order, with
/// `analytic_mean` and `analytic_p99` filled where an exact law exists.
///
/// Where the exact mean is infinite, the sample mean estimates nothing: the
/// row's `mean` is `inf`, its standard error and interval are empty, and the
/// speedup compares the true means (∞/x = ∞, x/∞ = 0, ∞/∞ undefined).
pub fn rows(study: &Study, outcome: &Outcome) -> Vec<Row> {
    rows_with_progress(study, outcome, &crate::engine::Silent)
}

/// [`rows`], telling `progress` of the counts it simulates beside the
/// outcome (the approximation errors, the strategies' tallies, the
/// inclusion shares), each a pass of its own, then that it is done.
pub fn rows_with_progress(study: &Study, outcome: &Outcome, progress: &dyn crate::engine::Progress) -> Vec<Row> {
    let base_inf = study.mean_is_infinite(&study.baseline());
    let pipelines = crate::engine::pipelines::pipeline_shares_of(study, outcome);
    let inexact = crate::engine::approx::inexact_with(study, &pipelines, progress);
    let tallies = crate::engine::approx::tallies(study, outcome.tallies.as_deref(), progress);
    let inclusion = crate::engine::approx::inclusion(study, progress);
    let collective = crate::engine::collective::collective_times(study, &pipelines);
    progress.finish();
    // Each exact law's mean and p99 (numerical, a few ms each for a
    // cluster of classes), one configuration per core.
    let exact: Vec<(Option<f64>, Option<f64>)> = study
        .schemes()
        .par_iter()
        .map(|s| (study.exact_mean(s), study.exact_law(s).map(|law| law.quantile(0.99))))
        .collect();
    study
        .schemes()
        .iter()
        .zip(&outcome.configs)
        .zip(inexact)
        .zip(tallies.extra_work.into_iter().zip(tallies.staleness))
        .zip(inclusion)
        .zip(&outcome.pairing)
        .zip(exact)
        .zip(collective)
        .zip(pipelines)
        .map(
            |(
                (((((((s, summary), inexact), (extra_work, staleness)), inclusion), pairing), (mean, p99)), collective),
                pipelines,
            )| {
                let mut row = Row::new(s, summary, &outcome.baseline);
                row.paired_intervals(summary, &outcome.baseline, pairing);
                row.iterations = study.iterations();
                row.inclusion_min = inclusion.map(|i| i.0);
                row.inclusion_max = inclusion.map(|i| i.1);
                comm_columns(&mut row, study, s);
                row.extra_work = extra_work;
                row.staleness = staleness;
                row.approx_error = Some(inexact.error);
                row.data_fraction = Some(inexact.data_fraction);
                if let Some(c) = collective {
                    row.collective_time = Some(c.time);
                    row.collective_gradients = Some(c.gradients);
                    // A deadline's participants are the workers whose
                    // results are in its update: n × data_fraction.
                    if s.deadline().is_some() {
                        row.participants = Some(s.n() as f64 * inexact.data_fraction);
                    }
                }
                row.pipeline_columns(study, pipelines);
                if study.decodes_by_code(s) {
                    row.undecodable = Some(summary.infinite as f64 / summary.trials as f64);
                }
                row.analytic_mean = mean;
                row.analytic_p99 = p99;
                let row_inf = study.mean_is_infinite(s);
                if row_inf {
                    row.mean = f64::INFINITY;
                    row.std_err = None;
                    row.ci95_low = None;
                    row.ci95_high = None;
                    row.analytic_mean = row.analytic_mean.map(|_| f64::INFINITY);
                }
                if row_inf || base_inf {
                    let base = if base_inf {
                        f64::INFINITY
                    } else {
                        outcome.baseline.mean.mean
                    };
                    row.speedup = ratio(base, row.mean);
                    (row.speedup_ci95_low, row.speedup_ci95_high) = (None, None);
                }
                row
            },
        )
        .collect()
}

/// Widens each row's standard error and interval of the mean by `var`,
/// the variance of its mean due to the trace's recorded steps (see
/// [`crate::engine::bootstrap`]): variances add, and so the half-widths in
/// quadrature. Rows without an interval (an infinite mean) are left as
/// they are.
pub fn widen_means(rows: &mut [Row], var: &[f64]) {
    for (row, &v) in rows.iter_mut().zip(var) {
        if let (Some(se), Some(low), Some(high)) = (row.std_err, row.ci95_low, row.ci95_high) {
            let (low, high) = crate::engine::bootstrap::widened(row.mean, (low, high), v);
            row.std_err = Some((se * se + v).sqrt());
            row.ci95_low = Some(low.max(0.0));
            row.ci95_high = Some(high);
        }
    }
}

/// Rows from the exact laws alone (`--analytic`): no Monte Carlo, `trials`
/// 0, no standard error. Schemes without an exact law are returned apart.
pub fn analytic_rows(study: &Study) -> (Vec<Row>, Vec<Scheme>) {
    let baseline = study.exact_law(&study.baseline()).map(|l| (l.mean(), l.quantile(0.99)));
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for scheme in study.schemes() {
        let Some(law) = study.exact_law(scheme) else {
            missing.push(*scheme);
            continue;
        };
        let mean = law.mean();
        let [p50, p90, p99, p999] = QUANTILES.map(|q| law.quantile(q));
        rows.push(Row {
            trials: 0,
            mean,
            p50,
            p90,
            p99,
            p999,
            speedup: baseline.and_then(|b| ratio(b.0, mean)),
            p99_speedup: baseline.and_then(|b| ratio(b.1, p99)),
            analytic_mean: Some(mean),
            analytic_p99: Some(p99),
            iterations: study.iterations(),
            ..Row::of_scheme(scheme)
        });
        let row = rows.last_mut().expect("just pushed");
        comm_columns(row, study, scheme);
        // An exact law under a collective is of one bucket: its cost.
        row.collective_time = study.bucket_cost(scheme);
        row.staleness = study.exact_staleness(scheme);
    }
    (rows, missing)
}

/// Warnings for rows whose trials are too few to bound p99 at 95%: their
/// p99 interval is left empty.
pub fn interval_warnings(rows: &[Row]) -> Vec<String> {
    let q = crate::stats::QUANTILES[2];
    let unbounded = |t: u64| t > 0 && !crate::engine::interval_bounded(q, t);
    let Some(trials) = rows.iter().map(|r| r.trials).find(|&t| unbounded(t)) else {
        return Vec::new();
    };
    let fewest = (1..=10_000u64)
        .find(|&n| crate::engine::interval_bounded(q, n))
        .unwrap_or(10_000);
    let plural = if trials == 1 { "" } else { "s" };
    vec![format!(
        "{trials} trial{plural} cannot bound p99 at 95% (its largest value is below p99 too often), so p99_ci95_low/high are left empty; run {fewest} trials or more"
    )]
}

/// Warnings for rows whose exact mean is infinite: their sample mean does not
/// converge, however many trials.
pub fn infinite_mean_warnings(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.mean.is_infinite())
        .map(|r| {
            let params = match r.m {
                Some(m) => format!("s={} m={m}", r.s),
                None => format!("s={} k={}", r.s, r.k),
            };
            if let Some(u) = r.undecodable.filter(|&u| u > 0.0) {
                format!(
                    "{} {params}: in {:.4}% of trials the code never decoded, even from every worker (it fails numerically in float64), so those trials take forever and mean is written inf; see the undecodable column",
                    r.scheme,
                    100.0 * u
                )
            } else {
                format!(
                    "{} {params}: the exact mean is infinite (heavy tail); the sample mean does not converge however many trials, so mean is written inf; use the percentiles",
                    r.scheme
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::MeanEstimate;

    fn summary(mean: f64, se: f64, p99: f64, p99_ci: (f64, f64)) -> Summary {
        Summary {
            trials: 1000,
            mean: MeanEstimate {
                mean,
                std_err: Some(se),
                ci95: Some((mean - 2.0 * se, mean + 2.0 * se)),
            },
            quantiles: [0.0, 0.0, p99, 0.0],
            quantile_ci95: [(0.0, 0.0), (0.0, 0.0), p99_ci, (0.0, 0.0)],
            survival: Vec::new(),
            within_deadline: None,
            infinite: 0,
        }
    }

    /// The intervals, worked by hand: speedup 10/5 with relative errors
    /// 0.03 and 0.04 at correlation 0.5; p99 speedup 20/8 with standard
    /// errors 2.5/3.92 and 0.5/3.92 at correlation 0.8.
    #[test]
    fn paired_intervals_take_each_correlation() {
        let (baseline, config) = (
            summary(10.0, 0.3, 20.0, (19.0, 21.5)),
            summary(5.0, 0.2, 8.0, (7.9, 8.4)),
        );
        let mut row = Row::default();
        let pairing = Pairing {
            mean: Some(0.5),
            p99: Some(0.8),
        };
        row.paired_intervals(&config, &baseline, &pairing);
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        assert!(close(row.speedup_ci95_low, 1.863_543_297_396_580_2), "{row:?}");
        assert!(close(row.speedup_ci95_high, 2.146_448_652_729_511_2), "{row:?}");
        assert!(close(row.p99_speedup_ci95_low, 2.397_351_190_643_967), "{row:?}");
        assert!(close(row.p99_speedup_ci95_high, 2.607_043_984_373_916), "{row:?}");
        assert_eq!((row.p99_ci95_low, row.p99_ci95_high), (Some(7.9), Some(8.4)));
        row.paired_intervals(&config, &baseline, &Pairing::default());
        assert_eq!((row.speedup_ci95_low, row.p99_speedup_ci95_high), (None, None));
    }
}
