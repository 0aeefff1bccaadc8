//! Gradient descent on the simulated timeline: each configuration of a
//! study trains the same model on the same data, and each iteration's
//! worker times, and so which results the master uses, come from the
//! engine.
//!
//! The training rows are cut into the scheme's data partitions (n, a
//! custom code's P columns, or mds's k row blocks), contiguous ranges of
//! the rows as the seeded split shuffled them, and placed as the scheme
//! places them: worker i computes the partial gradients of the partitions
//! in the support of row i of the encoding matrix B (frc's groups, crc's
//! cyclic placement, the code's support for approx-regular and custom), or
//! its own partition (uncoded, ignore, timeout and the strategies). An
//! iteration of a synchronous configuration:
//!
//! 1. draws the workers' times, and with them the arrivals of their
//!    messages, as `run` does for one iteration (consecutive iterations of
//!    one trial, so stragglers persist where the law says so);
//! 2. finds the messages the master uses: the shortest prefix in arrival
//!    order that satisfies the recovery rule (any k; one worker of each frc
//!    group), or that the real code decodes (`--decoder rank`, custom
//!    codes); for a deadline, those arrived when the master proceeds; for
//!    k-batch-sync, the K mini-batches;
//! 3. forms the update from the partial gradients those messages carry:
//!    - the codes (frc, crc, comm-efficient, approx-regular, custom): each
//!      used worker's message is its row of B applied to its partitions'
//!      gradients (for comm-efficient, to their m coordinate blocks), and
//!      the master applies the decoding matrix A of `Code::decode`, the
//!      minimum-norm least-squares solution of A·B_F = T: the exact sum of
//!      the partial gradients for an exact code, the optimal least-squares
//!      approximation of it for an inexact one;
//!    - mds (Lee et al. 2017) codes the matrix–vector product X·w: worker
//!      i sends Σ_j G\[i, j\]·X_j·w over the k row blocks X_j, the master
//!      decodes every X_j·w and forms the gradient Σ_j X_jᵀ·ℓ'(X_j·w, y_j)/N
//!      itself (a generalised linear model's gradient is a function of X·w;
//!      the time of that last product is not modelled, `--decode-time` may
//!      hold it);
//!    - uncoded and the strategies whose master ends with every partition
//!      (speculative copies, multi-message, the partial-straggler codes):
//!      the sum of every partial gradient;
//!    - `ignore` and `timeout`: the sum over the partitions of the used
//!      workers, scaled by n/|F| (n/(n − s) for ignore), an unbiased
//!      estimate of the full gradient when every worker is equally likely
//!      to be used;
//!    - k-batch-sync: each mini-batch is its worker's partition (gcsim's
//!      load 1, the uncoded share), so the update is n/K times the sum over
//!      the K mini-batches of their partitions' gradients (a worker that
//!      computed two counts twice);
//! 4. steps w ← w − η_t·(g + λw), η_t the schedule's step.
//!
//! The asynchronous strategies (k-async, k-batch-async) run their own
//! timeline ([`TrialPlan::run_asynchronous`]): an update per K gradients,
//! each computed on the model its worker pulled, so the update is n/K times
//! the sum of the stale partial gradients g_w(w_v), in worker order.
//! Their "iterations" are updates.
//!
//! The synchronous configurations of one repeat share each iteration's
//! draws (common random numbers), and so do the exact ones' iterates: the
//! exact full gradient is the same whatever the scheme, up to rounding.

use std::ops::Range;

use rayon::prelude::*;

use super::problem::metric;
use super::setup::Setup;
use crate::engine::trial::{RulePath, Sampling, Scratch, TrialPlan, Update};
use crate::param::{Described, Naming, Param, keys};
use crate::scheme::{Scheme, Strategy};
use crate::study::Study;

/// One run of one configuration: entry t is the state after t iterations
/// (entry 0 is the start, w = 0 at time 0).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trajectory {
    /// Wall-clock time, in the unit of the worker times.
    pub time: Vec<f64>,
    /// The training objective f(w).
    pub loss: Vec<f64>,
    /// The test metric (accuracy or mean squared error).
    pub metric: Vec<f64>,
    /// The iteration whose loss was not finite or above
    /// [`DIVERGENCE_FACTOR`] times the loss at the start, where training
    /// diverged (the trajectory stops before it).
    pub diverged: Option<u64>,
    /// Whether an iteration never ended (a code that cannot decode): the
    /// trajectory stops before it.
    pub stalled: bool,
}

