//! One trial: draw the workers' times once, then evaluate every configuration
//! of the study on those draws (common random numbers).
//!
//! Sampling is separate from evaluation, and comes in two kinds:
//!
//! - [`Sampling::Draws`], the general path: one draw per worker (per unit of
//!   work under `additive`, unit-major: every worker's first unit, then every
//!   worker's second, …), in worker order.
//! - [`Sampling::OrderStatistics`], for i.i.d. workers whose law is an
//!   increasing function g of a standard exponential (exp: e/μ; shifted-exp:
//!   shift + e/μ; Pareto: x_m·e^(e/α); Weibull: λ·e^(1/k); the bootstrap
//!   from a trace: its ⌊M(1 − e^(−e))⌋-th smallest of M values) under a
//!   monotone load model. Rényi's
//!   representation (David & Nagaraja 2003, §2.5) gives the sorted standard
//!   exponentials directly, E_(j) = Σ_{i≤j} Z_i/(n−i+1) with Z_i i.i.d.
//!   Exp(1), in O(n) and without a sort; where a rule needs to know which
//!   worker finished (frc's groups, the event walk), ranks are assigned to
//!   workers by a uniformly random permutation, which is independent of the
//!   values for i.i.d. workers. Both paths give the same joint law of the
//!   worker times; the tests check it.
//!
//! Only the top [`top_block`]`(n)` order statistics (about half the workers)
//! are drawn in every trial, because a configuration that tolerates s
//! stragglers reads E_(n−s) and above. The lowest of them, E_(k₀) with
//! k₀ = n − B + 1, is −ln W for W = 1 − U_(k₀) ~ Beta(B, k₀) (uniform order
//! statistics, David & Nagaraja §2.3), drawn as a ratio of two Gamma
//! variates; the rest follow by Rényi spacings, E_(j+1) = E_(j) + Z/(n−j)
//! (memorylessness). Order statistics below k₀ (deep tolerances, frc's large
//! groups, the event walk) are drawn on demand, top down: given U_(k+1), the
//! k lower uniforms are i.i.d. on (0, U_(k+1)), so
//! ln U_(k) = ln U_(k+1) − Z/k, and E_(k) = −ln(1 − U_(k)). Every trial draws
//! the same variates in the same order (the top block, then as deep as it is
//! needed), so a configuration's values do not depend on what else the study
//! contains; the permutation for ranks has a stream of its own for the same
//! reason.
//!
//! Under `fixed`, `scaled` and `affine` a worker's time is an increasing
//! function of one draw, so one ordering serves every configuration: the k-th
//! order statistic of ℓ·X is ℓ times that of X, and max-of-group-minima
//! commutes with any increasing transform. Under `additive` each distinct
//! load gets its own worker times and its own sort.

use rand::RngExt;
use rand_distr::{Distribution, Exp1, Gamma};

use super::rng::trial_rng;
use super::sort::{SortBuffers, sort_floats};
use super::timeline::{completion_by_events, fast};
use crate::comm::{Comm, Transfer};
use crate::dist::Base;
use crate::load::LoadModel;
use crate::scheme::{Rule, Scheme};
use std::sync::Arc;

use crate::codes::Code;
use crate::study::{Decoder, Study, Workers};

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
}

#[cfg(test)]
mod tests {
    #[test]
    fn merging_runs_sorts_them() {
        let runs: [&[f64]; 4] = [&[0.5, 1.0, 1.0, 7.0], &[], &[0.1, 1.0, 2.0, 2.0, 9.0, 10.0], &[3.0]];
        let mut src = Vec::new();
        let mut ends = Vec::new();
        for r in runs {
            src.extend_from_slice(r);
            ends.push(src.len());
        }
        let mut expected = src.clone();
        expected.sort_by(f64::total_cmp);
        let mut dst = vec![0.0; src.len()];
        super::merge_runs(&src, &ends, &mut dst, &mut Vec::new());
        assert_eq!(dst, expected);
        let inf = f64::INFINITY;
        for (a, b) in [
            (&[][..], &[1.0][..]),
            (&[2.0], &[]),
            (&[1.0, 3.0], &[2.0]),
            (&[5.0], &[1.0, 2.0, 3.0]),
            // Values equal to the sentinels.
            (&[1.0, 2.0], &[3.0, 4.0, inf, inf, inf, inf, inf, inf, inf, inf]),
            (&[inf, inf], &[0.5, inf]),
            (&[-inf, 0.0, inf], &[-inf, -inf, 1.0]),
            (&[inf], &[inf]),
        ] {
            let mut pad = Vec::new();
            super::merge_two(a, b, &mut pad);
            let mut e: Vec<f64> = a.iter().chain(b).copied().collect();
            e.sort_by(f64::total_cmp);
            assert_eq!(&pad[pad.len() - e.len()..], &e[..], "{a:?} {b:?}");
        }
    }

