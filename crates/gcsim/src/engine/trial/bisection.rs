//! Messages of a constant transfer time by the top order statistics, and
//! below them only those the shared link's queue cannot do without, found
//! by bisection.
//!
//! Where messages take a constant time and every rule is k-of-n, the
//! arrivals come in finish order (see [`super::spacings`]). On a dedicated
//! link the k-th is the k-th finish plus the transfer, so a configuration
//! that reads k ≥ k₀ (in the top block) needs only the top order statistics
//! every trial draws. On a shared link the k-th departure of the
//! first-come-first-served queue, a_(k) = max(a_(k−1), f_(k)) + c, depends
//! on every earlier finish, but only through a_(k₀−1), and the walk can skip
//! any run of ranks a < i < b whose finishes cannot reach the queue:
//! where f_(b) ≤ a_(a), every f_(i) ≤ f_(b) ≤ a_(a) ≤ a_(i−1) (finishes and
//! departures are nondecreasing), so each of those steps only adds c, in the
//! same floating-point operations, without knowing f_(i).
//!
//! The lower order statistics are drawn top down by bisection, in uniform
//! scale U = 1 − e^(−E) (David & Nagaraja 2003, §2.5): given U_(a) and
//! U_(b), the b − a − 1 uniforms between them are i.i.d. on (U_(a), U_(b)),
//! so the one of rank m is U_(a) + (U_(b) − U_(a))·B with
//! B ~ Beta(m − a, b − m), drawn as X/(X + Y) from two Gamma variates; a
//! range of at most [`LEAF`] draws all of them at once, as normalised
//! cumulative sums of exponentials. The fastest, U_(1), is drawn given
//! U_(k₀) as a deadline draws it (`TrialPlan::fastest_standard`). The
//! ranges form one fixed tree, and each node draws from a stream of its own
//! keyed by its rank, so a node's value is the same whichever walk reaches
//! it first, and every configuration's law is exact: the walk with every
//! node drawn is the sorted sample, and the tests check that the skipping
//! walk gives its bits.

use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;

/// Ranges with at most this many ranks inside draw them all at once.
pub(super) const LEAF: usize = 16;

/// Keys of the streams of the bisection's splits and of its leaves (XORed
/// with the seed and the node's rank times [`SPREAD`]).
const SPLIT_STREAM: u64 = 0xB15E_C7ED_5EED_0001;
const LEAF_STREAM: u64 = 0x1EAF_5EED_0F0F_0002;
/// Spreads a rank over the seed's bits (2⁶⁴/φ, odd).
const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

/// Whether `study`'s trials can take [`Sampling::Bisection`]: where
/// [`spacings_apply`] (messages of a constant transfer time, k-of-n rules,
/// i.i.d. workers of a `Standard` law, a monotone load) and every rule reads
/// an arrival in the top block, which is not every worker.
pub fn bisection_apply(study: &Study) -> bool {
    if study.parallel().is_some() {
        return false;
    }
    let n = study.n();
    let top_lo = n - top_block(n);
    spacings_apply(study)
        && top_lo > 0
        && study
            .schemes()
            .iter()
            .chain(std::iter::once(&study.baseline()))
            .all(|s| matches!(s.rule(), Rule::KOfN(k) if k > top_lo))
}

/// The fixed tree of ranges below the top block, and what each
/// configuration reads.
#[derive(Debug, Clone)]
pub(super) struct Bisection {
    /// k₀: the lowest rank of the top block.
    k0: usize,
    /// The ranges, the root (1, k₀) first (none where k₀ ≤ 2).
    nodes: Vec<Node>,
    /// The Gamma laws the splits draw, by index.
    gammas: Vec<Gamma<f64>>,
    /// Whether the link is shared (a queue) rather than dedicated.
    shared: bool,
    /// The configurations, by (load, transfer): each walks its own queue.
    keys: Vec<Key>,
    /// Whether the top block is drawn by its ends, E_(k₀) and E_(n), and
    /// its middle only where a queue reaches it (see [`TrialPlan::plan_top`]).
    lazy_top: bool,
}

