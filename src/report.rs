//! Result rows and the run configuration, as written to CSV, JSON and tables.
//!
//! Times are in the unit of the base distribution D. Non-finite numbers are
//! written as `inf` (a string in JSON, which has no infinity); a statistic
//! that does not exist is empty in CSV and `null` in JSON, never NaN.

use serde::{Deserialize, Serialize, Serializer};

mod table;
pub use table::write_table;

use crate::comm::Decoder;
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
    /// Scheme name (`uncoded`, `ignore`, `frc`, `crc`, `comm-efficient`, `mds`).
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
    /// [`crate::engine::approx::extra_work`]); empty for the other schemes.
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
    /// `--gradient-size` × n.
    #[serde(serialize_with = "opt_num", skip_serializing_if = "Option::is_none")]
    pub bytes_per_iteration: Option<f64>,
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
                n: self.n,
                per_iteration: self.mean / self.iterations as f64,
                load: self.load,
                share_of: self.n,
                gradients_sent: crate::units::gradients_sent(self.scheme, self.s, self.parts, self.message),
            },
        );
        self.iterations_per_hour = c.iterations_per_hour;
        self.run_hours = c.run_hours;
        self.gpu_hours = c.gpu_hours;
        self.cost = c.cost;
        self.storage_bytes = c.storage_bytes;
        self.bytes_per_iteration = c.bytes_per_iteration;
    }

    /// The row of `scheme` from its simulated summary and the baseline's.
    pub fn new(scheme: &Scheme, summary: &Summary, baseline: &Summary) -> Self {
        let [p50, p90, p99, p999] = summary.quantiles;
        Self {
            scheme: scheme.kind(),
            n: scheme.n(),
            s: scheme.s(),
            m: scheme.m(),
            k: scheme.k(),
            load: scheme.load(),
            message: scheme.message(),
            exact: scheme.exact_gradient(),
            trials: summary.trials,
            mean: summary.mean.mean,
            std_err: summary.mean.std_err,
            ci95_low: summary.mean.ci95.map(|c| c.0),
            ci95_high: summary.mean.ci95.map(|c| c.1),
            p50,
            p90,
            p99,
            p999,
            speedup: ratio(baseline.mean.mean, summary.mean.mean),
            p99_speedup: ratio(baseline.quantiles[2], p99),
            analytic_mean: None,
            analytic_p99: None,
            link: "dedicated",
            transfer_time: Some(0.0),
            decode_time: 0.0,
            decoder: "threshold",
            approx_error: None,
            undecodable: None,
            data_fraction: None,
            timeout: scheme.deadline(),
            extra_work: None,
            staleness: None,
            parts: scheme.parts(),
            iterations: 1,
            inclusion_min: None,
            inclusion_max: None,
            iterations_per_hour: None,
            run_hours: None,
            gpu_hours: None,
            cost: None,
            storage_bytes: None,
            bytes_per_iteration: None,
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
}

/// The rows of a simulated study, one per scheme, in the study's order, with
/// `analytic_mean` and `analytic_p99` filled where an exact law exists.
///
/// Where the exact mean is infinite, the sample mean estimates nothing: the
/// row's `mean` is `inf`, its standard error and interval are empty, and the
/// speedup compares the true means (∞/x = ∞, x/∞ = 0, ∞/∞ undefined).
pub fn rows(study: &Study, outcome: &Outcome) -> Vec<Row> {
    let base_inf = study.mean_is_infinite(&study.baseline());
    let inexact = crate::engine::approx::inexact(study);
    let tallies = crate::engine::approx::tallies(study);
    let inclusion = crate::engine::approx::inclusion(study);
    study
        .schemes()
        .iter()
        .zip(&outcome.configs)
        .zip(inexact)
        .zip(tallies.extra_work.into_iter().zip(tallies.staleness))
        .zip(inclusion)
        .map(|((((s, summary), inexact), (extra_work, staleness)), inclusion)| {
            let mut row = Row::new(s, summary, &outcome.baseline);
            row.iterations = study.iterations();
            row.inclusion_min = inclusion.map(|i| i.0);
            row.inclusion_max = inclusion.map(|i| i.1);
            comm_columns(&mut row, study, s);
            row.extra_work = extra_work;
            row.staleness = staleness;
            row.approx_error = Some(inexact.error);
            row.data_fraction = Some(inexact.data_fraction);
            if study.decodes_by_code(s) {
                row.undecodable = Some(summary.infinite as f64 / summary.trials as f64);
            }
            row.analytic_mean = study.exact_mean(s);
            row.analytic_p99 = study.exact_law(s).map(|law| law.quantile(0.99));
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
            }
            row
        })
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
            row.ci95_low = Some(low);
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
            scheme: scheme.kind(),
            n: scheme.n(),
            s: scheme.s(),
            m: scheme.m(),
            k: scheme.k(),
            load: scheme.load(),
            message: scheme.message(),
            exact: scheme.exact_gradient(),
            trials: 0,
            mean,
            std_err: None,
            ci95_low: None,
            ci95_high: None,
            p50,
            p90,
            p99,
            p999,
            speedup: baseline.and_then(|b| ratio(b.0, mean)),
            p99_speedup: baseline.and_then(|b| ratio(b.1, p99)),
            analytic_mean: Some(mean),
            analytic_p99: Some(p99),
            link: "dedicated",
            transfer_time: Some(0.0),
            decode_time: 0.0,
            decoder: "threshold",
            approx_error: None,
            undecodable: None,
            data_fraction: None,
            timeout: scheme.deadline(),
            extra_work: None,
            staleness: None,
            parts: scheme.parts(),
            iterations: study.iterations(),
            inclusion_min: None,
            inclusion_max: None,
            iterations_per_hour: None,
            run_hours: None,
            gpu_hours: None,
            cost: None,
            storage_bytes: None,
            bytes_per_iteration: None,
        });
        let row = rows.last_mut().expect("just pushed");
        comm_columns(row, study, scheme);
        row.staleness = study.exact_staleness(scheme);
    }
    (rows, missing)
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

