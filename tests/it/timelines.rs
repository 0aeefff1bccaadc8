//! The strategies whose timeline is not a rule over one message per worker
//! (speculative copies, K-batch-sync, multi-message) against independent
//! event-queue simulations written here: one queue of timed events per
//! trial, popped in time order, with the master's state updated event by
//! event, and a generator of their own. The engine computes the same
//! timelines in closed passes over the draws; agreement is checked on the
//! means at a stated number of standard errors, and exactly where a
//! strategy reduces to `uncoded` on the same draws.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

use gcsim::comm::{Comm, Link};
use gcsim::dist::Dist;
use gcsim::engine::{self, Silent};
use gcsim::load::LoadModel;
use gcsim::report::{self, Row};
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::Study;

/// Bound on |z| for each comparison: a correct engine passes each of these
/// fixed-seed checks with probability about 1 − 10⁻⁵.
pub(super) const Z: f64 = 4.5;

/// Trials on each side.
pub(super) const TRIALS: u64 = 60_000;

/// A worker law: `shift + Exp(rate)`, every draw of a worker times
/// `slowdown` in an iteration in which it is slow (probability `p_slow`).
#[derive(Clone, Copy)]
pub(super) struct Law {
    pub(super) shift: f64,
    pub(super) rate: f64,
    pub(super) p_slow: f64,
    pub(super) slowdown: f64,
}

impl Law {
    pub(super) fn dist(&self) -> Dist {
        let base = if self.shift > 0.0 {
            Dist::shifted_exp(self.shift, self.rate).unwrap()
        } else {
            Dist::exp(self.rate).unwrap()
        };
        if self.p_slow > 0.0 {
            base.with_stragglers(self.p_slow, self.slowdown).unwrap()
        } else {
            base
        }
    }

    /// A worker's straggler state for one iteration: slow with probability
    /// `p_slow`, for every draw it makes in the iteration.
    pub(super) fn state(&self, rng: &mut Xoshiro256PlusPlus) -> bool {
        self.p_slow > 0.0 && rng.random::<f64>() < self.p_slow
    }