/// A range of ranks a < i < b, its two ends drawn before it.
#[derive(Debug, Clone, Copy)]
struct Node {
    a: usize,
    b: usize,
    /// Where the range has more than [`LEAF`] ranks inside: its middle rank,
    /// the Gamma laws (indices) of m − a and b − m, and the ranges on either
    /// side (where they have ranks inside).
    split: Option<Split>,
}

#[derive(Debug, Clone, Copy)]
struct Split {
    m: usize,
    alpha: usize,
    beta: usize,
    left: Option<usize>,
    right: Option<usize>,
}

/// The configurations that share finish times and a transfer time.
#[derive(Debug, Clone)]
struct Key {
    /// The load the model applies (each slot's own; one for `fixed`).
    load: f64,
    /// The transfer time of one message: τ·message.
    c: f64,
    /// (k, slot) of each configuration, and the deadline where it has one.
    reads: Vec<(usize, usize, Option<f64>)>,
}

/// Per thread: the lower order statistics drawn in the current trial.
#[derive(Debug, Clone, Default)]
pub(super) struct Lower {
    /// U_(r) by rank r (0 unused; U_(k₀) at k₀), where drawn.
    u: Vec<f64>,
    /// The worker law's value at rank r, 1 ≤ r ≤ n, where drawn.
    x: Vec<f64>,
    /// The trial each node (then rank 1, after the nodes) was last drawn in.
    stamp: Vec<u64>,
    /// The current trial's stamp.
    now: u64,
    /// The current walk's departures from k₀ on.
    departures: Vec<f64>,
    /// Where the top block is drawn by its ends: E_(k₀) and E_(n) − E_(k₀).
    ends: (f64, f64),
    /// The trial's stream, which draws the top block's middle on demand.
    top_rng: Option<Xoshiro256PlusPlus>,
    /// The trial that last drew the top block's middle.
    middle: u64,
}

impl Bisection {
    /// The tree for n workers, and the keys of `evals` with their messages.
    pub(super) fn new(n: usize, evals: &[&Eval], model: LoadModel, comm: &Comm, messages: &[f64]) -> Self {
        let k0 = n - top_block(n) + 1;
        let mut tree = Self {
            k0,
            nodes: Vec::new(),
            gammas: Vec::new(),
            shared: comm.link == crate::comm::Link::Shared,
            keys: Vec::new(),
            lazy_top: false,
        };
        let mut shapes = Vec::new();
        tree.build(1, k0, &mut shapes);
        tree.gammas = shapes
            .iter()
            .map(|&s| Gamma::new(s as f64, 1.0).expect("positive shape"))
            .collect();
        let tau = comm.comm_time().expect("bisection: a constant transfer time");
        for e in evals {
            let Rule::KOfN(k) = e.rule else {
                unreachable!("bisection: k-of-n rules only")
            };
            let load = if model == LoadModel::Fixed { 0.0 } else { e.load };
            let c = tau * messages[e.slot];
            let same = |key: &&mut Key| key.load.to_bits() == load.to_bits() && key.c.to_bits() == c.to_bits();
            match tree.keys.iter_mut().find(same) {
                Some(key) => key.reads.push((k, e.slot, e.deadline)),
                None => tree.keys.push(Key {
                    load,
                    c,
                    reads: vec![(k, e.slot, e.deadline)],
                }),
            }
        }
        tree
    }

    /// Adds the range (a, b) and the ranges below it; returns its index, if
    /// it has ranks inside. `shapes` collects the Gamma shapes.
    fn build(&mut self, a: usize, b: usize, shapes: &mut Vec<usize>) -> Option<usize> {
        if b <= a + 1 {
            return None;
        }
        let index = self.nodes.len();
        self.nodes.push(Node { a, b, split: None });
        if b - a - 1 > LEAF {
            let m = (a + b) / 2;
            let mut shape = |s: usize| match shapes.iter().position(|&t| t == s) {
                Some(i) => i,
                None => {
                    shapes.push(s);
                    shapes.len() - 1
                }
            };
            let (alpha, beta) = (shape(m - a), shape(b - m));
            let left = self.build(a, m, shapes);
            let right = self.build(m, b, shapes);
            self.nodes[index].split = Some(Split {
                m,
                alpha,
                beta,
                left,
                right,
            });
        }
        Some(index)
    }
}

