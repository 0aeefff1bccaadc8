//! One trial: draw the workers' times once, then evaluate every configuration
//! of the study on those draws (common random numbers).
//!
//! Sampling is separate from evaluation, and comes in two kinds:
//!
//! - [`Sampling::Draws`], the general path: one draw per worker (per unit of
//!   work under `additive`, unit-major: every worker's first unit, then every
//!   worker's second, …), in worker order. A worker of a straggler
//!   mixture draws its slow or normal state first, once per iteration, and
//!   every draw it makes in the iteration (units, mini-batches, copies) is
//!   in that state (see `laws::stateful`).
//! - [`Sampling::OrderStatistics`], for i.i.d. workers whose law is an
//!   increasing function g of a standard exponential (exp: e/μ; shifted-exp:
//!   shift + e/μ; Pareto: x_m·e^(e/α); Weibull: λ·e^(1/k), read from a table
//!   where it holds (see [`crate::dist::HazardQuantile::power`]); log-normal:
//!   e^(μ + σ·Φ⁻¹(1 − e^(−e))), Φ⁻¹ by Wichura's AS 241, read from a table
//!   for σ ≤ 2 (see [`crate::dist::HazardQuantile::log_normal`]); the bootstrap
//!   from a trace: its ⌊M(1 − e^(−e))⌋-th smallest of M values) under a
//!   monotone load model. Rényi's
//!   representation (David & Nagaraja 2003, §2.5) gives the sorted standard
//!   exponentials directly, E_(j) = Σ_{i≤j} Z_i/(n−i+1) with Z_i i.i.d.
//!   Exp(1), in O(n) and without a sort; where a rule needs to know which
//!   worker finished (the event walk), ranks are assigned to workers by a
//!   uniformly random permutation, which is independent of the values for
//!   i.i.d. workers. Both paths give the same joint law of the worker
//!   times; the tests check it. frc's groups need no permutation there:
//!   the maximum over groups of the group minimum has a closed-form law, and
//!   is drawn as the quantile transform of the top order statistic E_(n)
//!   (see `max_of_group_minima`), exact in law for each configuration and
//!   comonotone with the uncoded time.
//!
//! Only the top [`top_block`]`(n)` order statistics (about half the workers)
//! are drawn in every trial, because a configuration that tolerates s
//! stragglers reads E_(n−s) and above. The lowest of them, E_(k₀) with
//! k₀ = n − B + 1, is drawn by its quantile at a standard exponential,
//! read from a table of its cumulative hazard (the binomial tail, see
//! [`crate::dist::HazardQuantile::order_statistic`]); the rest follow by
//! Rényi spacings, E_(j+1) = E_(j) + Z/(n−j)
//! (memorylessness). Order statistics below k₀ (deep tolerances, the event
//! walk) are drawn on demand, top down: given U_(k+1), the
//! k lower uniforms are i.i.d. on (0, U_(k+1)), so
//! ln U_(k) = ln U_(k+1) − Z/k, and E_(k) = −ln(1 − U_(k)). Every trial draws
//! the same variates in the same order (the top block, then as deep as it is
//! needed), so a configuration's values do not depend on what else the study
//! contains; the permutation for ranks has a stream of its own for the same
//! reason. A study whose every slot reads only the largest (deadlines,
//! frc's groups, s = 0, the uncoded baseline) draws a block of one, E_(n)
//! by its quantile (see `TrialPlan::plan_block`): the same law, other
//! samples than in a study that reads deeper.
//!
//! Under `fixed`, `scaled` and `affine` a worker's time is an increasing
//! function of one draw, so one ordering serves every configuration: the k-th
//! order statistic of ℓ·X is ℓ times that of X, and max-of-group-minima
//! commutes with any increasing transform. Under `additive` each distinct
//! load gets its own worker times and its own sort on the draw path. With
//! exponential units and whole loads (see `laws::erlang_loads`) a worker's
//! time at load ℓ is ℓ·shift + Gamma(ℓ, μ), an increasing function of one
//! standard exponential (its Erlang quantile,
//! [`crate::dist::HazardQuantile`]), so every load reads the same order
//! statistics as under the monotone models: each configuration's law is
//! exact, and configurations of different loads are paired through the
//! shared order statistics instead of through shared units. Exponential
//! transfer times on dedicated links from exponential workers make each
//! arrival hypoexponential, read the same way (see
//! `laws::hypoexponential_arrivals`); a deadline reads the fastest
//! worker's time, drawn below the top block from a stream of its own given
//! the block's lowest value (see `TrialPlan::fastest_standard`).
//! Speculative copies from one law read the sorted times by rank, and
//! K-async on exponential workers the K-th of them (see `strategy`).