    #[test]
    fn prefix_sum_is_a_running_sum() {
        for len in [0, 1, 3, 4, 7, 8, 100, 101] {
            let mut v: Vec<f64> = (0..len).map(|i| (i % 7) as f64 + 0.5).collect();
            let expected: Vec<f64> = v
                .iter()
                .scan(0.0, |acc, x| {
                    *acc += x;
                    Some(*acc)
                })
                .collect();
            super::prefix_sum(&mut v);
            assert_eq!(v, expected, "len {len}");
        }
    }
}

#[derive(Debug, Clone)]
struct Eval {
    slot: usize,
    load: f64,
    rule: Rule,
    /// For a group rule, the index of its size in its class's `group_sizes`.
    group: usize,
}

/// Configurations that share worker times: all of them under a monotone
/// load model, those with the same load under `additive`.
#[derive(Debug, Clone)]
struct Class {
    load: f64,
    evals: Vec<Eval>,
    needs_sort: bool,
    /// The distinct group sizes of its group rules (frc), for
    /// [`fast::groups_all`].
    group_sizes: Vec<usize>,
}

/// Per-thread buffers for [`TrialPlan::run`].
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    draws: Vec<f64>,
    times: Vec<f64>,
    sorted: Vec<f64>,
    cum: Vec<f64>,
    order: Vec<usize>,
    ranks: Vec<u32>,
    transfer: Vec<f64>,
    finish: Vec<f64>,
    arrival: Vec<f64>,
    sort: SortBuffers,
    merge: Vec<f64>,
    group_table: Vec<f64>,
    group_times: Vec<f64>,
    group_table_ranks: Vec<u32>,
    group_ranks: Vec<u32>,
    class_next: Vec<usize>,
}

/// What one trial computes: the iteration time of every slot. Slots are the
/// study's schemes in order, then the uncoded baseline.
#[derive(Debug, Clone)]
pub struct TrialPlan {
    n: usize,
    workers: Workers,
    model: LoadModel,
    units: usize,
    classes: Vec<Class>,
    slots: usize,
    path: RulePath,
    sampling: Sampling,
    /// 1/(n−i+1) for i = 1..n: the Rényi spacing weights.
    weights: Vec<f64>,
    /// Gamma(B) and Gamma(k₀) for the lowest of the top B order statistics
    /// (none when B = n).
    split: Option<(Gamma<f64>, Gamma<f64>)>,
    /// Each slot's load.
    slot_loads: Vec<f64>,
    /// Per slot, the index of its order statistic where that is fixed and in
    /// the top block (`u32::MAX` otherwise).
    top_ranks: Vec<u32>,
    /// The evaluations not covered by `top_ranks`.
    other_evals: Vec<Eval>,
    /// The worker law as an increasing function of a standard exponential
    /// (order-statistic sampling only).
    standard: Standard,
    /// The classes' laws, for order-statistic sampling of a heterogeneous
    /// cluster.
    class_laws: Option<ClassLaws>,
    /// Communication and decoding.
    comm: Comm,
    /// Each slot's message size, as a fraction of one gradient.
    messages: Vec<f64>,
    /// Each slot's real code, under the rank decoder.
    codes: Option<Arc<Vec<Code>>>,
}

/// Key of the transfer-time stream (XORed with the seed).
const COMM_STREAM: u64 = 0xC0_FFEE_D1CE_5EED;
/// Fisher–Yates: a uniformly random order of `v`, drawing `i ∈ 0..=k` for
/// k = len−1 down to 1 (every sampler that shuffles draws the same way).
fn shuffle<T>(v: &mut [T], rng: &mut rand_xoshiro::Xoshiro256PlusPlus) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.random_range(0..=i));
    }
}

/// `ranks[i]` ← the class of worker i: classes of `counts` workers in
/// order, or placed uniformly at random with `random`.
fn place_classes(
    ranks: &mut [u32],
    counts: impl Iterator<Item = usize>,
    random: bool,
    rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
) {
    let mut i = 0;
    for (c, m) in counts.enumerate() {
        ranks[i..i + m].fill(c as u32);
        i += m;
    }
    if random {
        shuffle(ranks, rng);
    }
}

/// Key of the stream that assigns ranks to workers (XORed with the seed).
const RANK_STREAM: u64 = 0x4A2C_5EED_0F0F_5EED;

/// How many of the largest order statistics every order-statistic trial
/// draws: the top half of the workers and one more (every s ≤ n/2), at
/// least 32 and at most 1024; the rest are drawn on demand.
pub fn top_block(n: usize) -> usize {
    (n / 2 + 1).clamp(32, 1024).min(n)
}

