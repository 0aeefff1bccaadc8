//! Capacity planning: which scheme and tolerance should a cluster run?
//!
//! For each cluster size n, every admissible parameter of every allowed
//! scheme (s for ignore, frc, crc; s and m for comm-efficient; k for mds) is
//! a candidate, subject to a bound on the work per worker. Candidates are
//! ranked by an objective: the mean, a percentile, or the probability of
//! finishing by a deadline. Exact values are used where every candidate at
//! that n has an exact law (i.i.d. parametric workers); otherwise all of them
//! are simulated together on common random numbers, and each objective comes
//! with its 95% interval.
//!
//! With several n and a reference size N0 (`--ref-n`), the distribution
//! describes the uncoded share of the work at N0 workers, so at n workers a
//! worker's share is N0/n of that: under `scaled` its time is scaled by N0/n
//! (the law of (N0/n)·X), under `affine` the compute time per unit is, and
//! under `fixed` nothing changes (the straggling does not depend on the work).

use serde::Serialize;

use crate::collective::Aggregation;
use crate::comm::Comm;
use crate::comm::Decoder;
use crate::engine::bootstrap::replicate_trials;
use crate::engine::{Options, Outcome, Summary};
use crate::load::LoadModel;
use crate::scheme::{Scheme, SchemeKind};
use crate::study::{MAX_CONFIGS, MAX_TOTAL_DRAWS, Study, Workers};

/// Most candidate configurations one plan evaluates, over all cluster sizes
/// (each size is also bounded by [`crate::study::MAX_CONFIGS`]).
pub(crate) const MAX_PLAN_CONFIGS: usize = 1_000_000;

/// What to plan.
#[derive(Debug, Clone)]
pub struct PlanRequest {
    /// Cluster sizes to consider.
    pub ns: Vec<usize>,
    /// Who the workers are (the i.i.d. law describes the share at `ref_n`).
    pub workers: Workers,
    /// The load model.
    pub load_model: LoadModel,
    /// N0: the cluster size whose uncoded share the law describes.
    pub ref_n: Option<usize>,
    /// What to optimise.
    pub objective: Objective,
    /// The most work per worker, in units of the (reference) uncoded share.
    pub max_load: Option<f64>,
    /// Allowed schemes.
    pub schemes: Vec<SchemeKind>,
    /// Message splits to try for comm-efficient.
    pub m: Vec<usize>,
    /// Partitions per worker to try for the partial-straggler codes.
    pub parts: Vec<usize>,
    /// Deadlines to try for `timeout`.
    pub timeouts: Vec<f64>,
    /// Monte Carlo trials where no exact law exists.
    pub trials: u64,
    /// Master seed.
    pub seed: u64,
    /// Consecutive iterations per trial: the objective is of their total.
    pub iterations: u64,
    /// Communication and decoding.
    pub comm: Comm,
    /// How gradients are summed: each is planned (at least one; the
    /// master alone where none is given).
    pub aggregations: Vec<Aggregation>,
    /// How the master decides it can decode; the rank decoder is simulated.
    pub decoder: Decoder,
    /// The generator of the rank decoder's codes, where a scheme has several.
    pub generator: Option<crate::codes::Generator>,
    /// Use exact values where they exist (else simulate everything).
    pub exact: bool,
    /// The unit of the times, where known.
    pub time_unit: Option<crate::units::TimeUnit>,
    /// The cost view's inputs.
    pub costs: crate::units::CostModel,
    /// A hybrid-parallel job: the schemes code across its data-parallel
    /// replicas (`ns` holds its one rank count) and every candidate is
    /// simulated (see [`Study::hybrid`]).
    pub parallel: Option<crate::parallel::Parallel>,
    /// With measured workers, bootstrap replicates of the trace's steps
    /// whose spread widens each simulated objective's interval (0: Monte
    /// Carlo error alone). See `data_variance`.
    pub data_replicates: usize,
}