use rand::RngExt;
use rand_distr::{Distribution, Exp1, Gamma};

use super::sort::{SortBuffers, argsort_floats, sort_floats};
use super::timeline::{completion_by_events, fast, with_deadline};
use crate::collective::{BucketCost, Collective};
use crate::comm::{Comm, Transfer};
use crate::dist::{Base, HazardQuantile};
use crate::load::LoadModel;
use crate::rng::trial_rng;
use crate::scheme::{Rule, Scheme, Strategy};
use std::sync::Arc;

use crate::codes::Code;
use crate::study::{Decoder, Study, Workers};

mod asynchronous;
mod bisection;
mod classes;
mod compute_rows;
mod deadlines;
mod draws;
mod empirical;
mod evaluate;
mod hybrid;
mod identities;
mod lanes;
mod laws;
mod rows;
mod sample;
mod scratch;
mod slots;
mod spacings;
mod strategy;
mod tensor;

use super::kernels::{
    additive_time, descending_run, gather_top, max_of_group_minima, merge_runs, merge_runs_top, neg_ln_one_minus_exp,
    place_classes, prefix_sum, shuffle,
};
pub use asynchronous::Update;
use bisection::Bisection;
pub use bisection::bisection_apply;
use classes::ClassLaws;
use deadlines::Deadline;
use empirical::Empirical;
use hybrid::Hybrid;
pub(crate) use hybrid::TrialTotals;
pub use hybrid::{PipelineTotals, SumTotals};
use laws::stateful;
use laws::{SlotLaw, Standard};
pub use rows::StepRows;
use sample::{Carried, split_law};
pub use sample::{needs_identities, order_statistics_apply, top_block};
pub use scratch::Scratch;
use slots::{codes, evals, load_groups, replay_sorted};
pub use spacings::spacings_apply;
use strategy::Copies;
pub use strategy::async_reads_order_statistics;

/// How rules are evaluated on a trial's worker times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulePath {
    /// Closed forms: k-th order statistic, max of group minima.
    Fast,
    /// The general discrete-event walk over finish events.
    Events,
}

/// How a trial's worker times are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// One draw per worker, in worker order.
    Draws,
    /// The order statistics directly, with ranks assigned by a random
    /// permutation when needed (see [`order_statistics_apply`]).
    OrderStatistics,
    /// The whole sample sorted, by Rényi's spacings from the bottom, for
    /// messages of a constant transfer time (see [`spacings_apply`]).
    Spacings,
    /// For messages of a constant transfer time where every rule reads the
    /// top block: the top block, and below it the fastest and only the
    /// order statistics a shared link's queue cannot skip, by bisection
    /// (see [`bisection_apply`]).
    Bisection,
}

#[derive(Debug, Clone)]
struct Eval {
    slot: usize,
    load: f64,
    rule: Rule,
    /// For a group rule, the index of its size in its class's `group_sizes`.
    group: usize,
    /// Each worker's load, where workers' loads differ (a custom code whose
    /// rows have different supports); `load` is then the largest.
    worker_loads: Option<Arc<[f64]>>,
    /// The deadline after which the master proceeds with the arrived
    /// messages (see [`super::timeline::with_deadline`]).
    deadline: Option<f64>,
    /// The timeline where it is not the rule's (see [`strategy`]).
    strategy: Option<Strategy>,
}