/// −ln(1 − e^l) for l < 0, accurate at both ends (Mächler 2012).
#[inline]
fn neg_ln_one_minus_exp(l: f64) -> f64 {
    if l > -std::f64::consts::LN_2 {
        -(-l.exp_m1()).ln()
    } else {
        -(-l.exp()).ln_1p()
    }
}

/// In-place running sum, as four independent chains over the quarters of
/// `v` whose offsets are added afterwards: a quarter of the latency of one
/// chain of dependent additions. The result is a fixed function of `v`.
fn prefix_sum(v: &mut [f64]) {
    let q = v.len() / 4;
    if q == 0 {
        let mut acc = 0.0;
        for x in v.iter_mut() {
            acc += *x;
            *x = acc;
        }
        return;
    }
    let (a, rest) = v.split_at_mut(q);
    let (b, rest) = rest.split_at_mut(q);
    let (c, d) = rest.split_at_mut(q);
    let (mut sa, mut sb, mut sc, mut sd) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..q {
        sa += a[i];
        a[i] = sa;
        sb += b[i];
        b[i] = sb;
        sc += c[i];
        c[i] = sc;
        sd += d[i];
        d[i] = sd;
    }
    for x in d.iter_mut().skip(q) {
        sd += *x;
        *x = sd;
    }
    let (ob, oc) = (sa, sa + sb);
    let od = oc + sc;
    b.iter_mut().for_each(|x| *x += ob);
    c.iter_mut().for_each(|x| *x += oc);
    d.iter_mut().for_each(|x| *x += od);
}

/// Whether `study`'s worker times can be drawn as order statistics: i.i.d.
/// workers whose law is an increasing function of a standard exponential
/// (`Standard`: exponential, shifted-exponential, Pareto and Weibull laws
/// without a straggler mixture, and the bootstrap from a trace) under a
/// monotone load, with the threshold decoder and no transfer times; or a
/// heterogeneous cluster whose every class is such a law (each class's
/// order statistics, merged). Log-normal laws and mixtures take the draw
/// path.
pub fn order_statistics_apply(study: &Study) -> bool {
    !study.comm().transfers()
        && study.decoder() == Decoder::Threshold
        && study.load_model().is_monotone()
        && (Standard::of(study.workers()).is_some() || ClassLaws::of(study.workers()).is_some())
}

/// A heterogeneous cluster whose every class has a [`Standard`] law: each
/// class's order statistics are drawn by Rényi's representation and the
/// classes' sorted runs merged, with no sort.
#[derive(Debug, Clone)]
struct ClassLaws {
    /// `(count, law, 1/(m−i+1) for i = 1..m)` per class, in order.
    classes: Vec<(usize, Standard, Vec<f64>)>,
    /// Random placement per trial.
    shuffle: bool,
    /// Where each class's run starts in the trial's times, and n at the end.
    starts: Vec<usize>,
}

impl ClassLaws {
    fn of(workers: &Workers) -> Option<Self> {
        let Workers::Classes { classes, shuffle } = workers else {
            return None;
        };
        let classes = classes
            .iter()
            .map(|&(m, d)| {
                let law = Standard::of(&Workers::Iid(d))?;
                Some((m, law, (1..=m).map(|i| 1.0 / (m - i + 1) as f64).collect()))
            })
            .collect::<Option<Vec<_>>>()?;
        let starts = std::iter::once(0)
            .chain(classes.iter().scan(0, |at, (m, _, _)| {
                *at += m;
                Some(*at)
            }))
            .collect();
        Some(Self {
            classes,
            starts,
            shuffle: *shuffle,
        })
    }
}

/// Merges the ascending runs of `src` that end at `ends` into `dst`
/// (ascending), two at a time; `pad` holds sentinel-padded copies.
fn merge_runs(src: &[f64], ends: &[usize], dst: &mut [f64], pad: &mut Vec<f64>) {
    let first = ends.first().copied().unwrap_or(0);
    dst[..first].copy_from_slice(&src[..first]);
    let mut len = first;
    for w in ends.windows(2) {
        let run = &src[w[0]..w[1]];
        merge_two(&dst[..len], run, pad);
        len += run.len();
        dst[..len].copy_from_slice(&pad[pad.len() - len..]);
    }
}

