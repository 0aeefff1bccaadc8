//! One trial: draw the workers' times once, then evaluate every configuration
//! of the study on those draws (common random numbers).
//!
//! Sampling is separate from evaluation. Under `fixed`, `scaled` and `affine`
//! a worker's time is an increasing function of one draw, so one sort of the
//! n draws serves every configuration: the k-th order statistic of ℓ·X is ℓ
//! times that of X, and max-of-group-minima commutes with any increasing
//! transform. Under `additive` the draws are units of work, drawn unit-major
//! (every worker's first unit, then every worker's second, …), and each
//! distinct load gets its own worker times and its own sort.

use rand_distr::Distribution;

use super::rng::trial_rng;
use super::timeline::{completion_by_events, fast};
use crate::dist::Dist;
use crate::load::LoadModel;
use crate::scheme::Rule;
use crate::study::Study;

/// How rules are evaluated on a trial's worker times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulePath {
    /// Closed forms: k-th order statistic, max of group minima.
    Fast,
    /// The general discrete-event walk over finish events.
    Events,
}

#[derive(Debug, Clone)]
struct Eval {
    slot: usize,
    load: f64,
    rule: Rule,
}

/// Configurations that share worker times: all of them under a monotone
/// load model, those with the same load under `additive`.
#[derive(Debug, Clone)]
struct Class {
    load: f64,
    evals: Vec<Eval>,
    needs_sort: bool,
}

/// Per-thread buffers for [`TrialPlan::run`].
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    draws: Vec<f64>,
    times: Vec<f64>,
    sorted: Vec<f64>,
    cum: Vec<f64>,
    order: Vec<usize>,
}

/// What one trial computes: the iteration time of every slot. Slots are the
/// study's schemes in order, then the uncoded baseline.
#[derive(Debug, Clone)]
pub struct TrialPlan {
    n: usize,
    dist: Dist,
    model: LoadModel,
    units: usize,
    classes: Vec<Class>,
    slots: usize,
    path: RulePath,
}

impl TrialPlan {
    /// The plan of `study`, evaluating rules by `path`.
    pub fn new(study: &Study, path: RulePath) -> Self {
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
            })
            .collect();
        let slots = evals.len();
        let mut classes: Vec<Class> = Vec::new();
        for e in evals {
            let shared = model.is_monotone();
            match classes.iter_mut().find(|c| shared || c.load == e.load) {
                Some(c) => c.evals.push(e),
                None => classes.push(Class {
                    load: e.load,
                    evals: vec![e],
                    needs_sort: false,
                }),
            }
        }
        classes.sort_by(|a, b| a.load.total_cmp(&b.load));
        for c in &mut classes {
            c.needs_sort = path == RulePath::Fast && c.evals.iter().any(|e| matches!(e.rule, Rule::KOfN(_)));
        }
        Self {
            n: study.n(),
            dist: *study.dist(),
            model,
            units: (study.draws_per_trial() / study.n() as u64) as usize,
            classes,
            slots,
            path,
        }
    }

    /// The same plan with every slot's rule replaced by `f(slot, rule)`: for
    /// alternative decoders, and for checking that a wrong rule is caught.
    pub fn map_rules(mut self, f: impl Fn(usize, Rule) -> Rule) -> Self {
        for class in &mut self.classes {
            for e in &mut class.evals {
                e.rule = f(e.slot, e.rule);
            }
            class.needs_sort =
                self.path == RulePath::Fast && class.evals.iter().any(|e| matches!(e.rule, Rule::KOfN(_)));
        }
        self
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
        }
    }

    /// Runs trial `trial` of seed `seed`, writing each slot's iteration time to `out`.
    pub fn run(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        let mut rng = trial_rng(seed, trial);
        for d in scratch.draws.iter_mut() {
            *d = self.dist.sample(&mut rng);
        }
        let n = self.n;
        if self.model.is_monotone() {
            let raw = &scratch.draws[..n];
            let class = &self.classes[0];
            self.evaluate(class, raw, &mut scratch.sorted, &mut scratch.order, out);
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
            self.evaluate(class, &scratch.times, &mut scratch.sorted, &mut scratch.order, out);
        }
    }

    fn evaluate(&self, class: &Class, times: &[f64], sorted: &mut [f64], order: &mut Vec<usize>, out: &mut [f64]) {
        if class.needs_sort {
            sorted.copy_from_slice(times);
            sorted.sort_unstable_by(f64::total_cmp);
        }
        for e in &class.evals {
            let raw = match (self.path, e.rule) {
                (RulePath::Fast, Rule::KOfN(k)) => fast::k_of_n(sorted, k),
                (RulePath::Fast, Rule::Groups { size }) => fast::groups(times, size),
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