/// A load group: the configurations that share worker times, all of them under a monotone
/// load model, those with the same load under `additive`.
#[derive(Debug, Clone)]
struct LoadGroup {
    load: f64,
    evals: Vec<Eval>,
    needs_sort: bool,
    /// Where the group's k-of-n rules all read the same k (one
    /// configuration under `additive`): that k, whose order statistic a
    /// selection finds without sorting.
    only_k: Option<usize>,
    /// The distinct group sizes of its group rules (frc), for
    /// [`fast::groups_all`].
    group_sizes: Vec<usize>,
}

/// What one trial computes: the iteration time of every slot. Slots are the
/// study's schemes in order, then the uncoded baseline.
#[derive(Debug, Clone)]
pub struct TrialPlan {
    n: usize,
    workers: Workers,
    model: LoadModel,
    units: usize,
    load_groups: Vec<LoadGroup>,
    slots: usize,
    pub(crate) path: RulePath,
    sampling: Sampling,
    /// Each slot's load.
    slot_loads: Vec<f64>,
    /// What order-statistic sampling needs.
    order: OrderStatisticSampler,
    /// How results reach the master and are decoded.
    delivery: Delivery,
    /// Whether a slot runs a strategy's timeline, which draws beyond the
    /// trial's first draws.
    has_strategy: bool,
    /// Consecutive iterations per trial.
    iterations: u64,
    /// Whether the workers carry a state (a straggler mixture, persistence,
    /// groups): then every draw of a worker within an iteration is in its state.
    stateful: bool,
    /// A replayed trace's steps with their times sorted, step by step, where
    /// a trial's times are a whole step (n is the trace's workers): a k-of-n
    /// rule reads them instead of sorting the step in every trial.
    replay_sorted: Option<Arc<Vec<f64>>>,
    /// Each start step's values, where a trial's values depend on its
    /// replayed start step alone (see [`rows`]).
    step_rows: Option<Arc<StepRows>>,
    /// The ranges below the top block and the queues, by
    /// [`Sampling::Bisection`].
    bisection: Option<Arc<Bisection>>,
    /// A hybrid-parallel job's pipelines, which replace the rules'
    /// evaluation.
    hybrid: Option<Arc<Hybrid>>,
}

/// What drawing a trial's times as order statistics needs (see the module
/// notes).
#[derive(Debug, Clone)]
struct OrderStatisticSampler {
    /// 1/(n−i+1) for i = 1..n: the Rényi spacing weights.
    weights: Vec<f64>,
    /// B, how many of the largest order statistics every trial draws:
    /// [`top_block`]`(n)`, or 1 where every slot reads only the largest
    /// time (see [`TrialPlan::plan_block`]).
    block: usize,
    /// The law of E_(k₀), the lowest of the top B order statistics, as a
    /// function of a standard exponential (none when B = n).
    split: Option<Arc<HazardQuantile>>,
    /// Per slot, the index of its order statistic where that is fixed and in
    /// the top block, or with worker classes in their merged top
    /// (`class_top`) (`u32::MAX` otherwise).
    top_ranks: Vec<u32>,
    /// The first slots' run of ranks down by one ([`descending_run`]).
    top_run: usize,
    /// The evaluations not covered by `top_ranks`.
    other_evals: Vec<Eval>,
    /// Where every slot reads one order statistic of the merged classes'
    /// times (closed forms, k-of-n rules only): how many of the largest to merge.
    class_top: Option<usize>,
    /// The worker law as an increasing function of a standard exponential.
    standard: Standard,
    /// The classes' laws, for a heterogeneous cluster.
    class_laws: Option<ClassLaws>,
    /// The slots with a deadline, and the deadline: their rule's time is
    /// cut short after the law and the load apply.
    deadlines: Vec<Deadline>,
    /// The speculative slots, whose copies run on the order statistics
    /// (see [`strategy::copies_on_order_statistics`]).
    copies: Vec<Copies>,
    /// Each slot's own law, under Erlang loads (see [`laws::erlang_loads`])
    /// or with hypoexponential arrivals (see
    /// [`laws::hypoexponential_arrivals`]); empty otherwise.
    slot_laws: Vec<SlotLaw>,
}