/// Every run of one configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Trained {
    /// The configuration.
    pub scheme: Scheme,
    /// One trajectory per repeat, in order.
    pub runs: Vec<Trajectory>,
}

/// How the master forms the update of one configuration (see the module
/// notes).
#[derive(Debug, Clone)]
enum Aggregate {
    /// The sum of every partial gradient.
    Full,
    /// The used workers' partitions, scaled by n/|F|.
    Scaled,
    /// Decoded by the real code.
    Coded(Box<Coded>),
    /// n/K times the K mini-batches' gradients.
    Batches {
        /// K.
        k: usize,
    },
    /// An asynchronous strategy.
    Async {
        /// K.
        k: usize,
    },
}

/// Every configuration's runs from each repeat's trajectories (in repeat
/// order, each in the study's order of configurations).
pub fn gather(study: &Study, per_repeat: Vec<Vec<Trajectory>>) -> Vec<Trained> {
    let mut trained: Vec<Trained> = study
        .schemes()
        .iter()
        .map(|&scheme| Trained {
            scheme,
            runs: Vec::with_capacity(per_repeat.len()),
        })
        .collect();
    for runs in per_repeat {
        for (t, run) in trained.iter_mut().zip(runs) {
            t.runs.push(run);
        }
    }
    trained
}

/// How many times its loss at the start (w = 0) a run's training loss may
/// reach before the run counts as diverged. Exact gradient descent at a
/// step below 2/L never raises the loss, and the inexact and stale rules
/// raise it by a noise of the gradient's size, while a step too large
/// multiplies the least-squares loss by up to (ηL − 1)² an iteration, so
/// such a run passes the factor within a few iterations instead of after
/// the hundreds it takes to overflow.
pub const DIVERGENCE_FACTOR: f64 = 1e6;

/// Most iterations (updates) of one training run.
pub const MAX_TRAIN_ITERATIONS: u64 = 1_000_000;

/// Most recorded points (configurations × repeats × iterations) of one
/// training study: three numbers each, 240 MB at most.
pub(crate) const MAX_POINTS: u64 = 10_000_000;

/// Most model coefficients an asynchronous run keeps (every version a
/// stale gradient may be computed on): 256 MiB per repeat in progress.
pub(crate) const MAX_MODEL_VALUES: u64 = 1 << 25;

/// Most repeats (independent runs per configuration) of one training study.
pub const MAX_REPEATS: u64 = 100_000;

/// Why a study cannot be trained. Parameters are named by their keys; a
/// front end renders them with its own names through [`Described`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainError {
    /// Fewer training rows than some scheme's partitions.
    #[error("{}", self.describe(&keys))]
    TooFewRows {
        /// The configuration.
        scheme: String,
        /// Its partitions.
        partitions: usize,
        /// Training rows.
        rows: usize,
    },
    /// The iterations or the points recorded are over the limits.
    #[error("{}", self.describe(&keys))]
    TooLarge {
        /// Iterations per run.
        iterations: u64,
        /// Repeats.
        repeats: u64,
        /// Configurations.
        configs: usize,
        /// Their product.
        points: u128,
    },
    /// An asynchronous run would keep too many models.
    #[error("{}", self.describe(&keys))]
    TooManyModels {
        /// Iterations per run.
        iterations: u64,
        /// Coefficients per model.
        coefficients: usize,
    },
    /// A scheme with no training rule.
    #[error("{0}")]
    Unsupported(String),
}

impl Described for TrainError {
    fn describe(&self, name: Naming) -> String {
        match self {
            TrainError::TooFewRows {
                scheme,
                partitions,
                rows,
            } => format!(
                "{scheme} cuts the training rows into {partitions} partitions but the training set has {rows} rows; use more data, a smaller {} or fewer workers",
                name(Param::TestFraction)
            ),
            TrainError::TooLarge {
                iterations,
                repeats,
                configs,
                points,
            } => {
                let (it, rep) = (name(Param::Iterations), name(Param::Repeats));
                format!(
                    "{it} {iterations} with {rep} {repeats} and {configs} configurations records {points} points; the most is {MAX_POINTS} (and at most {MAX_TRAIN_ITERATIONS} iterations): lower {it} or {rep}"
                )
            }
            TrainError::TooManyModels {
                iterations,
                coefficients,
            } => {
                let it = name(Param::Iterations);
                format!(
                    "an asynchronous run keeps every model its workers may still compute on: {it} {iterations} of {coefficients} coefficients is over {MAX_MODEL_VALUES} values; lower {it}"
                )
            }
            TrainError::Unsupported(m) => m.clone(),
        }
    }
}