impl Lower {
    /// Ready for a trial of `plan`'s tree: nothing below the top drawn.
    fn start(&mut self, n: usize, tree: &Bisection) {
        if self.x.len() != n + 1 {
            self.u = vec![0.0; tree.k0 + 1];
            self.x = vec![0.0; n + 1];
            self.stamp = vec![0; tree.nodes.len() + 1];
            self.departures = vec![0.0; n + 1 - tree.k0];
        }
        self.now += 1;
    }
}

/// A trial's walk: the plan, the trial's streams and its drawn values.
struct Walk<'a> {
    plan: &'a TrialPlan,
    tree: &'a Bisection,
    seed: u64,
    trial: u64,
    lower: &'a mut Lower,
}

impl Walk<'_> {
    /// Draws U_(1), the fastest, if this trial has not.
    fn fastest(&mut self) {
        let slot = self.tree.nodes.len();
        if self.lower.stamp[slot] == self.lower.now {
            return;
        }
        self.lower.stamp[slot] = self.lower.now;
        let k0 = self.tree.k0;
        let u = fastest_uniform(self.seed, self.trial, self.lower.u[k0], k0 - 1);
        self.set(1, u);
    }

    /// Rank r's uniform u and its law value.
    fn set(&mut self, r: usize, u: f64) {
        self.lower.u[r] = u;
        self.lower.x[r] = self.plan.law_of_standard(-(-u).ln_1p());
    }

    /// Draws node `i`'s middle rank (a split) or every rank inside it (a
    /// leaf), if this trial has not.
    fn draw(&mut self, i: usize) {
        if self.lower.stamp[i] == self.lower.now {
            return;
        }
        self.lower.stamp[i] = self.lower.now;
        let Node { a, b, split } = self.tree.nodes[i];
        let (ua, ub) = (self.lower.u[a], self.lower.u[b]);
        match split {
            Some(s) => {
                let mut rng = trial_rng(self.seed ^ SPLIT_STREAM ^ (s.m as u64).wrapping_mul(SPREAD), self.trial);
                let x = self.tree.gammas[s.alpha].sample(&mut rng);
                let y = self.tree.gammas[s.beta].sample(&mut rng);
                self.set(s.m, (ua + (ub - ua) * (x / (x + y))).clamp(ua, ub));
            }
            None => {
                let mut rng = trial_rng(self.seed ^ LEAF_STREAM ^ (a as u64).wrapping_mul(SPREAD), self.trial);
                // Sorted uniforms on (U_(a), U_(b)): S_j/S_(m+1).
                let total = cumulative_exponentials(&mut self.lower.u[a + 1..b], &mut rng);
                for r in a + 1..b {
                    let u = (ua + (ub - ua) * (self.lower.u[r] / total)).min(ub);
                    self.set(r, u);
                }
            }
        }
    }

    /// Draws every node (for the event walk, which reads every rank).
    fn draw_all(&mut self) {
        self.fastest();
        for i in 0..self.tree.nodes.len() {
            self.draw(i);
        }
        if self.tree.lazy_top {
            self.middle();
        }
    }

    /// Draws the top block's middle, ranks k₀ < r < n, given its ends, if
    /// this trial has not. Given E_(k₀) and D = E_(n) − E_(k₀), the m − 1
    /// times between are i.i.d. E_(k₀) + Y with Y exponential truncated to
    /// (0, D) (memorylessness), so W = e^(−Y) is uniform on (e^(−D), 1):
    /// sorted from the normalised cumulative sums of m exponentials, as a
    /// leaf sorts its uniforms, Y = −ln(e^(−D) + (1 − e^(−D))·(1 − S_j/S_m)),
    /// precise in absolute terms at both ends.
    fn middle(&mut self) {
        if self.lower.middle == self.lower.now {
            return;
        }
        self.lower.middle = self.lower.now;
        let (k0, n) = (self.tree.k0, self.plan.n);
        let (e0, d) = self.lower.ends;
        let rng = self
            .lower
            .top_rng
            .as_mut()
            .expect("a lazy top block keeps the trial's stream");
        let times = &mut self.lower.x[k0 + 1..n];
        let total = cumulative_exponentials(times, rng);
        let (floor, width) = ((-d).exp(), -(-d).exp_m1());
        for t in times.iter_mut() {
            let y = -(floor + width * ((total - *t) / total)).ln();
            *t = self.plan.law_of_standard(e0 + y.clamp(0.0, d));
        }
    }

    /// The queue of `key` through the range of node `i`: from the
    /// departure a_(a) in `free` to a_(b−1), skipping the range where
    /// f_(b) ≤ a_(a) (see the module notes).
    fn queue(&mut self, i: usize, key: &Key, free: &mut f64) {
        let Node { a, b, split } = self.tree.nodes[i];
        let finish = |w: &Self, r: usize| w.plan.model.apply(key.load, w.lower.x[r]);
        if finish(self, b) <= *free {
            for _ in a + 1..b {
                *free += key.c;
            }
            return;
        }
        self.draw(i);
        match split {
            None => {
                for r in a + 1..b {
                    *free = later(*free, finish(self, r)) + key.c;
                }
            }
            Some(s) => {
                if let Some(left) = s.left {
                    self.queue(left, key, free);
                }
                *free = later(*free, finish(self, s.m)) + key.c;
                if let Some(right) = s.right {
                    self.queue(right, key, free);
                }
            }
        }
    }
}