/// How results reach the master, and how it decodes.
#[derive(Debug, Clone)]
struct Delivery {
    /// Communication and decoding time.
    comm: Comm,
    /// Each slot's message size, as a fraction of one gradient.
    messages: Vec<f64>,
    /// Where some slot needs to know which worker finished when (see
    /// [`needs_identities`]), each slot's real code where the master decodes
    /// with it (`None` for the slots that keep their rule).
    codes: Option<Arc<Vec<Option<Code>>>>,
    /// Under an all-reduce collective, the collective and each slot's
    /// bucket cost: the slot's time is the end of its last bucket.
    collective: Option<(Collective, Arc<[BucketCost]>)>,
}

/// Key of the transfer-time stream (XORed with the seed).
const COMM_STREAM: u64 = 0xC0_FFEE_D1CE_5EED;

impl TrialPlan {
    /// The fastest plan for `study`: order statistics where they apply,
    /// closed-form rule evaluations.
    pub fn new(study: &Study) -> Self {
        if study.parallel().is_some() {
            return Self::with(study, RulePath::Events, Sampling::Draws);
        }
        let sampling = if order_statistics_apply(study) {
            Sampling::OrderStatistics
        } else if bisection_apply(study) {
            Sampling::Bisection
        } else if spacings_apply(study) {
            Sampling::Spacings
        } else {
            Sampling::Draws
        };
        Self::with(study, RulePath::Fast, sampling)
    }

    /// The plan of `study` with the given rule path and sampling.
    ///
    /// # Panics
    /// If `sampling` is [`Sampling::OrderStatistics`],
    /// [`Sampling::Spacings`] or [`Sampling::Bisection`] where
    /// [`order_statistics_apply`], [`spacings_apply`] or [`bisection_apply`]
    /// is false.
    pub fn with(study: &Study, path: RulePath, sampling: Sampling) -> Self {
        assert!(
            match sampling {
                Sampling::Draws => true,
                Sampling::OrderStatistics => order_statistics_apply(study),
                Sampling::Spacings => spacings_apply(study),
                Sampling::Bisection => bisection_apply(study),
            },
            "{sampling:?} does not apply to this study (see order_statistics_apply, spacings_apply and bisection_apply)"
        );
        let model = *study.load_model();
        let evals = evals(study, sampling);
        let slots = evals.len();
        let has_strategy = evals.iter().any(|e| e.strategy.is_some());
        let mut load_groups = load_groups(&evals, model);
        let mut slot_loads = vec![0.0; slots];
        for e in &evals {
            slot_loads[e.slot] = e.load;
        }
        load_groups.sort_by(|a, b| a.load.total_cmp(&b.load));
        let n = study.n();
        let messages: Vec<f64> = study
            .schemes()
            .iter()
            .map(Scheme::message)
            .chain(std::iter::once(1.0))
            .collect();
        let slot_laws = if sampling == Sampling::OrderStatistics {
            laws::slot_laws(study, &slot_loads, &messages)
        } else {
            Vec::new()
        };
        let bisection = (sampling == Sampling::Bisection).then(|| {
            let evals: Vec<&Eval> = load_groups.iter().flat_map(|g| &g.evals).collect();
            Arc::new(Bisection::new(n, &evals, model, study.comm(), &messages))
        });
        let mut plan = Self {
            bisection,
            n,
            workers: study.workers().clone(),
            model,
            units: (study.draws_per_trial() / n as u64) as usize,
            load_groups,
            slots,
            path,
            sampling,
            slot_loads,
            has_strategy,
            iterations: study.iterations(),
            stateful: stateful(study.workers()),
            replay_sorted: replay_sorted(study.workers(), n),
            step_rows: None,
            hybrid: None,
            order: OrderStatisticSampler {
                weights: (1..=n).map(|i| 1.0 / (n - i + 1) as f64).collect(),
                top_ranks: Vec::new(),
                top_run: 0,
                other_evals: Vec::new(),
                class_top: None,
                block: top_block(n),
                split: split_law(n, top_block(n)),
                standard: Standard::of(study.workers()).unwrap_or(Standard::Exp { inv_rate: 1.0 }),
                class_laws: ClassLaws::of(study.workers()),
                slot_laws,
                deadlines: Vec::new(),
                copies: Vec::new(),
            },
            delivery: Delivery {
                comm: *study.comm(),
                messages,
                codes: codes(study),
                collective: study.collective_costs().map(|(c, costs)| (c, costs.into())),
            },
        };
        plan.update_sorting();
        plan.step_rows = plan.build_step_rows();
        plan.plan_top();
        if let Some(h) = Hybrid::of(study) {
            // The pipelines sum each stage's gradients themselves.
            plan.units = h.units();
            plan.delivery.collective = None;
            plan.hybrid = Some(Arc::new(h));
        }
        plan
    }