/// One ranked candidate.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlanRow {
    /// 1 for the best.
    pub rank: usize,
    /// Cluster size.
    pub n: usize,
    /// Scheme name.
    pub scheme: SchemeKind,
    /// Straggler tolerance.
    pub s: usize,
    /// Message split (comm-efficient).
    pub m: Option<usize>,
    /// Guaranteed recovery threshold.
    pub k: usize,
    /// The objective: a time (the time unit: `--time-unit`, seconds for a trace) or, for a deadline, a probability.
    #[serde(serialize_with = "crate::report::num")]
    pub objective: f64,
    /// Lower end of the objective's 95% interval (simulated rows).
    #[serde(serialize_with = "crate::report::opt_num")]
    pub objective_low: Option<f64>,
    /// Upper end of the objective's 95% interval (simulated rows).
    #[serde(serialize_with = "crate::report::opt_num")]
    pub objective_high: Option<f64>,
    /// Mean iteration time (the time unit: `--time-unit`, seconds for a trace).
    #[serde(serialize_with = "crate::report::num")]
    pub mean: f64,
    /// 99th percentile (the time unit: `--time-unit`, seconds for a trace).
    #[serde(serialize_with = "crate::report::num")]
    pub p99: f64,
    /// Uncoded mean at the same n over this mean.
    #[serde(serialize_with = "crate::report::opt_num")]
    pub speedup: Option<f64>,
    /// Data each worker stores and processes per iteration, in units of the
    /// (reference) uncoded share. One column: for every scheme gcsim plans,
    /// a worker computes on exactly the partitions it stores.
    #[serde(serialize_with = "crate::report::num")]
    pub load: f64,
    /// Message size, as a fraction of one gradient.
    #[serde(serialize_with = "crate::report::num")]
    pub message: f64,
    /// `exact` or `simulated`.
    pub method: &'static str,
    /// Partitions per worker (partial-frc, partial-crc).
    pub parts: Option<usize>,
    /// The configuration in words, as the recommendation names it: the
    /// scheme's own name and parameters (`crc s=3`, `timeout T=2`), and a
    /// matmul code's k (`polynomial p=2 q=2 (k=4)`). Not a column: the
    /// other columns say it.
    #[serde(skip)]
    pub configuration: String,
    /// The deadline T (timeout).
    #[serde(serialize_with = "crate::report::opt_num")]
    pub timeout: Option<f64>,
    /// Iterations per hour of wall-clock time (cost view).
    #[serde(serialize_with = "crate::report::opt_num", skip_serializing_if = "Option::is_none")]
    pub iterations_per_hour: Option<f64>,
    /// Wall-clock hours of one run of `--iterations-per-run` iterations.
    #[serde(serialize_with = "crate::report::opt_num", skip_serializing_if = "Option::is_none")]
    pub run_hours: Option<f64>,
    /// GPU-hours of one run: n workers for its wall-clock hours.
    #[serde(serialize_with = "crate::report::opt_num", skip_serializing_if = "Option::is_none")]
    pub gpu_hours: Option<f64>,
    /// GPU-hours times `--gpu-hour-price`.
    #[serde(serialize_with = "crate::report::opt_num", skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Bytes each worker stores: load × `--dataset-size` / N0.
    #[serde(serialize_with = "crate::report::opt_num", skip_serializing_if = "Option::is_none")]
    pub storage_bytes: Option<f64>,
    /// Bytes all n workers send per iteration.
    #[serde(serialize_with = "crate::report::opt_num", skip_serializing_if = "Option::is_none")]
    pub bytes_per_iteration: Option<f64>,
    /// The all-reduce algorithm where the plan compares collectives
    /// (`--aggregation`); absent where every row is at the master.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<&'static str>,
    /// The collective's gradient buckets K, where the plan compares
    /// several bucket counts (`--buckets 1,4,16`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buckets: Option<usize>,
    /// Under a layout, the GPUs behind the row's n replicas (D·P·T), which
    /// the cost view counts. Not a column.
    #[serde(skip)]
    pub gpus: Option<usize>,
    /// Under a collective, the gradients all ranks send per iteration
    /// (see [`crate::report::Row::collective_gradients`]). Not a column.
    #[serde(skip)]
    pub collective_gradients: Option<f64>,
}

/// The study at `n` with the work rescaled by `factor` = N0/n.
fn study_at(req: &PlanRequest, n: usize, factor: f64, schemes: Vec<Scheme>) -> Result<Study, PlanError> {
    if let Some(parallel) = &req.parallel {
        return Ok(
            Study::hybrid(parallel.clone(), req.workers.clone(), schemes, req.trials, req.seed)?
                .with_iterations(req.iterations)?,
        );
    }
    let (workers, model) = if factor == 1.0 {
        (req.workers.clone(), req.load_model)
    } else {
        match req.load_model {
            LoadModel::Fixed => (req.workers.clone(), req.load_model),
            LoadModel::Scaled => (req.workers.scaled(factor)?, req.load_model),
            LoadModel::Affine { unit_time } => (
                req.workers.clone(),
                LoadModel::Affine {
                    unit_time: unit_time * factor,
                },
            ),
            LoadModel::Additive => return Err(PlanError::RefNAdditive),
        }
    };
    Ok(Study::with_workers(n, workers, model, schemes, req.trials, req.seed)?
        .with_comm(req.comm)
        .with_decoder(req.decoder)?
        .with_generator(req.generator)?
        .with_iterations(req.iterations)?)
}