/// The cumulative sums S_1, …, S_m of m + 1 standard exponentials into
/// `sums` (m = its length), returning S_(m+1): S_j/S_(m+1) are m sorted
/// uniforms (David & Nagaraja 2003, §2.5).
fn cumulative_exponentials(sums: &mut [f64], rng: &mut Xoshiro256PlusPlus) -> f64 {
    let mut sum = 0.0;
    for s in sums.iter_mut() {
        let z: f64 = Exp1.sample(rng);
        sum += z;
        *s = sum;
    }
    let z: f64 = Exp1.sample(rng);
    sum + z
}

/// The arrivals of the top block's messages into `departures`, from its
/// finishes `finish(x)`: on a shared link (`start` the departure a_(k₀−1)
/// before them) the queue's, a_(k) = max(a_(k−1), f_(k)) + c; on a dedicated
/// link f_(k) + c. The same operations as [`crate::comm::Comm::arrivals`]:
/// `later` is `f64::max` on values that are not NaN.
#[inline(always)]
fn arrivals(top: &[f64], departures: &mut [f64], start: Option<f64>, c: f64, finish: impl Fn(f64) -> f64) {
    match start {
        Some(mut free) => {
            for (d, &x) in departures.iter_mut().zip(top) {
                free = later(free, finish(x)) + c;
                *d = free;
            }
        }
        None => {
            for (d, &x) in departures.iter_mut().zip(top) {
                *d = finish(x) + c;
            }
        }
    }
}