    /// What follows from the rules: which load groups sort, and which slots read
    /// an order statistic of the top block directly.
    fn update_sorting(&mut self) {
        let sort = self.path == RulePath::Fast && self.sampling == Sampling::Draws;
        for c in &mut self.load_groups {
            c.needs_sort = sort && c.evals.iter().any(|e| matches!(e.rule, Rule::KOfN(_)));
            let mut ks = c.evals.iter().filter_map(|e| match e.rule {
                Rule::KOfN(k) if e.strategy.is_none() => Some(k),
                _ => None,
            });
            let first = ks.next();
            c.only_k = first.filter(|&k| ks.all(|j| j == k));
            c.group_sizes.clear();
            for e in &mut c.evals {
                if let Rule::Groups { size } = e.rule {
                    e.group = match c.group_sizes.iter().position(|&g| g == size) {
                        Some(i) => i,
                        None => {
                            c.group_sizes.push(size);
                            c.group_sizes.len() - 1
                        }
                    };
                }
            }
        }
        let top_lo = self.n - top_block(self.n);
        let evals = || self.load_groups.iter().flat_map(|c| &c.evals);
        let k = |e: &Eval| match e.rule {
            Rule::KOfN(k) if e.strategy.is_none() && e.deadline.is_none() => k,
            _ => 0,
        };
        let lowest_k = evals().map(k).min().unwrap_or(self.n);
        self.order.class_top = (self.path == RulePath::Fast && lowest_k >= 1).then(|| self.n - lowest_k + 1);
        if let Some(laws) = &mut self.order.class_laws {
            laws.plan_blocks(self.order.class_top.is_some() && !self.delivery.comm.transfers());
        }
        self.order.top_ranks = vec![u32::MAX; self.slots];
        let classes = self.order.class_laws.is_some();
        self.order.other_evals.clear();
        self.order.deadlines.clear();
        self.order.copies.clear();
        for e in self.load_groups.iter().flat_map(|c| &c.evals) {
            if let Some(t) = e.deadline {
                self.order.deadlines.push(Deadline {
                    slot: e.slot,
                    t,
                    clear_from: f64::INFINITY,
                });
            }
            if let Some(Strategy::Speculative { after, factor }) = e.strategy {
                self.order.copies.push(Copies {
                    slot: e.slot,
                    after,
                    factor,
                });
                continue;
            }
            match e.rule {
                // Classes: every k-of-n rule reads the merged top directly.
                Rule::KOfN(k) if k > top_lo || (classes && self.order.class_top.is_some()) => {
                    self.order.top_ranks[e.slot] = (k - 1) as u32
                }
                _ => self.order.other_evals.push(e.clone()),
            }
        }
        self.order.top_run = descending_run(&self.order.top_ranks);
        self.plan_block();
        self.plan_deadlines();
    }

    /// The same plan with every slot's rule replaced by `f(slot, rule)`: for
    /// alternative decoders, and for checking that a wrong rule is caught.
    pub fn map_rules(mut self, f: impl Fn(usize, Rule) -> Rule) -> Self {
        for group in &mut self.load_groups {
            for e in &mut group.evals {
                e.rule = f(e.slot, e.rule);
            }
        }
        self.update_sorting();
        self.step_rows = None;
        self.step_rows = self.build_step_rows();
        self
    }

    /// How this plan draws worker times.
    pub fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// Number of values one trial produces.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Whether some slot decodes with its code's SVD rank rule
    /// (`--decoder rank`): a trial then costs a Gram–Schmidt pass (and
    /// sometimes an SVD) per such slot, tens of microseconds or more, enough
    /// for the engine to spread one chunk's trials over every core.
    pub(crate) fn decodes_by_rank(&self) -> bool {
        self.delivery
            .codes
            .as_ref()
            .is_some_and(|c| c.iter().any(Option::is_some))
    }