/// A 95% interval of a binomial proportion: Wilson's score interval, which
/// stays informative at 0 and 1 (Wilson 1927).
pub(crate) fn proportion_ci(p: f64, n: u64) -> (f64, f64) {
    let z = crate::stats::Z95;
    let n = n as f64;
    let d = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / d;
    let half = z / d * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Whether the rows show their collective's buckets: some collective of
/// the request splits its gradient.
pub fn compares_buckets(req: &PlanRequest) -> bool {
    req.aggregations
        .iter()
        .filter_map(Aggregation::collective)
        .any(|c| c.buckets > 1)
}

/// The study of every cluster size, with its factor N0/n: the whole request
/// checked before any of it is evaluated. Candidates are counted as they are
/// built, so a request far over [`MAX_PLAN_CONFIGS`] stops at the limit.
fn studies(req: &PlanRequest) -> Result<Vec<Unit>, PlanError> {
    let sizes = || {
        let (first, last) = (
            req.ns.first().copied().unwrap_or(0),
            req.ns.last().copied().unwrap_or(0),
        );
        match req.ns.len() {
            1 => first.to_string(),
            2 => format!("{first},{last}"),
            len => format!("{first},...,{last} ({len} sizes)"),
        }
    };
    let mut out = Vec::with_capacity(req.ns.len());
    let (mut configs, mut draws) = (0usize, 0u128);
    for &n in &req.ns {
        let factor = req.ref_n.map_or(1.0, |n0| n0 as f64 / n as f64);
        let room = MAX_PLAN_CONFIGS - configs;
        // Under a layout the schemes code across its replicas.
        let scheme_n = req.parallel.as_ref().map_or(n, |p| p.layout.dp);
        let schemes = candidates(req, scheme_n, factor, room.min(MAX_CONFIGS))?;
        if schemes.len() > MAX_CONFIGS {
            return Err(PlanError::TooManyAtN { n });
        }
        if schemes.len() > room {
            return Err(PlanError::TooManyCandidates { sizes: sizes(), n });
        }
        configs += schemes.len() * req.aggregations.len();
        let (mut unit_studies, mut cost) = (Vec::new(), 0u128);
        for aggregation in &req.aggregations {
            // A collective sums the schemes whose rule fixes a participant set.
            let kept: Vec<Scheme> = match aggregation {
                Aggregation::Master => schemes.clone(),
                Aggregation::Collective(_) => schemes.iter().copied().filter(crate::study::summed).collect(),
            };
            if kept.is_empty() {
                continue;
            }
            let study = study_at(req, n, factor, kept)?.with_aggregation(*aggregation)?;
            let exact = req.exact && req.decoder == Decoder::Threshold && study.exact_law(&study.baseline()).is_some();
            let mut study_cost = study.schemes().len() as u128;
            if !exact {
                let replicates = if study.workers().is_measured() {
                    req.data_replicates as u64 * replicate_trials(req.trials)
                } else {
                    0
                };
                let runs = u128::from(req.trials + replicates) * u128::from(req.iterations);
                draws += u128::from(study.draws_per_trial()) * runs;
                study_cost = (u128::from(study.draws_per_trial()) + study_cost) * runs;
                if draws > u128::from(MAX_TOTAL_DRAWS) {
                    return Err(PlanError::TooMuchWork {
                        sizes: sizes(),
                        draws,
                        trials: req.trials,
                    });
                }
            }
            cost += study_cost;
            let label = (req.aggregations.len() > 1 || aggregation.collective().is_some())
                .then(|| aggregation.collective().map_or("master", |c| c.algorithm.name()));
            unit_studies.push((label, study));
        }
        out.push(Unit {
            n: scheme_n,
            factor,
            studies: unit_studies,
            cost,
        });
    }
    Ok(out)
}

/// One cluster size of a plan: its study, evaluated on its own (exact laws,
/// or a simulation on its own common random numbers), so that sizes can be
/// computed in separate processes and their rows put together unchanged.
struct Unit {
    n: usize,
    factor: f64,
    /// Its study under each aggregation, with the aggregation's name where
    /// the rows show it.
    studies: Vec<(Option<&'static str>, Study)>,
    /// An estimate of the work: worker draws plus configurations, times the
    /// trials, where the size is simulated; its configurations where exact.
    cost: u128,
}

/// The estimated cost of each cluster size of `req`, in the order of
/// `req.ns`, after the whole request is checked (see [`plan_units`]).
pub fn unit_costs(req: &PlanRequest) -> Result<Vec<u128>, PlanError> {
    Ok(studies(req)?.into_iter().map(|u| u.cost).collect())
}

/// Plans: every candidate at every n, ranked best first. `simulate` runs a
/// study with the given options (the engine, on the caller's threads).
pub fn plan(req: &PlanRequest, simulate: &dyn Fn(&Study, &Options) -> Outcome) -> Result<Vec<PlanRow>, PlanError> {
    let units = plan_units(req, &|_| true, simulate)?;
    Ok(rank(units.into_iter().flatten().collect(), &req.objective))
}

/// The unranked rows of each cluster size `i` of `req.ns` for which
/// `select(i)` holds (the others empty), in the order of `req.ns`. The whole
/// request is checked first, whatever is selected. Each size's rows depend
/// on that size alone: [`rank`] of their concatenation is [`plan`].
pub fn plan_units(
    req: &PlanRequest,
    select: &dyn Fn(usize) -> bool,
    simulate: &dyn Fn(&Study, &Options) -> Outcome,
) -> Result<Vec<Vec<PlanRow>>, PlanError> {
    if req.objective == Objective::Cost && (req.costs.iterations_per_run.is_none() || req.time_unit.is_none()) {
        return Err(PlanError::CostNeedsRun);
    }
    let mut units = Vec::new();
    for (i, unit) in studies(req)?.into_iter().enumerate() {
        units.push(if select(i) {
            unit_rows(req, unit, simulate)?
        } else {
            Vec::new()
        });
    }
    Ok(units)
}

/// Ranks the rows of every cluster size, in the order of `req.ns`: best
/// first by the objective (a stable sort, so ties keep that order).
pub fn rank(mut rows: Vec<PlanRow>, objective: &Objective) -> Vec<PlanRow> {
    let maximise = objective.maximise();
    rows.sort_by(|a, b| {
        let order = a.objective.total_cmp(&b.objective);
        let order = if maximise { order.reverse() } else { order };
        // Ties (e.g. crc and ignore under `fixed`): the exact, cheaper, smaller configuration first.
        order
            .then(b.scheme.exact_rank().cmp(&a.scheme.exact_rank()))
            .then(a.load.total_cmp(&b.load))
            .then(a.n.cmp(&b.n))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    rows
}

/// The rows of one cluster size, unranked, with their cost columns.
fn unit_rows(
    req: &PlanRequest,
    Unit { n, factor, studies, .. }: Unit,
    simulate: &dyn Fn(&Study, &Options) -> Outcome,
) -> Result<Vec<PlanRow>, PlanError> {
    let mut rows = Vec::new();
    let show_buckets = compares_buckets(req);
    for (aggregation, study) in &studies {
        let start = rows.len();
        study_rows(req, n, factor, study, simulate, &mut rows)?;
        let buckets = study
            .aggregation()
            .collective()
            .map(|c| c.buckets)
            .filter(|_| show_buckets);
        let gpus = study.parallel().map(|p| p.layout.ranks());
        for r in &mut rows[start..] {
            r.aggregation = *aggregation;
            r.buckets = buckets;
            r.gpus = gpus;
            match (aggregation, buckets) {
                (Some(a), Some(k)) => r.configuration = format!("{} ({a}, {k} buckets)", r.configuration),
                (Some(a), None) => r.configuration = format!("{} ({a})", r.configuration),
                _ => {}
            }
        }
    }
    // Where uncoded is a candidate, the codes at s = 0 (or k = n) are it
    // under another name: one row says it.
    if req.schemes.contains(&SchemeKind::Uncoded) {
        rows.retain(|r| r.scheme == SchemeKind::Uncoded || !r.is_uncoded());
    }
    for r in &mut rows {
        cost_columns(r, req);
    }
    Ok(rows)
}

/// The rows of one study of a cluster size, unranked, into `rows`.
fn study_rows(
    req: &PlanRequest,
    n: usize,
    factor: f64,
    study: &Study,
    simulate: &dyn Fn(&Study, &Options) -> Outcome,
    rows: &mut Vec<PlanRow>,
) -> Result<(), PlanError> {
    let laws: Option<Vec<_>> = if req.exact && req.decoder == Decoder::Threshold {
        study.schemes().iter().map(|s| study.exact_law(s)).collect()
    } else {
        None
    };
    let traffic = crate::engine::collective::traffic(study);
    let gradients_of = |s: &Scheme| {
        let i = study
            .schemes()
            .iter()
            .position(|x| x == s)
            .expect("a scheme of the study");
        traffic[i]
    };
    let row = |s: &Scheme, objective, ci: Option<(f64, f64)>, mean, p99, speedup, method| PlanRow {
        rank: 0,
        n,
        scheme: s.kind(),
        s: s.s(),
        m: s.m(),
        k: s.k(),
        objective,
        objective_low: ci.map(|c| c.0),
        objective_high: ci.map(|c| c.1),
        mean,
        p99,
        speedup,
        load: s.load() * factor,
        message: s.message(),
        method,
        parts: s.parts(),
        configuration: match s.split() {
            Some(_) => format!("{s} (k={})", s.k()),
            None => s.to_string(),
        },
        timeout: s.deadline(),
        collective_gradients: gradients_of(s),
        ..PlanRow::default()
    };
    match (laws, study.exact_law(&study.baseline())) {
        (Some(laws), Some(base)) => {
            for (s, law) in study.schemes().iter().zip(&laws) {
                let objective = match req.objective {
                    Objective::Mean | Objective::Cost => law.mean(),
                    Objective::Quantile(q) => law.quantile(q),
                    Objective::Deadline(t) => law.cdf(t),
                };
                let mean = law.mean();
                let speedup = Some(base.mean() / mean).filter(|r| r.is_finite());
                rows.push(row(s, objective, None, mean, law.quantile(0.99), speedup, "exact"));
            }
        }
        _ => {
            let deadline = match req.objective {
                Objective::Deadline(t) => Some(t),
                _ => None,
            };
            let outcome = simulate(
                study,
                &Options {
                    deadline,
                    ..Options::default()
                },
            );
            // Where the exact mean is infinite the sample mean estimates
            // nothing: it is inf, as in `run`'s rows.
            let mean_of = |s: &Scheme, summary: &Summary| {
                if study.mean_is_infinite(s) {
                    f64::INFINITY
                } else {
                    summary.mean.mean
                }
            };
            let widen = data_variance(req, study, simulate, &deadline)?;
            let base_mean = mean_of(&study.baseline(), &outcome.baseline);
            for (i, (s, summary)) in study.schemes().iter().zip(&outcome.configs).enumerate() {
                let mean = mean_of(s, summary);
                let (objective, ci) = match req.objective {
                    Objective::Mean | Objective::Cost if mean.is_infinite() => (mean, None),
                    _ => objective_of(&req.objective, summary),
                };
                let ci = match (ci, widen.as_ref()) {
                    (Some(ci), Some(var)) => Some(widened(objective, ci, var[i], &req.objective)),
                    (ci, _) => ci,
                };
                let speedup = Some(base_mean / mean).filter(|r| r.is_finite());
                rows.push(row(s, objective, ci, mean, summary.quantiles[2], speedup, "simulated"));
            }
        }
    }
    Ok(())
}

fn objective_of(objective: &Objective, s: &Summary) -> (f64, Option<(f64, f64)>) {
    match *objective {
        Objective::Mean | Objective::Cost => (s.mean.mean, s.mean.ci95),
        Objective::Quantile(q) => {
            let i = Objective::quantile_index(q);
            (s.quantiles[i], Some(s.quantile_ci95[i]))
        }
        Objective::Deadline(_) => {
            let p = s.within_deadline.expect("the deadline was counted");
            (p, Some(proportion_ci(p, s.trials)))
        }
    }
}

mod bootstrap;
mod error;
mod objective;
mod recommend;
pub mod shard;
use bootstrap::{data_variance, widened};
pub use error::PlanError;
pub use objective::Objective;
use objective::cost_columns;
pub use recommend::recommendation;

mod candidates;
use candidates::candidates;

#[cfg(test)]
mod tests;