/// Merges ascending `a` and `b`, writing the result to the last
/// `a.len() + b.len()` entries of `pad`. The inputs are copied between
/// −∞/+∞ sentinels, and the merge runs from both ends at once: two
/// independent chains of load, compare and step, with the side chosen by
/// a select (min/max), so random interleavings cost no branch
/// mispredictions.
fn merge_two(a: &[f64], b: &[f64], pad: &mut Vec<f64>) {
    let (la, lb) = (a.len(), b.len());
    let total = la + lb;
    pad.clear();
    pad.push(f64::NEG_INFINITY);
    pad.extend_from_slice(a);
    pad.push(f64::INFINITY);
    pad.push(f64::NEG_INFINITY);
    pad.extend_from_slice(b);
    pad.push(f64::INFINITY);
    let base = pad.len();
    pad.resize(base + total, 0.0);
    let (inputs, out) = pad.split_at_mut(base);
    // Front: a's next at i, b's next at j (ties to a). Back: a's last at
    // p, b's last at q (ties to b, so that both halves agree on the order).
    let (mut i, mut j) = (1, la + 3);
    let (mut p, mut q) = (la, la + 2 + lb);
    let front = total.div_ceil(2);
    // The sentinels keep every read in bounds; which side is exhausted is
    // decided by index, so values equal to a sentinel (±∞ times, from
    // Pareto laws of tiny shape) merge correctly.
    let (a_end, b_start, b_end) = (la, la + 3, la + 2 + lb);
    for k in 0..front {
        let (x, y) = (inputs[i], inputs[j]);
        let take_a = (i <= a_end) & ((j > b_end) | (x <= y));
        out[k] = if take_a { x } else { y };
        i += usize::from(take_a);
        j += usize::from(!take_a);
        let k = total - 1 - k;
        if k >= front {
            let (x, y) = (inputs[p], inputs[q]);
            let take_a = (p >= 1) & ((q < b_start) | (x > y));
            out[k] = if take_a { x } else { y };
            p -= usize::from(take_a);
            q -= usize::from(!take_a);
        }
    }
}

/// An i.i.d. worker law written as an increasing function g of a standard
/// exponential E, so that g(E_(k)) is the law's k-th order statistic.
#[derive(Debug, Clone)]
enum Standard {
    /// E/μ.
    Exp { inv_rate: f64 },
    /// shift + E/μ.
    ShiftedExp { shift: f64, inv_rate: f64 },
    /// x_m·e^(E/α).
    Pareto { scale: f64, inv_shape: f64 },
    /// λ·E^(1/k).
    Weibull { scale: f64, inv_shape: f64 },
    /// The bootstrap from a trace: its ⌊M·U⌋-th smallest value (0-based) for
    /// U = 1 − e^(−E), uniform on [0, 1): each of the M values with
    /// probability 1/M.
    Empirical(Arc<Vec<f64>>),
}

impl Standard {
    /// The representation of `workers`' law, if it has one.
    fn of(workers: &Workers) -> Option<Self> {
        match workers {
            Workers::Iid(d) if d.stragglers().is_none_or(|(p, f)| p == 0.0 || f == 1.0) => match d.base() {
                Base::Exp { rate } => Some(Self::Exp { inv_rate: 1.0 / rate }),
                Base::ShiftedExp { shift, rate } => Some(Self::ShiftedExp {
                    shift,
                    inv_rate: 1.0 / rate,
                }),
                Base::Pareto { scale, shape } => Some(Self::Pareto {
                    scale,
                    inv_shape: 1.0 / shape,
                }),
                Base::Weibull { scale, shape } => Some(Self::Weibull {
                    scale,
                    inv_shape: 1.0 / shape,
                }),
                Base::LogNormal { .. } => None,
            },
            Workers::Trace(trace) => {
                let mut sorted = trace.all().to_vec();
                sorted.sort_unstable_by(f64::total_cmp);
                Some(Self::Empirical(Arc::new(sorted)))
            }
            Workers::Iid(_) | Workers::Classes { .. } | Workers::Replay(_) => None,
        }
    }

    #[inline(always)]
    fn apply(&self, e: f64) -> f64 {
        match self {
            Self::Exp { inv_rate } => e * inv_rate,
            Self::ShiftedExp { shift, inv_rate } => shift + e * inv_rate,
            Self::Pareto { scale, inv_shape } => scale * (e * inv_shape).exp(),
            Self::Weibull { scale, inv_shape } => scale * e.powf(*inv_shape),
            Self::Empirical(sorted) => {
                let m = sorted.len();
                let u = -(-e).exp_m1();
                sorted[((u * m as f64) as usize).min(m - 1)]
            }
        }
    }
}

impl TrialPlan {
    /// The fastest plan for `study`: order statistics where they apply,
    /// closed-form rule evaluations.
    pub fn new(study: &Study) -> Self {
        let sampling = if order_statistics_apply(study) {
            Sampling::OrderStatistics
        } else {
            Sampling::Draws
        };
        Self::with(study, RulePath::Fast, sampling)
    }