    /// Trial `trial`'s transfer times, where messages take time. They come
    /// from a stream of their own, so that the worker times are those of the
    /// same trial without communication.
    fn fill_transfers(&self, seed: u64, trial: u64, scratch: &mut Scratch) {
        // By order statistics the transfers are in each slot's arrival law;
        // the bisection's fast path adds the constant itself.
        let drawn = match self.sampling {
            Sampling::OrderStatistics => false,
            Sampling::Bisection => self.path == RulePath::Events,
            Sampling::Draws | Sampling::Spacings => true,
        };
        if self.delivery.comm.transfers() && drawn {
            let mut rng = trial_rng(seed ^ COMM_STREAM, trial);
            match self.delivery.comm.transfer {
                Transfer::Constant(tau) => scratch.transfer.fill(tau),
                Transfer::Random(d) => scratch.transfer.iter_mut().for_each(|c| *c = d.sample(&mut rng)),
            }
        }
    }

    /// Runs trial `trial` of seed `seed`, writing each slot's time to
    /// `out`: the iteration's, or the total of the trial's iterations.
    ///
    /// Iteration t of trial i draws from the streams of index i·T + t (T
    /// iterations per trial), so a trial of one iteration is the same draws
    /// as before iterations existed; the workers' states, the placement and
    /// the replayed step carry over from one iteration to the next.
    pub fn run(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        if self.step_rows.is_some() {
            self.copy_step_row(seed, trial, out);
            return;
        }
        let t = self.iterations;
        scratch.carried.iteration = 0;
        if t == 1 {
            self.run_iteration(seed, trial, scratch, out);
            return;
        }
        let mut one = std::mem::take(&mut scratch.iteration_out);
        out.fill(0.0);
        for i in 0..t {
            scratch.carried.iteration = i;
            self.run_iteration(seed, trial * t + i, scratch, &mut one);
            out.iter_mut().zip(&one).for_each(|(o, v)| *o += v);
        }
        scratch.iteration_out = one;
    }

    /// Runs one iteration, whose streams have index `index`.
    fn run_iteration(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        if let Some(h) = &self.hybrid {
            self.run_hybrid(h, (seed, trial), scratch, out, None);
            return;
        }
        self.fill_transfers(seed, trial, scratch);
        match self.sampling {
            Sampling::Draws => self.run_draws(seed, trial, scratch, out),
            Sampling::Spacings => self.run_spacings(seed, trial, scratch, out),
            Sampling::Bisection => self.run_bisection(seed, trial, scratch, out),
            Sampling::OrderStatistics => match &self.order.class_laws {
                Some(laws) => self.run_class_order_statistics(laws, seed, trial, scratch, out),
                None => self.run_order_statistics(seed, trial, scratch, out),
            },
        }
        if self.delivery.comm.decode_time != 0.0 {
            out.iter_mut().for_each(|v| *v += self.delivery.comm.decode_time);
        }
        if let Some((c, costs)) = &self.delivery.collective {
            // The rule's times, kept for `collective_times`; a deadline's
            // participants were counted by `evaluate`.
            scratch.ruled.copy_from_slice(out);
            for ((v, cost), &p) in out.iter_mut().zip(costs.iter()).zip(&scratch.participants) {
                *v = c.finish(*v, cost.of(c, p, self.n));
            }
        }
    }

    /// Runs one iteration of trial `trial` (of one iteration) under a
    /// collective, writing each slot's time to `out`; returns each slot's
    /// time before its collective and its participants (counted for the
    /// deadlines, 0 for the others).
    pub(crate) fn run_collective<'s>(
        &self,
        seed: u64,
        trial: u64,
        scratch: &'s mut Scratch,
        out: &mut [f64],
    ) -> (&'s [f64], &'s [usize]) {
        assert_eq!(self.iterations, 1, "one iteration per trial");
        self.run(seed, trial, scratch, out);
        (&scratch.ruled, &scratch.participants)
    }
}