/// Per-thread buffers of one repeat.
struct Work {
    grad: Vec<f64>,
    /// One partition's gradient.
    one: Vec<f64>,
    /// Used workers, in arrival order.
    used: Vec<usize>,
    /// Payloads, C × len, column-major.
    payloads: Vec<f64>,
    /// Used workers' messages, |F| × len.
    messages: Vec<f64>,
    /// A decoded payload.
    decoded: Vec<f64>,
}

/// Gradient descent of every configuration of `study` on `setup`: its
/// trials are the repeats, its iterations each run's iterations.
/// `progress(repeats_done)` is called as repeats finish.
pub struct Trainer<'a> {
    study: &'a Study,
    setup: &'a Setup,
    aggregates: Vec<Aggregate>,
    /// Each configuration's partitions of the training rows.
    partitions: Vec<Vec<Range<usize>>>,
    /// The synchronous configurations' study and its plan, and their
    /// indices among the study's schemes.
    sync: Option<(Study, TrialPlan, Vec<usize>)>,
    /// The asynchronous configurations' study and its plan, and their
    /// indices.
    asynchronous: Option<(Study, TrialPlan, Vec<usize>)>,
}

/// The training rows cut into `parts` contiguous ranges whose sizes differ
/// by at most one.
pub fn partition(rows: usize, parts: usize) -> Vec<Range<usize>> {
    (0..parts).map(|j| j * rows / parts..(j + 1) * rows / parts).collect()
}

impl<'a> Trainer<'a> {
    /// Checks that every configuration of `study` can train on `setup`.
    pub fn new(study: &'a Study, setup: &'a Setup) -> Result<Self, TrainError> {
        let iterations = study.iterations();
        let configs = study.schemes().len();
        let points = u128::from(iterations + 1) * u128::from(study.trials()) * configs as u128;
        if iterations > MAX_TRAIN_ITERATIONS || points > u128::from(MAX_POINTS) {
            return Err(TrainError::TooLarge {
                iterations,
                repeats: study.trials(),
                configs,
                points,
            });
        }
        let rows = setup.train.rows();
        let d = setup.train.d;
        let any_async = study
            .schemes()
            .iter()
            .any(|s| matches!(s.strategy(), Some(Strategy::Async { .. })));
        if any_async && u128::from(iterations + 1) * d as u128 > u128::from(MAX_MODEL_VALUES) {
            return Err(TrainError::TooManyModels {
                iterations,
                coefficients: d,
            });
        }
        let mut aggregates = Vec::with_capacity(configs);
        let mut partitions = Vec::with_capacity(configs);
        for s in study.schemes() {
            let aggregate = aggregate_of(study, s, d, rows)?;
            let parts = match &aggregate {
                Aggregate::Coded(c) if matches!(c.payload, Payload::Predictions) => s.k(),
                Aggregate::Coded(c) => c.code.encoding().ncols() / c.code.target().nrows(),
                _ => s.n(),
            };
            if parts > rows {
                return Err(TrainError::TooFewRows {
                    scheme: s.to_string(),
                    partitions: parts,
                    rows,
                });
            }
            partitions.push(partition(rows, parts));
            aggregates.push(aggregate);
        }
        let is_async = |s: &Scheme| matches!(s.strategy(), Some(Strategy::Async { .. }));
        let split = |keep_async: bool| {
            let indices: Vec<usize> = (0..configs)
                .filter(|&i| is_async(&study.schemes()[i]) == keep_async)
                .collect();
            study.restricted(|s| is_async(s) == keep_async).map(|sub| {
                let plan = TrialPlan::with(&sub, RulePath::Events, Sampling::Draws);
                (sub, plan, indices)
            })
        };
        Ok(Self {
            study,
            setup,
            aggregates,
            partitions,
            sync: split(false),
            asynchronous: split(true),
        })
    }