/// The larger of two values that are not NaN, as `f64::max` gives it,
/// without the NaN test on the queue's critical path.
#[inline(always)]
fn later(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// U_(1), the smallest of the uniforms, drawn from its own stream given
/// `lowest` = U_(k₀) with `below` = k₀ − 1 uniforms under it: i.i.d. on
/// (0, U_(k₀)), so their minimum is U_(k₀)·(1 − V^(1/(k₀−1))) for V
/// uniform on (0, 1].
pub(super) fn fastest_uniform(seed: u64, trial: u64, lowest: f64, below: usize) -> f64 {
    fastest_uniform_at(fastest_v(seed, trial), lowest, below)
}

/// The V of [`fastest_uniform`] for trial `trial` of seed `seed`.
pub(super) fn fastest_v(seed: u64, trial: u64) -> f64 {
    let mut rng = trial_rng(seed ^ super::sample::FASTEST_STREAM, trial);
    1.0 - rng.random::<f64>()
}

/// [`fastest_uniform`] at a given V.
pub(super) fn fastest_uniform_at(v: f64, lowest: f64, below: usize) -> f64 {
    // 1 − V^(1/m), without the rounding of V^(1/m) near 1.
    let fraction = -(v.ln() / below as f64).exp_m1();
    lowest * fraction
}

/// The seed of the pilot that decides how the top block is drawn: a
/// constant, so that the decision is a function of the study.
const PILOT_SEED: u64 = 0x7070_5EED_0F0F_0004;

/// The pilot's draws at most (its trials times n), and its trials at most.
const PILOT_DRAWS: usize = 1 << 22;
const PILOT_TRIALS: u64 = 256;

impl TrialPlan {
    /// On a shared link under the `fixed` model, draws the top block by its
    /// ends and its middle only where a queue reaches it, if the baseline's
    /// queue reaches it in at most one trial in eight of a pilot (256 trials
    /// with a fixed seed, fewer above 16 384 workers). Where the link is
    /// the bottleneck, the departure before k₀ is already later than the
    /// slowest finish, a_(k₀−1) ≥ f_(n), and every message of the top block
    /// waits for the one before it: its departures are a_(k₀−1) + c, + 2c,
    /// …, whatever the finishes, so a trial draws two order statistics of
    /// the top block instead of its B. Drawing the middle given the ends
    /// costs a logarithm a rank, so a study whose queues reach it more often
    /// keeps the top block's spacings. The pilot reads the baseline alone
    /// (the cluster, its law and the link), so a configuration's values do
    /// not depend on what else the study contains.
    pub(super) fn plan_top(&mut self) {
        let Some(tree) = self.bisection.as_ref().filter(|t| t.shared) else {
            return;
        };
        let baseline = self.slots - 1;
        let key = tree.keys.iter().find(|k| k.reads.iter().any(|r| r.1 == baseline));
        let (Some(key), LoadModel::Fixed) = (key, self.model) else {
            return;
        };
        let mut pilot = self.clone();
        pilot.path = RulePath::Fast;
        pilot.bisection = Some(Arc::new(Bisection {
            keys: vec![key.clone()],
            lazy_top: true,
            ..(**tree).clone()
        }));
        let trials = ((PILOT_DRAWS / self.n) as u64).clamp(16, PILOT_TRIALS);
        let (mut scratch, mut out) = (pilot.scratch(), vec![0.0; self.slots]);
        let reached = (0..trials)
            .filter(|&t| {
                pilot.run_bisection(PILOT_SEED, t, &mut scratch, &mut out);
                scratch.lower.middle == scratch.lower.now
            })
            .count() as u64;
        if reached * 8 <= trials {
            let tree = self.bisection.as_mut().expect("checked above");
            Arc::make_mut(tree).lazy_top = true;
        }
    }

    /// One iteration by [`Sampling::Bisection`]: the top block, then each
    /// key's arrivals; on the event path every rank is drawn and the
    /// sorted sample goes to the walk.
    pub(super) fn run_bisection(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        let tree = self.bisection.as_ref().expect("a bisection plan");
        let n = self.n;
        let rng = trial_rng(seed, trial);
        let mut lower = std::mem::take(&mut scratch.lower);
        lower.start(n, tree);
        let k0 = tree.k0;
        let lowest = self.draw_lowest(rng, tree, &mut lower, scratch);
        lower.u[k0] = -(-lowest).exp_m1();
        let mut walk = Walk {
            plan: self,
            tree,
            seed,
            trial,
            lower: &mut lower,
        };
        if self.path == RulePath::Events {
            walk.draw_all();
            scratch.times.copy_from_slice(&lower.x[1..]);
            scratch.lower = lower;
            let times = std::mem::take(&mut scratch.times);
            self.evaluate(&self.load_groups[0], &times, scratch, out);
            scratch.times = times;
            return;
        }
        // Each of `key`'s configurations: its arrival, cut short at its deadline.
        let read = |key: &Key, lower: &Lower, out: &mut [f64]| {
            for &(k, slot, deadline) in &key.reads {
                let done = lower.departures[k - k0];
                out[slot] = match deadline {
                    // The first message arrives the transfer after the fastest finish.
                    Some(t) => with_deadline(done, t, self.model.apply(key.load, lower.x[1]) + key.c),
                    None => done,
                };
            }
        };
        for key in &tree.keys {
            let finish = |r: usize, x: &[f64]| self.model.apply(key.load, x[r]);
            let reads_first = key.reads.iter().any(|r| r.2.is_some());
            if tree.shared || reads_first {
                walk.fastest();
            }
            let start = if tree.shared {
                let mut free = finish(1, &walk.lower.x) + key.c;
                if !tree.nodes.is_empty() {
                    walk.queue(0, key, &mut free);
                }
                Some(free)
            } else {
                None
            };
            if let Some(mut free) = start
                && tree.lazy_top
                && walk.lower.middle != walk.lower.now
            {
                if finish(n, &walk.lower.x) <= free {
                    // Every finish of the top block is at most the departure
                    // before it: each message waits for the one before, the
                    // queue's steps with f_(k) ≤ a_(k−1).
                    for d in &mut walk.lower.departures {
                        free += key.c;
                        *d = free;
                    }
                    read(key, walk.lower, out);
                    continue;
                }
                walk.middle();
            }
            let lower = &mut *walk.lower;
            let (top, departures) = (&lower.x[k0..], &mut lower.departures);
            // One loop per model, its form inlined: the queue's chain of
            // max-then-add is the trial's critical path.
            match self.model {
                LoadModel::Fixed => arrivals(top, departures, start, key.c, |x| x),
                LoadModel::Scaled => arrivals(top, departures, start, key.c, |x| key.load * x),
                LoadModel::Affine { unit_time } => {
                    let shift = unit_time * key.load;
                    arrivals(top, departures, start, key.c, |x| shift + x)
                }
                LoadModel::Additive => unreachable!("bisection: a monotone load"),
            }
            read(key, walk.lower, out);
        }
        scratch.lower = lower;
    }

    /// The trial's top block: E_(k₀), the lowest standard draw of it, with
    /// the block drawn (or, lazily, only its two ends) into `lower`.
    #[inline]
    fn draw_lowest(
        &self,
        mut rng: rand_xoshiro::Xoshiro256PlusPlus,
        tree: &Bisection,
        lower: &mut Lower,
        scratch: &mut Scratch,
    ) -> f64 {
        let (n, k0) = (self.n, tree.k0);
        if tree.lazy_top {
            // E_(k₀) as the top block's draw takes it, then the largest of
            // the m = n − k₀ above it, E_(k₀) plus the largest of m
            // exponentials: −ln(1 − V^(1/m)).
            let e0 = self.lowest_of_top(&mut rng);
            let v: f64 = rng.random();
            let d = -(-(v.ln() / (n - k0) as f64).exp_m1()).ln();
            lower.x[k0] = self.law_of_standard(e0);
            lower.x[n] = self.law_of_standard(e0 + d);
            lower.ends = (e0, d);
            lower.top_rng = Some(rng);
            e0
        } else {
            self.draw_top(&mut rng, scratch);
            self.order
                .standard
                .apply_all(&scratch.sorted[k0 - 1..n], &mut lower.x[k0..=n]);
            scratch.sorted[k0 - 1]
        }
    }
}

#[cfg(test)]
mod tests;