    /// The plan of `study` with the given rule path and sampling.
    ///
    /// # Panics
    /// If `sampling` is [`Sampling::OrderStatistics`] where
    /// [`order_statistics_apply`] is false.
    pub fn with(study: &Study, path: RulePath, sampling: Sampling) -> Self {
        assert!(
            sampling == Sampling::Draws || order_statistics_apply(study),
            "order statistics need i.i.d. exponential-family workers under a monotone load"
        );
        let model = *study.load_model();
        let baseline = study.baseline();
        let evals: Vec<Eval> = study
            .schemes()
            .iter()
            .chain(std::iter::once(&baseline))
            .enumerate()
            .map(|(slot, s)| Eval {
                slot,
                load: s.load(),
                rule: s.rule(),
                group: usize::MAX,
            })
            .collect();
        let slots = evals.len();
        let mut classes: Vec<Class> = Vec::new();
        for e in evals.iter().cloned() {
            let shared = model.is_monotone();
            match classes.iter_mut().find(|c| shared || c.load == e.load) {
                Some(c) => c.evals.push(e),
                None => classes.push(Class {
                    load: e.load,
                    evals: vec![e],
                    needs_sort: false,
                    group_sizes: Vec::new(),
                }),
            }
        }
        let mut slot_loads = vec![0.0; slots];
        for e in &evals {
            slot_loads[e.slot] = e.load;
        }
        classes.sort_by(|a, b| a.load.total_cmp(&b.load));
        let n = study.n();
        let mut plan = Self {
            n,
            workers: study.workers().clone(),
            model,
            units: (study.draws_per_trial() / n as u64) as usize,
            classes,
            slots,
            path,
            sampling,
            weights: (1..=n).map(|i| 1.0 / (n - i + 1) as f64).collect(),
            slot_loads,
            top_ranks: Vec::new(),
            other_evals: Vec::new(),
            split: {
                let (top, k0) = (top_block(n), n - top_block(n) + 1);
                (k0 > 1).then(|| {
                    let gamma = |shape: usize| Gamma::new(shape as f64, 1.0).expect("positive shape");
                    (gamma(top), gamma(k0))
                })
            },
            comm: *study.comm(),
            messages: study
                .schemes()
                .iter()
                .map(Scheme::message)
                .chain(std::iter::once(1.0))
                .collect(),
            codes: None,
            standard: Standard::of(study.workers()).unwrap_or(Standard::Exp { inv_rate: 1.0 }),
            class_laws: ClassLaws::of(study.workers()),
        };
        plan.update_sorting();
        plan
    }