    /// Every configuration's runs, in the study's order; the repeats run in
    /// parallel, and the result does not depend on the thread count.
    pub fn run(&self, progress: &(dyn Fn(u64) + Sync)) -> Vec<Trained> {
        gather(self.study, self.run_repeats(0..self.study.trials(), progress))
    }

    /// Repeats `repeats` of every configuration, repeat by repeat (each
    /// repeat's trajectories in the study's order of configurations): a
    /// repeat's runs depend on its index alone, so these are the runs a
    /// whole study gives it (the shards of `train --shard`).
    pub fn run_repeats(&self, repeats: Range<u64>, progress: &(dyn Fn(u64) + Sync)) -> Vec<Vec<Trajectory>> {
        repeats
            .into_par_iter()
            .map(|r| {
                let runs = self.repeat(r);
                progress(1);
                runs
            })
            .collect()
    }

    fn work(&self) -> Work {
        let d = self.setup.train.d;
        Work {
            grad: vec![0.0; d],
            one: vec![0.0; d],
            used: Vec::new(),
            payloads: Vec::new(),
            messages: Vec::new(),
            decoded: Vec::new(),
        }
    }

    /// Repeat `r` of every configuration.
    fn repeat(&self, r: u64) -> Vec<Trajectory> {
        let configs = self.study.schemes().len();
        let mut runs = vec![Trajectory::default(); configs];
        let mut work = self.work();
        if let Some((sub, plan, indices)) = &self.sync {
            self.synchronous(sub, plan, indices, r, &mut work, &mut runs);
        }
        if let Some((sub, plan, indices)) = &self.asynchronous {
            let mut scratch = plan.scratch();
            for (slot, &i) in indices.iter().enumerate() {
                runs[i] = self.asynchronous(sub, plan, slot, i, r, &mut scratch, &mut work);
            }
        }
        runs
    }

    /// The state at the start: w = 0, time 0.
    fn start(&self) -> (Vec<f64>, Trajectory) {
        let w = vec![0.0; self.setup.train.d];
        let mut run = Trajectory::default();
        self.record(&mut run, 0.0, &w);
        (w, run)
    }

    /// Appends the state (time, loss, metric) after an iteration; false,
    /// and the run marked diverged, if the loss is not finite or above
    /// [`DIVERGENCE_FACTOR`] times the loss at the start (entry 0): a step
    /// too large for the curvature multiplies the loss each iteration, and
    /// waiting for it to overflow would report a loss of 10¹³⁷ as finished.
    fn record(&self, run: &mut Trajectory, time: f64, w: &[f64]) -> bool {
        let s = self.setup;
        let loss = s.objective.loss(&s.train, w);
        let blown_up = run.loss.first().is_some_and(|&start| loss > DIVERGENCE_FACTOR * start);
        if !loss.is_finite() || blown_up || w.iter().any(|x| !x.is_finite()) {
            run.diverged = Some(run.time.len() as u64);
            return false;
        }
        run.time.push(time);
        run.loss.push(loss);
        run.metric.push(metric(s.problem, &s.test, w));
        true
    }

    /// w ← w − η_t·(grad + λw).
    fn step(&self, w: &mut [f64], grad: &mut [f64], t: u64) {
        let s = self.setup;
        s.objective.add_l2(w, grad);
        let eta = s.schedule.at(s.step, t);
        w.iter_mut().zip(grad.iter()).for_each(|(x, g)| *x -= eta * g);
    }

    /// The synchronous configurations of repeat `r`, in lockstep on each
    /// iteration's draws.
    fn synchronous(
        &self,
        sub: &Study,
        plan: &TrialPlan,
        indices: &[usize],
        r: u64,
        work: &mut Work,
        runs: &mut [Trajectory],
    ) {
        let n = sub.n();
        let slots = plan.slots();
        let mut scratch = plan.scratch();
        let mut out = vec![0.0; slots];
        let mut arrivals = vec![0.0; slots * n];
        let mut models: Vec<(Vec<f64>, f64, bool)> = indices
            .iter()
            .map(|&i| {
                let (w, run) = self.start();
                runs[i] = run;
                (w, 0.0, true)
            })
            .collect();
        for t in 0..sub.iterations() {
            if models.iter().all(|m| !m.2) {
                break;
            }
            let used = plan.run_iteration_observed(sub.seed(), r, t, &mut scratch, &mut out, &mut arrivals);
            for (slot, &i) in indices.iter().enumerate() {
                let (w, time, going) = &mut models[slot];
                if !*going {
                    continue;
                }
                *time += out[slot];
                if !time.is_finite() {
                    runs[i].stalled = true;
                    *going = false;
                    continue;
                }
                let scheme = &self.study.schemes()[i];
                let arrival = &arrivals[slot * n..(slot + 1) * n];
                let counts = &used[slot * n..(slot + 1) * n];
                self.gradient(i, scheme, w, arrival, counts, work);
                self.step(w, &mut work.grad, t);
                *going = self.record(&mut runs[i], *time, w);
            }
        }
    }