/// Everything that determines a result, written beside the rows (JSON
/// `config`, the table's header). The thread count is not in it: it does not
/// change the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// gcsim version that produced the result.
    pub gcsim: String,
    /// The subcommand (`run` or `sweep`).
    pub command: String,
    /// `monte-carlo`, or `analytic` for exact values only.
    pub mode: String,
    /// Number of workers (the first, where a sweep has several).
    pub n: usize,
    /// `--n` as given where a sweep runs several cluster sizes (`16,32,64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<String>,
    /// Worker-time law for one uncoded share, in `--dist` syntax.
    pub dist: String,
    /// Load model name.
    pub load_model: String,
    /// Compute time per unit of work, for the `affine` load model.
    pub unit_time: Option<f64>,
    /// Schemes requested, in order.
    pub schemes: Vec<SchemeKind>,
    /// `--s` as given, if any.
    pub s: Option<String>,
    /// `--m` as given, if any.
    pub m: Option<String>,
    /// `--k` as given, if any.
    pub k: Option<String>,
    /// `--d` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d: Option<String>,
    /// `--code` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// `--timeout` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// `--speculate-after` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculate_after: Option<String>,
    /// `--speculate-factor` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculate_factor: Option<String>,
    /// `--parts` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<String>,
    /// `--p` as given, if any (polynomial, matdot, entangled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
    /// `--q` as given, if any (polynomial, entangled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    /// Monte Carlo trials per configuration.
    pub trials: u64,
    /// Master seed; trial t draws from its own stream of it.
    pub seed: u64,
    /// How percentiles are defined.
    pub quantile_definition: String,
    /// Parameter values a scheme does not admit, skipped with the reason.
    pub skipped: Vec<String>,
    /// What the reader must know to read the rows (e.g. infinite means).
    pub warnings: Vec<String>,
    /// `<scenario>/<label>` for a study run from a scenario file.
    pub study: Option<String>,
    /// The communication and decoding model, e.g. `comm-time=0.5 link=shared decode-time=0`.
    #[serde(default)]
    pub comm: String,
    /// The unit of every time (`s`, `ms`, `us`), where known: `--time-unit`,
    /// or seconds for a trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_unit: Option<crate::units::TimeUnit>,
    /// The cost view's inputs (`--iterations-per-run`, `--gpu-hour-price`,
    /// `--dataset-size`, `--gradient-size`), where any was given.
    #[serde(default, skip_serializing_if = "crate::units::CostModel::is_empty")]
    pub costs: crate::units::CostModel,
    /// `threshold` or `rank` (see [`Decoder`]).
    pub decoder: String,
    /// The generator of the codes that have several, where one was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// Consecutive iterations per trial, whose total is a trial's value.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub iterations: u64,
    /// Bootstrap replicates of a trace's recorded steps whose spread widens
    /// `std_err` and the interval of the mean (`--trace-bootstrap`; see
    /// [`crate::engine::bootstrap`]), where they ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_bootstrap: Option<usize>,
}

fn one() -> u64 {
    1
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

impl RunConfig {
    /// The parameters that describe the study, one `key=value` each, for headers.
    pub fn header_fields(&self) -> Vec<(&'static str, String)> {
        let mut f = Vec::new();
        if let Some(study) = &self.study {
            f.push(("study", study.clone()));
        }
        f.extend([
            ("n", self.sizes.clone().unwrap_or_else(|| self.n.to_string())),
            ("dist", self.dist.clone()),
            ("load-model", self.load_model.clone()),
        ]);
        if let Some(c) = self.unit_time {
            f.push(("unit-time", c.to_string()));
        }
        let schemes: Vec<&str> = self.schemes.iter().map(|s| s.name()).collect();
        f.push(("scheme", schemes.join(",")));
        for (k, v) in [
            ("s", &self.s),
            ("m", &self.m),
            ("k", &self.k),
            ("d", &self.d),
            ("code", &self.code),
            ("timeout", &self.timeout),
            ("speculate-after", &self.speculate_after),
            ("speculate-factor", &self.speculate_factor),
            ("parts", &self.parts),
            ("p", &self.p),
            ("q", &self.q),
        ] {
            if let Some(v) = v {
                f.push((k, v.clone()));
            }
        }
        if !self.comm.is_empty() && self.comm != crate::comm::Comm::default().to_string() {
            f.push(("comm", self.comm.clone()));
        }
        if self.decoder != Decoder::Threshold.name() {
            f.push(("decoder", self.decoder.clone()));
        }
        if let Some(g) = &self.generator {
            f.push(("generator", g.clone()));
        }
        if self.iterations > 1 {
            f.push(("iterations", self.iterations.to_string()));
        }
        if let Some(b) = self.trace_bootstrap {
            f.push(("trace-bootstrap", b.to_string()));
        }
        if self.mode == "analytic" {
            f.push(("mode", "analytic".to_string()));
        } else {
            f.push(("trials", self.trials.to_string()));
            f.push(("seed", self.seed.to_string()));
        }
        f
    }
}

/// A complete result: the configuration and its rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// What was run.
    pub config: RunConfig,
    /// One row per configuration.
    pub rows: Vec<Row>,
}