    /// What follows from the rules: which classes sort, and which slots read
    /// an order statistic of the top block directly.
    fn update_sorting(&mut self) {
        let sort = self.path == RulePath::Fast && self.sampling == Sampling::Draws;
        for c in &mut self.classes {
            c.needs_sort = sort && c.evals.iter().any(|e| matches!(e.rule, Rule::KOfN(_)));
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
        self.top_ranks = vec![u32::MAX; self.slots];
        self.other_evals.clear();
        for e in self.classes.iter().flat_map(|c| &c.evals) {
            match e.rule {
                Rule::KOfN(k) if k > top_lo => self.top_ranks[e.slot] = (k - 1) as u32,
                _ => self.other_evals.push(e.clone()),
            }
        }
    }

    /// The same plan with every slot's rule replaced by `f(slot, rule)`: for
    /// alternative decoders, and for checking that a wrong rule is caught.
    pub fn map_rules(mut self, f: impl Fn(usize, Rule) -> Rule) -> Self {
        for class in &mut self.classes {
            for e in &mut class.evals {
                e.rule = f(e.slot, e.rule);
            }
        }
        self.update_sorting();
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

    /// Fresh buffers for one thread.
    pub fn scratch(&self) -> Scratch {
        Scratch {
            draws: vec![0.0; self.n * self.units],
            times: vec![0.0; self.n],
            sorted: vec![0.0; self.n],
            cum: vec![0.0; self.n],
            order: Vec::with_capacity(self.n),
            ranks: (0..self.n as u32).collect(),
            transfer: vec![0.0; self.n],
            finish: vec![0.0; self.n],
            arrival: vec![0.0; self.n],
            sort: SortBuffers::default(),
            merge: Vec::with_capacity(2 * self.n + 4),
            group_table: Vec::new(),
            group_times: Vec::new(),
            group_table_ranks: Vec::new(),
            group_ranks: Vec::new(),
            class_next: Vec::new(),
        }
    }

    /// Runs trial `trial` of seed `seed`, writing each slot's iteration time to `out`.
    pub fn run(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        if self.comm.transfers() {
            // Transfer times come from a stream of their own, so that the
            // worker times are those of the same trial without communication.
            let mut rng = trial_rng(seed ^ COMM_STREAM, trial);
            match self.comm.transfer {
                Transfer::Constant(tau) => scratch.transfer.fill(tau),
                Transfer::Random(d) => scratch.transfer.iter_mut().for_each(|c| *c = d.sample(&mut rng)),
            }
        }
        match self.sampling {
            Sampling::Draws => self.run_draws(seed, trial, scratch, out),
            Sampling::OrderStatistics => match &self.class_laws {
                Some(laws) => self.run_class_order_statistics(laws, seed, trial, scratch, out),
                None => self.run_order_statistics(seed, trial, scratch, out),
            },
        }
        if self.comm.decode_time != 0.0 {
            out.iter_mut().for_each(|v| *v += self.comm.decode_time);
        }
    }

    /// The worker law as an increasing function of a standard exponential.
    #[inline]
    fn law_of_standard(&self, e: f64) -> f64 {
        self.standard.apply(e)
    }

    fn run_order_statistics(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        let mut rng = trial_rng(seed, trial);
        let mut lower = self.draw_top(&mut rng, scratch);
        let class = &self.classes[0];
        if self.path == RulePath::Events || !class.group_sizes.is_empty() {
            // A uniformly random permutation, on the trial's rank stream.
            let mut rank_rng = trial_rng(seed ^ RANK_STREAM, trial);
            for (i, r) in scratch.ranks.iter_mut().enumerate() {
                *r = i as u32;
            }
            shuffle(&mut scratch.ranks, &mut rank_rng);
        }
        if self.path == RulePath::Events {
            self.reach(0, &mut rng, scratch, &mut lower);
            for i in 0..self.n {
                let e = self.order_statistic(scratch.ranks[i] as usize, scratch, lower);
                scratch.times[i] = self.law_of_standard(e);
            }
            for e in &class.evals {
                let raw = completion_by_events(e.rule, &scratch.times, &mut scratch.order);
                out[e.slot] = self.model.apply(e.load, raw);
            }
            return;
        }
        // Each configuration's standard order statistic, by slot, then the
        // law and the load model applied in one loop per (law, model) pair.
        for (o, &r) in out.iter_mut().zip(&self.top_ranks) {
            if r != u32::MAX {
                *o = scratch.sorted[r as usize];
            }
        }
        if !class.group_sizes.is_empty() {
            fast::groups_all(
                &scratch.ranks,
                &class.group_sizes,
                &mut scratch.group_table_ranks,
                &mut scratch.group_ranks,
            );
        }
        for e in &self.other_evals {
            let rank = match e.rule {
                Rule::KOfN(k) => k - 1,
                Rule::Groups { .. } => scratch.group_ranks[e.group] as usize,
            };
            if rank < lower {
                self.reach(rank, &mut rng, scratch, &mut lower);
            }
            out[e.slot] = self.order_statistic(rank, scratch, lower);
        }
        // One loop per law, each law's transform inlined.
        match &self.standard {
            Standard::Exp { .. } => self.apply_loads(out, |e| self.standard.apply(e)),
            Standard::ShiftedExp { .. } => self.apply_loads(out, |e| self.standard.apply(e)),
            Standard::Pareto { .. } => self.apply_loads(out, |e| self.standard.apply(e)),
            Standard::Weibull { .. } => self.apply_loads(out, |e| self.standard.apply(e)),
            Standard::Empirical(_) => self.apply_loads(out, |e| self.standard.apply(e)),
        }
    }

    /// `out[slot] ← model.apply(load of slot, law(out[slot]))` for every
    /// slot, as [`Self::law_of_standard`] and [`LoadModel::apply`] compute it
    /// (the same operations, so the same bits as the event walk).
    #[inline(always)]
    fn apply_loads(&self, out: &mut [f64], law: impl Fn(f64) -> f64) {
        let loads = &self.slot_loads;
        match self.model {
            LoadModel::Fixed => out.iter_mut().for_each(|v| *v = law(*v)),
            LoadModel::Scaled => out.iter_mut().zip(loads).for_each(|(v, &l)| *v = l * law(*v)),
            LoadModel::Affine { unit_time } => out
                .iter_mut()
                .zip(loads)
                .for_each(|(v, &l)| *v = unit_time * l + law(*v)),
            LoadModel::Additive => unreachable!("order_statistics_apply needs a monotone load"),
        }
    }

    /// Draws the top [`top_block`] standard exponential order statistics
    /// into `scratch.sorted` (index j holds E_(j+1)), and a/b (see below)
    /// into `scratch.cum`; returns the index of the lowest one drawn.
    fn draw_top(&self, rng: &mut rand_xoshiro::Xoshiro256PlusPlus, scratch: &mut Scratch) -> usize {
        let lowest = match &self.split {
            None => 0,
            Some((top, rest)) => {
                let k0 = self.n - top_block(self.n) + 1;
                // W = a/(a+b) ~ Beta(B, k₀) is 1 − U_(k₀).
                let (a, b) = (top.sample(rng), rest.sample(rng));
                // −ln W = ln((a+b)/a). With k₀ ≥ 2 and B ≤ 1024, b/a is
                // almost never below 1e-4, where ln of the rounded ratio is
                // still within 1e-12 (relative) of ln_1p(b/a), at a third
                // of the cost.
                scratch.sorted[k0 - 1] = ((a + b) / a).ln();
                // ln U_(k₀) = −ln(1 + a/b), taken in `reach` if it is needed.
                scratch.cum[k0 - 1] = a / b;
                k0 - 1
            }
        };
        let block = &mut scratch.sorted[lowest..];
        let weights = &self.weights[lowest..];
        let first = usize::from(lowest > 0);
        for (s, w) in block.iter_mut().zip(weights).skip(first) {
            let z: f64 = Exp1.sample(rng);
            *s = z * w;
        }
        prefix_sum(block);
        lowest
    }

    /// Extends the trial's order statistics down to index `rank`, top down
    /// in ln U (see the module notes), updating `lowest`.
    fn reach(
        &self,
        rank: usize,
        rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
        scratch: &mut Scratch,
        lowest: &mut usize,
    ) {
        if *lowest > rank && *lowest + top_block(self.n) == self.n {
            scratch.cum[*lowest] = -scratch.cum[*lowest].ln_1p();
        }
        while *lowest > rank {
            let k = *lowest; // the next index down holds the k-th smallest
            let z: f64 = Exp1.sample(rng);
            scratch.cum[k - 1] = scratch.cum[k] - z / k as f64;
            *lowest = k - 1;
        }
    }

    /// E_(rank+1), for a `rank` at or above the lowest drawn.
    #[inline]
    fn order_statistic(&self, rank: usize, scratch: &Scratch, lowest: usize) -> f64 {
        debug_assert!(rank >= lowest);
        match &self.split {
            Some(_) if rank < self.n - top_block(self.n) => neg_ln_one_minus_exp(scratch.cum[rank]),
            _ => scratch.sorted[rank],
        }
    }

    /// A heterogeneous cluster by order statistics: each class's sorted
    /// times by Rényi's representation (its own count of draws, in class
    /// order), merged into `scratch.sorted`; where a rule needs to know
    /// which worker finished, each class's times go to its workers in a
    /// uniformly random order (they are exchangeable), placed as
    /// [`Self::draw`] places classes.
    fn run_class_order_statistics(
        &self,
        laws: &ClassLaws,
        seed: u64,
        trial: u64,
        scratch: &mut Scratch,
        out: &mut [f64],
    ) {
        let mut rng = trial_rng(seed, trial);
        for ((_, law, weights), w) in laws.classes.iter().zip(laws.starts.windows(2)) {
            let run = &mut scratch.cum[w[0]..w[1]];
            for (x, w) in run.iter_mut().zip(weights) {
                let z: f64 = Exp1.sample(&mut rng);
                *x = z * w;
            }
            prefix_sum(run);
            run.iter_mut().for_each(|x| *x = law.apply(*x));
        }
        merge_runs(&scratch.cum, &laws.starts[1..], &mut scratch.sorted, &mut scratch.merge);
        let class = &self.classes[0];
        if self.path == RulePath::Events || !class.group_sizes.is_empty() {
            let mut rank_rng = trial_rng(seed ^ RANK_STREAM, trial);
            let counts = laws.classes.iter().map(|(m, _, _)| *m);
            place_classes(&mut scratch.ranks, counts, laws.shuffle, &mut rank_rng);
            // Each class's run in random order, dealt to its workers in turn.
            for w in laws.starts.windows(2) {
                shuffle(&mut scratch.cum[w[0]..w[1]], &mut rank_rng);
            }
            let next = &mut scratch.class_next;
            next.clear();
            next.extend_from_slice(&laws.starts);
            for (t, &c) in scratch.times.iter_mut().zip(&scratch.ranks) {
                *t = scratch.cum[next[c as usize]];
                next[c as usize] += 1;
            }
        }
        let times = std::mem::take(&mut scratch.times);
        self.evaluate(class, &times, scratch, out);
        scratch.times = times;
    }

    fn run_draws(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        let mut rng = trial_rng(seed, trial);
        self.draw(&mut rng, scratch);
        let n = self.n;
        if self.model.is_monotone() {
            let class = &self.classes[0];
            let raw = std::mem::take(&mut scratch.draws);
            self.evaluate(class, &raw[..n], scratch, out);
            scratch.draws = raw;
            return;
        }
        // Additive: classes ascend in load, so running unit sums are extended in place.
        scratch.cum.fill(0.0);
        let mut summed = 0;
        for class in &self.classes {
            let whole = class.load.floor() as usize;
            let frac = class.load - whole as f64;
            while summed < whole {
                let unit = &scratch.draws[summed * n..(summed + 1) * n];
                scratch.cum.iter_mut().zip(unit).for_each(|(c, u)| *c += u);
                summed += 1;
            }
            if frac > 0.0 {
                let unit = &scratch.draws[whole * n..(whole + 1) * n];
                for ((t, c), u) in scratch.times.iter_mut().zip(&scratch.cum).zip(unit) {
                    *t = c + frac * u;
                }
            } else {
                scratch.times.copy_from_slice(&scratch.cum);
            }
            let times = std::mem::take(&mut scratch.times);
            self.evaluate(class, &times, scratch, out);
            scratch.times = times;
        }
    }

    /// One trial's worker times (unit-major under `additive`).
    fn draw(&self, rng: &mut rand_xoshiro::Xoshiro256PlusPlus, scratch: &mut Scratch) {
        let n = self.n;
        match &self.workers {
            Workers::Iid(dist) => scratch.draws.iter_mut().for_each(|d| *d = dist.sample(rng)),
            Workers::Classes { classes, shuffle } => {
                place_classes(&mut scratch.ranks, classes.iter().map(|(m, _)| *m), *shuffle, rng);
                for unit in scratch.draws.chunks_exact_mut(n) {
                    for (d, &c) in unit.iter_mut().zip(&scratch.ranks) {
                        *d = classes[c as usize].1.sample(rng);
                    }
                }
            }
            Workers::Trace(trace) => {
                let all = trace.all();
                scratch
                    .draws
                    .iter_mut()
                    .for_each(|d| *d = all[rng.random_range(0..all.len())]);
            }
            Workers::Replay(trace) => {
                let step = trace.step(rng.random_range(0..trace.steps()));
                if trace.workers() == n {
                    scratch.draws[..n].copy_from_slice(step);
                } else {
                    scratch.draws[..n]
                        .iter_mut()
                        .for_each(|d| *d = step[rng.random_range(0..step.len())]);
                }
            }
        }
    }

    /// Arrival times of `e`'s messages in `scratch.arrival`: its workers'
    /// finish times at its load, plus the transfers where messages take time.
    fn arrivals_of(&self, e: &Eval, times: &[f64], scratch: &mut Scratch) {
        for (f, &x) in scratch.finish.iter_mut().zip(times) {
            *f = if self.model.is_monotone() {
                self.model.apply(e.load, x)
            } else {
                x
            };
        }
        if self.comm.transfers() {
            let message = self.messages[e.slot];
            self.comm.arrivals(
                &scratch.finish,
                &scratch.transfer,
                message,
                &mut scratch.order,
                &mut scratch.arrival,
            );
        } else {
            scratch.arrival.copy_from_slice(&scratch.finish);
        }
    }

    fn evaluate(&self, class: &Class, times: &[f64], scratch: &mut Scratch, out: &mut [f64]) {
        if let Some(codes) = &self.codes {
            // Arrivals in time order; the shortest decodable prefix, by
            // bisection (decodability only grows as workers arrive).
            for e in &class.evals {
                self.arrivals_of(e, times, scratch);
                let arrival = &scratch.arrival;
                scratch.order.clear();
                scratch.order.extend(0..self.n);
                scratch
                    .order
                    .sort_unstable_by(|&a, &b| arrival[a].total_cmp(&arrival[b]).then(a.cmp(&b)));
                let code = &codes[e.slot];
                let (mut lo, mut hi) = (1, self.n);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if code.is_decodable(&scratch.order[..mid]) {
                        hi = mid
                    } else {
                        lo = mid + 1
                    }
                }
                out[e.slot] = arrival[scratch.order[lo - 1]];
            }
            return;
        }
        if self.comm.transfers() {
            // Each configuration's arrivals, judged by the event walk.
            for e in &class.evals {
                self.arrivals_of(e, times, scratch);
                out[e.slot] = completion_by_events(e.rule, &scratch.arrival, &mut scratch.order);
            }
            return;
        }
        let (sorted, order) = (&mut scratch.sorted, &mut scratch.order);
        if class.needs_sort {
            sorted.copy_from_slice(times);
            sort_floats(sorted, &mut scratch.sort);
        }
        if self.path == RulePath::Fast && !class.group_sizes.is_empty() {
            fast::groups_all(
                times,
                &class.group_sizes,
                &mut scratch.group_table,
                &mut scratch.group_times,
            );
        }
        for e in &class.evals {
            let raw = match (self.path, e.rule) {
                (RulePath::Fast, Rule::KOfN(k)) => fast::k_of_n(sorted, k),
                (RulePath::Fast, Rule::Groups { .. }) => scratch.group_times[e.group],
                (RulePath::Events, rule) => completion_by_events(rule, times, order),
            };
            out[e.slot] = if self.model.is_monotone() {
                self.model.apply(e.load, raw)
            } else {
                raw
            };
        }
    }
}