    /// The update direction (without the L2 term) of configuration `i` at
    /// `w` into `work.grad`, from its iteration's arrivals or counts.
    fn gradient(&self, i: usize, scheme: &Scheme, w: &[f64], arrival: &[f64], counts: &[u32], work: &mut Work) {
        let parts = &self.partitions[i];
        let n = scheme.n();
        work.grad.fill(0.0);
        match &self.aggregates[i] {
            Aggregate::Full => {
                for rows in parts {
                    self.add_partial(rows.clone(), w, work);
                }
            }
            Aggregate::Scaled => {
                self.used_set(scheme, None, arrival, &mut work.used);
                work.used.sort_unstable();
                let scale = n as f64 / work.used.len() as f64;
                for q in 0..work.used.len() {
                    let j = work.used[q];
                    self.add_partial(parts[j].clone(), w, work);
                }
                work.grad.iter_mut().for_each(|g| *g *= scale);
            }
            Aggregate::Batches { k } => {
                let scale = n as f64 / *k as f64;
                for (j, &c) in counts.iter().enumerate() {
                    for _ in 0..c {
                        self.add_partial(parts[j].clone(), w, work);
                    }
                }
                work.grad.iter_mut().for_each(|g| *g *= scale);
            }
            Aggregate::Coded(coded) => {
                self.used_set(scheme, Some(coded), arrival, &mut work.used);
                self.decoded(coded, parts, w, work);
            }
            Aggregate::Async { .. } => unreachable!("asynchronous configurations run their own timeline"),
        }
    }

    /// Adds the partial gradient of the rows `rows` at `w` to `work.grad`.
    fn add_partial(&self, rows: Range<usize>, w: &[f64], work: &mut Work) {
        work.one.fill(0.0);
        self.setup
            .objective
            .add_partial_gradient(&self.setup.train, rows, w, &mut work.one);
        work.grad.iter_mut().zip(&work.one).for_each(|(g, p)| *g += p);
    }

    /// Repeat `r` of the asynchronous configuration `i`, slot `slot` of
    /// its plan.
    #[allow(clippy::too_many_arguments)]
    fn asynchronous(
        &self,
        sub: &Study,
        plan: &TrialPlan,
        slot: usize,
        i: usize,
        r: u64,
        scratch: &mut Scratch,
        work: &mut Work,
    ) -> Trajectory {
        let Aggregate::Async { k } = self.aggregates[i] else {
            unreachable!("an asynchronous configuration")
        };
        let parts = &self.partitions[i];
        let n = parts.len();
        let scale = n as f64 / k as f64;
        let (w0, mut run) = self.start();
        // Every model so far: a gradient may be computed on any of them.
        let mut models = vec![w0];
        let iterations = sub.iterations();
        let mut gradients: Vec<(usize, u64)> = Vec::with_capacity(k);
        plan.run_asynchronous(slot, sub.seed(), r, scratch, |update: Update| {
            gradients.clear();
            gradients.extend_from_slice(update.gradients);
            gradients.sort_unstable();
            work.grad.fill(0.0);
            for &(worker, version) in &gradients {
                let w = &models[version as usize];
                work.one.fill(0.0);
                self.setup
                    .objective
                    .add_partial_gradient(&self.setup.train, parts[worker].clone(), w, &mut work.one);
                work.grad.iter_mut().zip(&work.one).for_each(|(g, p)| *g += p);
            }
            work.grad.iter_mut().for_each(|g| *g *= scale);
            let mut w = models.last().expect("model 0 at least").clone();
            self.step(&mut w, &mut work.grad, update.index);
            let going = self.record(&mut run, update.at, &w);
            models.push(w);
            going && update.index + 1 < iterations
        });
        run
    }
}

mod decode;
use decode::{Coded, Payload, aggregate_of};