    /// The states of n workers.
    pub(super) fn states(&self, n: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<bool> {
        (0..n).map(|_| self.state(rng)).collect()
    }

    /// One draw of a worker in state `slow`.
    pub(super) fn draw(&self, slow: bool, rng: &mut Xoshiro256PlusPlus) -> f64 {
        let e: f64 = Exp1.sample(rng);
        let x = self.shift + e / self.rate;
        if slow { x * self.slowdown } else { x }
    }
}

pub(super) const EXP: Law = Law {
    shift: 0.0,
    rate: 1.0,
    p_slow: 0.0,
    slowdown: 1.0,
};
pub(super) const MIXTURE: Law = Law {
    shift: 0.0,
    rate: 1.0,
    p_slow: 0.1,
    slowdown: 8.0,
};
pub(super) const SHIFTED: Law = Law {
    shift: 0.5,
    rate: 2.0,
    p_slow: 0.0,
    slowdown: 1.0,
};

/// How results travel in a case: nothing, a constant τ on dedicated links,
/// a constant τ on one shared link.
#[derive(Clone, Copy, Debug)]
pub(super) enum Net {
    Free,
    Dedicated(f64),
    Shared(f64),
}

impl Net {
    pub(super) fn comm(self) -> Comm {
        match self {
            Net::Free => Comm::default(),
            Net::Dedicated(tau) => Comm::new(Some(tau), None, Link::Dedicated, 0.0).unwrap(),
            Net::Shared(tau) => Comm::new(Some(tau), None, Link::Shared, 0.0).unwrap(),
        }
    }
}

/// A timed event; ties are broken by insertion order.
#[derive(PartialEq)]
struct At<E>(f64, u64, E);

impl<E: PartialEq> Eq for At<E> {}
impl<E: PartialEq> PartialOrd for At<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E: PartialEq> Ord for At<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

/// A min-queue of events of kind `E`.
struct Queue<E> {
    heap: BinaryHeap<Reverse<At<E>>>,
    count: u64,
}

impl<E: PartialEq> Queue<E> {
    fn new() -> Self {
        Queue {
            heap: BinaryHeap::new(),
            count: 0,
        }
    }
    fn push(&mut self, t: f64, e: E) {
        self.count += 1;
        self.heap.push(Reverse(At(t, self.count, e)));
    }
    fn pop(&mut self) -> Option<(f64, E)> {
        self.heap.pop().map(|Reverse(At(t, _, e))| (t, e))
    }
}

/// The master's side of the network: a result done at `t` by a worker
/// arrives at the returned time. The shared link serves results in the
/// order they are handed over, which is the order they are done because
/// the callers hand them over from the event queue in time order.
pub(super) struct Link1 {
    pub(super) net: Net,
    pub(super) free: f64,
}

impl Link1 {
    pub(super) fn send(&mut self, t: f64) -> f64 {
        match self.net {
            Net::Free => t,
            Net::Dedicated(tau) => t + tau,
            Net::Shared(tau) => {
                self.free = self.free.max(t) + tau;
                self.free
            }
        }
    }
}

pub(super) fn mean_and_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Worker time for `load` under a model, from unit draws `units` (one
/// draw for the monotone models).
pub(super) fn at_load(model: LoadModel, load: usize, units: &[f64]) -> f64 {
    match model {
        LoadModel::Fixed => units[0],
        LoadModel::Scaled => load as f64 * units[0],
        LoadModel::Additive => units[..load].iter().sum(),
        LoadModel::Affine { unit_time } => unit_time * load as f64 + units[0],
    }
}

/// Multi-message by events: each worker's partial results are events in
/// one queue; a partition is covered at the first arrival of its gradient.
fn multi_message(n: usize, s: usize, law: Law, model: LoadModel, net: Net, rng: &mut Xoshiro256PlusPlus) -> f64 {
    #[derive(PartialEq)]
    enum Ev {
        Done(usize),
        Arrive(usize),
    }
    let mut q = Queue::new();
    for w in 0..n {
        let slow = law.state(rng);
        let units: Vec<f64> = (0..=s).map(|_| law.draw(slow, rng)).collect();
        for j in 1..=s + 1 {
            q.push(at_load(model, j, &units), Ev::Done((w + j - 1) % n));
        }
    }
    let mut link = Link1 { net, free: 0.0 };
    let mut covered = vec![false; n];
    let mut left = n;
    while let Some((t, ev)) = q.pop() {
        match ev {
            Ev::Done(p) => q.push(link.send(t), Ev::Arrive(p)),
            Ev::Arrive(p) => {
                if !covered[p] {
                    covered[p] = true;
                    left -= 1;
                    if left == 0 {
                        return t;
                    }
                }
            }
        }
    }
    unreachable!("every partition arrives")
}

/// Speculative copies by events: the master counts arrivals; at the
/// ⌈Q·n⌉-th it sets a timer for F times that moment; when the timer fires,
/// idle workers (those whose result is in, earliest first) take copies of
/// the tasks not yet in, in task order. Returns the iteration time and the
/// number of copies.
fn speculative(
    n: usize,
    (after, factor): (f64, f64),
    law: Law,
    model: LoadModel,
    net: Net,
    rng: &mut Xoshiro256PlusPlus,
) -> (f64, usize) {
    /// Done and Arrive carry (task, worker); an original has task = worker.
    #[derive(PartialEq)]
    enum Ev {
        Done(usize, usize),
        Arrive(usize, usize),
        Timer,
    }
    let mut q = Queue::new();
    let slow = law.states(n, rng);
    for (w, &slow) in slow.iter().enumerate() {
        q.push(at_load(model, 1, &[law.draw(slow, rng)]), Ev::Done(w, w));
    }
    let mut link = Link1 { net, free: 0.0 };
    let a = (after * n as f64).ceil() as usize;
    let (mut task_in, mut idle, mut left) = (vec![false; n], Vec::new(), n);
    let (mut arrivals, mut copies) = (0, 0);
    while let Some((t, ev)) = q.pop() {
        match ev {
            Ev::Done(task, worker) => q.push(link.send(t), Ev::Arrive(task, worker)),
            Ev::Arrive(task, worker) => {
                if worker == task {
                    idle.push(worker);
                    arrivals += 1;
                    if arrivals == a {
                        q.push(factor * t, Ev::Timer);
                    }
                }
                if !task_in[task] {
                    task_in[task] = true;
                    left -= 1;
                    if left == 0 {
                        return (t, copies);
                    }
                }
            }
            Ev::Timer => {
                let late: Vec<usize> = (0..n).filter(|&i| !task_in[i]).collect();
                for (&task, &worker) in late.iter().zip(idle.iter()) {
                    // The copy runs on `worker`, in its state.
                    let done = t + at_load(model, 1, &[law.draw(slow[worker], rng)]);
                    q.push(done, Ev::Done(task, worker));
                    copies += 1;
                }
            }
        }
    }
    unreachable!("every task arrives")
}

/// K-batch-sync by events: each worker's mini-batches in one queue; the
/// master counts arrivals to K.
fn k_batch_sync(n: usize, k: usize, law: Law, net: Net, rng: &mut Xoshiro256PlusPlus) -> f64 {
    #[derive(PartialEq)]
    enum Ev {
        Done(usize),
        Arrive,
    }
    let mut q = Queue::new();
    let slow = law.states(n, rng);
    for (w, &slow) in slow.iter().enumerate() {
        q.push(law.draw(slow, rng), Ev::Done(w));
    }
    let mut link = Link1 { net, free: 0.0 };
    let mut arrived = 0;
    while let Some((t, ev)) = q.pop() {
        match ev {
            Ev::Done(w) => {
                q.push(link.send(t), Ev::Arrive);
                q.push(t + law.draw(slow[w], rng), Ev::Done(w));
            }
            Ev::Arrive => {
                arrived += 1;
                if arrived == k {
                    return t;
                }
            }
        }
    }
    unreachable!("mini-batches never run out")
}

pub(super) fn scheme(kind: SchemeKind, n: usize, params: Params) -> Scheme {
    Scheme::new(kind, n, params).unwrap()
}

/// The engine's rows for `schemes` on `law`.
pub(super) fn engine_rows(n: usize, law: Law, model: LoadModel, net: Net, schemes: Vec<Scheme>, seed: u64) -> Vec<Row> {
    let study = Study::new(n, law.dist(), model, schemes, TRIALS, seed)
        .unwrap()
        .with_comm(net.comm());
    let outcome = engine::simulate(&study, &Silent);
    report::rows(&study, &outcome)
}

pub(super) fn agree(what: &str, row: &Row, reference: &[f64]) {
    let (m, se) = mean_and_se(reference);
    let se_row = row.std_err.expect("simulated");
    let z = (row.mean - m) / (se * se + se_row * se_row).sqrt();
    assert!(
        z.abs() < Z,
        "{what}: engine {} ± {se_row}, events {m} ± {se} (z = {z:.2})",
        row.mean
    );
}

#[test]
fn multi_message_matches_an_event_queue() {
    let n = 12;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(41);
    let cases = [
        (2, MIXTURE, LoadModel::Scaled, Net::Free),
        (3, EXP, LoadModel::Additive, Net::Free),
        (2, SHIFTED, LoadModel::Scaled, Net::Shared(0.3)),
        (1, MIXTURE, LoadModel::Fixed, Net::Dedicated(0.5)),
    ];
    for (i, (s, law, model, net)) in cases.into_iter().enumerate() {
        let p = Params {
            s: Some(s),
            ..Params::default()
        };
        let rows = engine_rows(
            n,
            law,
            model,
            net,
            vec![scheme(SchemeKind::MultiMessage, n, p)],
            i as u64,
        );
        let reference: Vec<f64> = (0..TRIALS)
            .map(|_| multi_message(n, s, law, model, net, &mut rng))
            .collect();
        agree(&format!("multi-message s={s} {model} {net:?}"), &rows[0], &reference);
        assert!(rows[0].exact && rows[0].data_fraction == Some(1.0));
    }
}

#[test]
fn speculative_matches_an_event_queue() {
    let n = 20;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(43);
    let cases = [
        ((0.75, 1.0), MIXTURE, LoadModel::Fixed, Net::Free),
        ((0.8, 1.5), EXP, LoadModel::Scaled, Net::Free),
        // Q < 1/2: fewer idle workers than late tasks.
        ((0.3, 1.0), MIXTURE, LoadModel::Fixed, Net::Free),
        ((0.72, 1.2), SHIFTED, LoadModel::Additive, Net::Dedicated(0.4)),
        ((0.42, 1.0), EXP, LoadModel::Fixed, Net::Free),
        ((0.6, 1.0), MIXTURE, LoadModel::Fixed, Net::Shared(0.05)),
    ];
    for (i, (qf, law, model, net)) in cases.into_iter().enumerate() {
        let p = Params {
            speculate_after: Some(qf.0),
            speculate_factor: Some(qf.1),
            ..Params::default()
        };
        let rows = engine_rows(
            n,
            law,
            model,
            net,
            vec![scheme(SchemeKind::Speculative, n, p)],
            10 + i as u64,
        );
        let (reference, copies): (Vec<f64>, Vec<f64>) = (0..TRIALS)
            .map(|_| {
                let (t, c) = speculative(n, qf, law, model, net, &mut rng);
                (t, c as f64 / n as f64)
            })
            .unzip();
        let what = format!("speculative {qf:?} {model} {net:?}");
        agree(&what, &rows[0], &reference);
        assert!(rows[0].exact);
        // The copies per task, over the engine's first 20 000 trials.
        let (m, se) = mean_and_se(&copies);
        let se_row = se * (TRIALS as f64 / 20_000.0).sqrt();
        let got = rows[0].extra_work.expect("speculative reports its extra work");
        assert!(
            (got - m).abs() <= Z * (se * se + se_row * se_row).sqrt() + 1e-12,
            "{what}: extra work {got} vs events {m} ± {se}"
        );
    }
}

#[test]
fn k_batch_sync_matches_an_event_queue() {
    let n = 10;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(47);
    let cases = [
        (7, SHIFTED, Net::Free),
        (10, MIXTURE, Net::Free),
        (3, SHIFTED, Net::Shared(0.2)),
        (5, MIXTURE, Net::Dedicated(0.3)),
    ];
    for (i, (k, law, net)) in cases.into_iter().enumerate() {
        let p = Params {
            k: Some(k),
            ..Params::default()
        };
        let rows = engine_rows(
            n,
            law,
            LoadModel::Fixed,
            net,
            vec![scheme(SchemeKind::KBatchSync, n, p)],
            20 + i as u64,
        );
        let reference: Vec<f64> = (0..TRIALS).map(|_| k_batch_sync(n, k, law, net, &mut rng)).collect();
        agree(&format!("k-batch-sync K={k} {net:?}"), &rows[0], &reference);
        let share = k as f64 / n as f64;
        assert_eq!(rows[0].data_fraction, Some(share));
        assert!(!rows[0].exact && (rows[0].approx_error.unwrap() - (1.0 - share)).abs() < 1e-12);
    }
}

/// Exponential workers: K-batch-sync's K-th arrival is Gamma(K, nμ), mean
/// K/(nμ), reported as the analytic mean and met by the simulation.
#[test]
fn k_batch_sync_on_exponential_workers_is_gamma() {
    let n = 40;
    let law = Law { rate: 2.0, ..EXP };
    let schemes: Vec<Scheme> = [1, 13, 40]
        .map(|k| {
            scheme(
                SchemeKind::KBatchSync,
                n,
                Params {
                    k: Some(k),
                    ..Params::default()
                },
            )
        })
        .into();
    for model in [LoadModel::Fixed, LoadModel::Scaled, LoadModel::Additive] {
        let rows = engine_rows(n, law, model, Net::Free, schemes.clone(), 5);
        for (row, k) in rows.iter().zip([1.0, 13.0, 40.0]) {
            let exact = k / (n as f64 * 2.0);
            assert_eq!(row.analytic_mean, Some(exact), "{model} K={k}");
            let se = row.std_err.unwrap();
            assert!((row.mean - exact).abs() < Z * se, "{model} K={k}: {} ± {se}", row.mean);
        }
    }
    // No exact law where a mini-batch is not one exponential draw.
    let study = Study::new(n, law.dist(), LoadModel::Affine { unit_time: 0.1 }, schemes, 10, 0).unwrap();
    assert!(study.exact_law(&study.schemes()[0]).is_none());
}

/// Where a strategy is `uncoded` on the same draws (speculative with Q = 1
/// never copies; multi-message with s = 0 sends each worker's own
/// partition), its times are the baseline's, trial by trial: a speedup of
/// exactly 1.
#[test]
fn degenerate_strategies_are_uncoded_on_the_same_draws() {
    let n = 9;
    let schemes = vec![
        scheme(
            SchemeKind::Speculative,
            n,
            Params {
                speculate_after: Some(1.0),
                ..Params::default()
            },
        ),
        scheme(
            SchemeKind::MultiMessage,
            n,
            Params {
                s: Some(0),
                ..Params::default()
            },
        ),
    ];
    for model in [LoadModel::Scaled, LoadModel::Additive] {
        for row in engine_rows(n, MIXTURE, model, Net::Shared(0.1), schemes.clone(), 9) {
            assert_eq!(row.speedup, Some(1.0), "{model} {}", row.scheme);
            assert_eq!(row.p99_speedup, Some(1.0), "{model} {}", row.scheme);
        }
    }
}
