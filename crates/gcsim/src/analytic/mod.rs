//! The exact law of the iteration time for i.i.d. workers.
//!
//! With n i.i.d. worker times of CDF F after the load model:
//! - k-of-n recovery (uncoded, ignore, crc, comm-efficient, mds): the k-th
//!   order statistic, `P(T ≤ t) = I_{F(t)}(k, n−k+1)` (David & Nagaraja
//!   2003, §2.1; Lee et al. 2017 for mds);
//! - frc's groups of r (Tandon et al. 2017, §4.1): `P(T ≤ t) = (1 − S(t)^r)^g`.
//!
//! Means use the closed forms where they exist: exponential
//! `(H_n − H_{n−k})/μ` and frc `H_g/(rμ)`; Pareto
//! `x_m·Γ(n+1)Γ(n−k+1−1/α) / (Γ(n−k+1)Γ(n+1−1/α))`, and frc through the group
//! minimum, which is Pareto with index rα. Otherwise the mean is
//! `y₀ + ∫ P(Y > y) dy`, integrated numerically (`mean.rs`); log-normal and
//! Weibull workers always take this path (all their moments are finite). A mean is
//! infinite exactly when the tail index says so, never because an integral
//! failed.
//!
//! K-batch-sync SGD (Dutta et al. 2018) on exponential workers of rate μ
//! whose mini-batch time is the draw itself (`fixed`, `scaled` and
//! `additive` at load 1): each worker's completions are a Poisson process
//! of rate μ, so all n together are one of rate nμ and the K-th completion
//! is Gamma(K, nμ), of mean K/(nμ).
//!
//! A straggler's slow state belongs to the worker for the whole iteration
//! and slows every draw it makes. Under `additive` a worker of ℓ units is
//! then `slowdown` times the sum of ℓ base draws with probability
//! `p_slow`: `(1 − p)·F₀^{*ℓ}(x) + p·F₀^{*ℓ}(x/slowdown)` (see `worker.rs`),
//! still i.i.d. across workers. The strategies' mini-batches of one
//! worker share its state, so their laws mix over the number of slow
//! workers ([`groups::GroupLaw::slow_workers`]).
//!
//! [`iteration_law`] returns `None` where no exact law is implemented:
//! `additive` loads with a Pareto, log-normal or Weibull base, or with a
//! non-integer load ℓ (mds with k ∤ n); the speculative, multi-message and
//! partial timelines; k-batch-sync and the asynchronous strategies on
//! other laws or with a straggler mixture (which [`groups`] takes); and
//! workers that slow down in groups, which are not independent.
//!
//! Beside it, [`classes`] gives the law of independent workers of several
//! laws (non-identical order statistics), and [`groups`] that of i.i.d.
//! workers with group slowdowns under k of n (and frc where each of its
//! groups lies in one slowdown group) and a one-draw load model: given the
//! number m of workers in slow groups they are two classes, so the law is
//! the mixture `Σ_m P(m)·P(T ≤ t | m)` with m = G·J + r·B,
//! J ~ Binomial(⌊n/G⌋, P) and B ~ Bernoulli(P) for a last group of
//! r = n mod G workers.

pub(crate) mod binomial;
pub mod classes;
pub mod groups;
mod mean;
mod numeric;
mod special;
mod worker;

use crate::dist::{Base, Dist};
use crate::load::LoadModel;
use crate::scheme::{Rule, Scheme, Strategy};

use worker::{Order, WorkerLaw};

/// The exact law of one iteration's time for a configuration with i.i.d.
/// workers: `T = a·Y + b`, where `Y` is an order statistic of n i.i.d. worker
/// variables.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterationLaw {
    worker: WorkerLaw,
    order: Order,
    /// Multiplier a > 0 of the load model.
    scale: f64,
    /// Offset b of the load model.
    offset: f64,
    /// The deadline in the variable Y (see [`IterationLaw::with_deadline`]).
    deadline: Option<f64>,
}

/// The iteration-time law of `scheme` on i.i.d. workers drawn from `dist`
/// under `load_model`.
///
/// `None` where the theory here gives no exact answer: `additive` loads with
/// a Pareto, log-normal or Weibull base, or with a non-integer load; the
/// strategies other than K-batch-sync and the asynchronous ones on
/// exponential workers without a straggler mixture (`p_slow` strictly
/// between 0 and 1 and `slowdown` > 1), whose law with one is
/// [`groups::GroupLaw::slow_workers`].
pub fn iteration_law(dist: &Dist, load_model: &LoadModel, scheme: &Scheme) -> Option<IterationLaw> {
    if dist.groups().is_some() {
        // The workers of a group are not independent.
        return None;
    }
    let dist = simplify(dist)?;
    match scheme.strategy() {
        Some(Strategy::KBatchSync { k } | Strategy::Async { k, batch: true }) => {
            return k_batch_sync(&dist, load_model, scheme.n(), k);
        }
        Some(Strategy::Async { k, batch: false }) => return k_async(&dist, load_model, scheme.n(), k),
        Some(_) => return None,
        None => {}
    }
    let load = scheme.load();
    let (worker, scale, offset) = match *load_model {
        LoadModel::Fixed => (WorkerLaw::Dist(dist), 1.0, 0.0),
        LoadModel::Scaled => (WorkerLaw::Dist(dist), load, 0.0),
        LoadModel::Affine { unit_time } => (WorkerLaw::Dist(dist), 1.0, unit_time * load),
        LoadModel::Additive => {
            if load.fract() != 0.0 || load < 1.0 {
                return None;
            }
            let (shift, rate) = dist.base().shifted_exponential()?;
            // A slow worker is slow for all its ℓ units: its sum is
            // `slowdown` times a normal worker's.
            let worker = WorkerLaw::Gamma {
                shape: load,
                rate,
                shift: load * shift,
                slow: dist.stragglers(),
            };
            (worker, 1.0, 0.0)
        }
    };
    let n = scheme.n() as u64;
    let order = match scheme.rule() {
        Rule::KOfN(k) => Order::KOfN { n, k: k as u64 },
        Rule::Groups { size } => Order::Groups {
            size: size as u64,
            groups: n / size as u64,
        },
    };
    let law = IterationLaw {
        worker,
        order,
        scale,
        offset,
        deadline: None,
    };
    Some(match scheme.deadline() {
        Some(t) => law.with_deadline(t),
        None => law,
    })
}

/// K-batch-sync's K-th completion, Gamma(K, nμ), where the mini-batch
/// time is an exponential draw of rate μ (see the module notes). The same
/// law is K-batch-async's time per update: the n workers' streams of
/// mini-batches merge into one Poisson stream of rate nμ, which never
/// restarts, so each update waits for K more of its arrivals.
fn k_batch_sync(dist: &Dist, load_model: &LoadModel, n: usize, k: usize) -> Option<IterationLaw> {
    let rate = memoryless(dist, load_model)?;
    Some(kth_arrival(k, n as f64 * rate))
}

/// Gamma(K, rate): the K-th arrival of one Poisson stream, as the first of one "worker".
fn kth_arrival(k: usize, rate: f64) -> IterationLaw {
    IterationLaw {
        worker: WorkerLaw::Gamma {
            shape: k as f64,
            rate,
            shift: 0.0,
            slow: None,
        },
        order: Order::KOfN { n: 1, k: 1 },
        scale: 1.0,
        offset: 0.0,
        deadline: None,
    }
}

/// The mean staleness of an asynchronous strategy's gradients (see
/// [`Strategy::Async`]) on exponential workers, after the strategy's
/// warm-up of W updates; `None` for other schemes and laws.
///
/// K-async: after every update all n workers are computing with Exp(μ)
/// times to go, so the K that finish next are a uniformly random K-subset,
/// independent of the past. A gradient in update W + 1 missed each earlier
/// update with probability q = 1 − K/n, back to the model its worker
/// started on: P(staleness ≥ j) = q^j for j ≤ W (a worker never included
/// computes on model 0), so E = Σ_{j=1}^{W} q^j = q(1 − q^W)/(1 − q).
///
/// K-batch-async: the arrivals are one stream whose senders are i.i.d.
/// uniform over the workers. A gradient that is the i-th arrival was begun
/// right after its worker's previous arrival, N arrivals earlier, with N
/// geometric (P(N ≥ m) = q^m, q = 1 − 1/n) and cut at i − 1 (the first
/// mini-batch, begun at time 0 on model 0). Its staleness is the number of
/// update boundaries (every K-th arrival) among those N arrivals and its
/// own position; averaged over the K positions of the recorded update,
/// E = (1/K)·Σ_{m=1}^{WK} q^m = (n − 1)(1 − q^{WK})/K, which is (n − 1)/K
/// but for e^(−WK/n) < e⁻⁸.
pub fn staleness(dist: &Dist, load_model: &LoadModel, scheme: &Scheme) -> Option<f64> {
    let Some(Strategy::Async { k, batch }) = scheme.strategy() else {
        return None;
    };
    if dist.groups().is_some() {
        return None;
    }
    memoryless(&simplify(dist)?, load_model)?;
    let n = scheme.n();
    let w = Strategy::warmup_updates(n, k);
    let sum = |q: f64, terms: usize| {
        if q == 0.0 {
            0.0
        } else {
            q * (1.0 - q.powf(terms as f64)) / (1.0 - q)
        }
    };
    Some(if batch {
        sum(1.0 - 1.0 / n as f64, w * k) / k as f64
    } else {
        sum(1.0 - k as f64 / n as f64, w)
    })
}

/// The rate μ where a gradient of load 1 takes an Exp(μ) time: every worker
/// computes a memoryless stream of them.
pub(super) fn memoryless(dist: &Dist, load_model: &LoadModel) -> Option<f64> {
    let one_draw = match *load_model {
        LoadModel::Fixed | LoadModel::Scaled | LoadModel::Additive => true,
        LoadModel::Affine { unit_time } => unit_time == 0.0,
    };
    match dist.base() {
        Base::Exp { rate } if one_draw && dist.stragglers().is_none() => Some(rate),
        _ => None,
    }
}

/// K-async on exponential workers (Dutta et al. 2018, Theorem 3's setting):
/// right after an update every worker is computing (the K that sent restart,
/// the others' remaining times are Exp(μ) again by memorylessness), so the
/// time to the next update is the K-th of n Exp(μ) times, whatever the
/// staleness.
fn k_async(dist: &Dist, load_model: &LoadModel, n: usize, k: usize) -> Option<IterationLaw> {
    let rate = memoryless(dist, load_model)?;
    Some(IterationLaw {
        worker: WorkerLaw::Dist(Dist::exp(rate).expect("a valid rate")),
        order: Order::KOfN {
            n: n as u64,
            k: k as u64,
        },
        scale: 1.0,
        offset: 0.0,
        deadline: None,
    })
}

/// Folds a straggler mixture that is not one (`p_slow` = 0, `slowdown` = 1,
/// or `p_slow` = 1, which is the base law scaled by `slowdown`) into a plain
/// base law, so that the closed forms apply to it.
fn simplify(dist: &Dist) -> Option<Dist> {
    let Some((p_slow, slowdown)) = dist.stragglers() else {
        return Some(*dist);
    };
    let c = if p_slow == 0.0 || slowdown == 1.0 {
        1.0
    } else if p_slow == 1.0 {
        slowdown
    } else {
        return Some(*dist);
    };
    Dist::checked(dist.base().scaled(c)).ok()
}

impl IterationLaw {
    /// The law of min(T, max(t, T₁)), with T₁ the first of the n workers to
    /// finish: the master proceeds at the deadline `t` with the workers that
    /// have finished, or with the first to finish if none has (the `timeout`
    /// scheme). The rule's time is at least T₁, so
    /// `P(min(T, max(t, T₁)) ≤ x)` is `P(T ≤ x)` for x < t and
    /// `P(T₁ ≤ x) = 1 − S(x)ⁿ` for x ≥ t: an atom at t of the probability
    /// that some but not every worker the rule needs has finished by t.
    pub(crate) fn with_deadline(self, t: f64) -> Self {
        Self {
            deadline: Some(self.y_of(t)),
            ..self
        }
    }

    /// Under a deadline with the rule "all n" (the `timeout` scheme), the
    /// mean share of the n workers whose results the master has when it
    /// proceeds: all n if they finish by the deadline d, else those finished
    /// by d, else the first alone, so E\[count\]/n = F(d) + S(d)ⁿ/n. `None`
    /// without a deadline or for another rule.
    pub fn deadline_share(&self) -> Option<f64> {
        let d = self.deadline?;
        let Order::KOfN { n, k } = self.order else { return None };
        if k != n {
            return None;
        }
        let (f, s) = self.worker.cdf_sf(d);
        Some(f + (n as f64 * s.ln()).exp() / n as f64)
    }

    /// The order statistic that decides the law at `y`: the first finish
    /// at and past the deadline, the rule's otherwise.
    fn order_at(&self, y: f64) -> Order {
        match (self.deadline, self.order) {
            (Some(d), Order::KOfN { n, .. }) if y >= d => Order::KOfN { n, k: 1 },
            (Some(d), Order::Groups { size, groups }) if y >= d => Order::KOfN { n: size * groups, k: 1 },
            (_, order) => order,
        }
    }

    /// `P(T ≤ t)`.
    pub fn cdf(&self, t: f64) -> f64 {
        self.cdf_sf_y(self.y_of(t)).0
    }

    /// `P(T < t)`: the CDF's left limit, below it only at a deadline's atom.
    pub(crate) fn cdf_below(&self, t: f64) -> f64 {
        let y = self.y_of(t);
        match self.deadline {
            Some(d) if y == d => {
                let (f, s) = self.worker.cdf_sf(y);
                self.order.cdf_sf(f, s).0
            }
            _ => self.cdf(t),
        }
    }

    /// `P(T > t)`, computed directly so that it keeps its relative accuracy
    /// in the upper tail.
    pub fn sf(&self, t: f64) -> f64 {
        self.cdf_sf_y(self.y_of(t)).1
    }

    /// The `q`-quantile `inf{t : P(T ≤ t) ≥ q}`: the support minimum for
    /// q ≤ 0, `INFINITY` for q ≥ 1 (and where the quantile exceeds
    /// `f64::MAX`), NaN for NaN, else a bracketed Brent root of the CDF (of
    /// the survival function for q ≥ ½) to about 1e-13 relative.
    ///
    /// Cost: some 30–60 evaluations of the CDF.
    pub fn quantile(&self, q: f64) -> f64 {
        self.t_of(self.quantile_y(q))
    }

    /// The mean; `f64::INFINITY` where it is infinite, never NaN.
    ///
    /// Closed form where one exists (microseconds); otherwise numerical
    /// integration of the survival function to about 1e-10 relative
    /// (milliseconds for n ≤ 10⁴).
    pub fn mean(&self) -> f64 {
        let Some(d) = self.deadline else {
            return self.t_of(self.mean_y());
        };
        // E[Z] = E[T₁] + ∫_{y₀}^{d} P(T₁ ≤ y < T) dy: below the deadline
        // Z is the rule's time, past it the first finish's.
        let first = Self {
            order: self.order_at(f64::INFINITY),
            deadline: None,
            ..*self
        };
        let y0 = self.worker.min();
        let mut gap = |y: f64| {
            let (f, s) = self.worker.cdf_sf(y);
            (self.order.cdf_sf(f, s).1 - first.order.cdf_sf(f, s).1).max(0.0)
        };
        let below = if d > y0 {
            numeric::integrate(&mut gap, y0, d, 1e-13 * (d - y0))
        } else {
            0.0
        };
        self.t_of(first.mean_y() + below)
    }

    /// The mean of the variable Y without a deadline.
    fn mean_y(&self) -> f64 {
        let alpha = self.worker.tail_index();
        if alpha * self.order.tail_power() as f64 <= 1.0 {
            return f64::INFINITY;
        }
        mean::closed_form(&self.worker, &self.order).unwrap_or_else(|| mean::integrated(self))
    }

    /// The smallest value the iteration time can take.
    pub fn support_min(&self) -> f64 {
        self.t_of(self.worker.min())
    }

    fn y_of(&self, t: f64) -> f64 {
        (t - self.offset) / self.scale
    }

    fn t_of(&self, y: f64) -> f64 {
        self.scale * y + self.offset
    }

    fn cdf_sf_y(&self, y: f64) -> (f64, f64) {
        if y.is_nan() {
            return (f64::NAN, f64::NAN);
        }
        let (f, s) = self.worker.cdf_sf(y);
        self.order_at(y).cdf_sf(f, s)
    }

    fn quantile_y(&self, q: f64) -> f64 {
        if q.is_nan() {
            return f64::NAN;
        }
        let y0 = self.worker.min();
        if q <= 0.0 {
            return y0;
        }
        if q >= 1.0 {
            return f64::INFINITY;
        }
        if let Some(d) = self.deadline.filter(|&d| d > y0) {
            // The atom at the deadline: the quantile is d exactly where
            // P(Z < d) < q ≤ P(Z ≤ d), each side read where it has its digits.
            let (f, s) = self.worker.cdf_sf(d);
            let (before, after) = (self.order.cdf_sf(f, s), self.order_at(d).cdf_sf(f, s));
            let at_atom = if q < 0.5 {
                before.0 < q && q <= after.0
            } else {
                before.1 > 1.0 - q && 1.0 - q >= after.1
            };
            if at_atom {
                return d;
            }
        }
        // g is increasing in y and changes sign at the quantile; the survival
        // side keeps the digits of 1 − q when q is close to 1.
        let mut g = |y: f64| {
            let (c, s) = self.cdf_sf_y(y);
            if q < 0.5 { c - q } else { (1.0 - q) - s }
        };
        // A law whose spread overflows (Pareto of tiny shape, log-normal of
        // huge μ) starts from the largest finite step, so that every search
        // below moves by finite steps and ends.
        let spread = self.worker.spread();
        let mut step = if spread.is_finite() && spread > 0.0 {
            spread
        } else {
            f64::MAX / 4.0
        };
        if g(y0 + step) < 0.0 {
            while g(y0 + 2.0 * step) < 0.0 {
                if step >= f64::MAX / 4.0 {
                    // The quantile is beyond the largest finite number.
                    return f64::INFINITY;
                }
                step *= 2.0;
            }
            let (lo, hi) = (y0 + step, y0 + 2.0 * step);
            numeric::brent(&mut g, lo, hi, 1e-14 * hi.abs())
        } else {
            while g(y0 + 0.5 * step) >= 0.0 && step > f64::MIN_POSITIVE * 4.0 {
                step *= 0.5;
            }
            let (lo, hi) = (y0 + 0.5 * step, y0 + step);
            numeric::brent(&mut g, lo, hi, 1e-14 * hi.abs())
        }
    }
}

/// The exact law of the computation alone: of i.i.d. workers, of worker
/// classes, or of i.i.d. workers that slow down in groups.
#[derive(Debug, Clone, PartialEq)]
pub enum ComputationLaw {
    /// i.i.d. workers.
    Iid(IterationLaw),
    /// Classes of workers (non-identical order statistics).
    Classes(classes::ClassLaw),
    /// i.i.d. workers with group slowdowns (a mixture over the slow groups).
    Groups(groups::GroupLaw),
}

impl ComputationLaw {
    fn cdf(&self, t: f64) -> f64 {
        match self {
            ComputationLaw::Iid(l) => l.cdf(t),
            ComputationLaw::Classes(l) => l.cdf(t),
            ComputationLaw::Groups(l) => l.cdf(t),
        }
    }

    /// The CDF's left limit: below the CDF only at a deadline's atom, which
    /// only the i.i.d. law has (the others have no deadline).
    fn cdf_below(&self, t: f64) -> f64 {
        match self {
            ComputationLaw::Iid(l) => l.cdf_below(t),
            ComputationLaw::Classes(l) => l.cdf(t),
            ComputationLaw::Groups(l) => l.cdf(t),
        }
    }

    fn sf(&self, t: f64) -> f64 {
        match self {
            ComputationLaw::Iid(l) => l.sf(t),
            ComputationLaw::Classes(l) => l.sf(t),
            ComputationLaw::Groups(l) => l.sf(t),
        }
    }

    fn quantile(&self, q: f64) -> f64 {
        match self {
            ComputationLaw::Iid(l) => l.quantile(q),
            ComputationLaw::Classes(l) => l.quantile(q),
            ComputationLaw::Groups(l) => l.quantile(q),
        }
    }

    fn mean(&self) -> f64 {
        match self {
            ComputationLaw::Iid(l) => l.mean(),
            ComputationLaw::Classes(l) => l.mean(),
            ComputationLaw::Groups(l) => l.mean(),
        }
    }
}

/// An exact iteration-time law: the computation's law shifted by a
/// constant, the time every arrival takes on top of its worker's finish
/// (τ·message on a dedicated link with constant τ) plus the decoding time.
/// Obtained from [`crate::study::Study::exact_law`].
#[derive(Debug, Clone, PartialEq)]
pub struct ExactLaw {
    computation: ComputationLaw,
    shift: f64,
}

impl ExactLaw {
    /// The law of `computation` shifted by `shift`.
    pub fn new(computation: ComputationLaw, shift: f64) -> Self {
        Self { computation, shift }
    }

    /// P(T ≤ t).
    pub fn cdf(&self, t: f64) -> f64 {
        self.computation.cdf(t - self.shift)
    }

    /// P(T < t): the CDF's left limit, below it only at a deadline's atom.
    pub(crate) fn cdf_below(&self, t: f64) -> f64 {
        self.computation.cdf_below(t - self.shift)
    }

    /// P(T > t).
    pub fn sf(&self, t: f64) -> f64 {
        self.computation.sf(t - self.shift)
    }

    /// The q-quantile.
    pub fn quantile(&self, q: f64) -> f64 {
        self.computation.quantile(q) + self.shift
    }

    /// The mean (infinite where it is).
    pub fn mean(&self) -> f64 {
        self.computation.mean() + self.shift
    }

    /// Under the `timeout` scheme's deadline, the mean share of the workers
    /// whose results are in the update (see [`IterationLaw::deadline_share`]).
    pub fn deadline_share(&self) -> Option<f64> {
        match &self.computation {
            ComputationLaw::Iid(l) => l.deadline_share(),
            ComputationLaw::Classes(_) | ComputationLaw::Groups(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::{Params, SchemeKind};
    use std::sync::mpsc;
    use std::time::Duration;

    /// A law whose spread is as wide as the ranges allow (the smallest Pareto
    /// and Weibull shapes, the largest scale and slowdown) must not send the quantile search into
    /// an endless halving of an infinite step. Each quantile must come back,
    /// in far less than the 10 s allowed here.
    #[test]
    fn quantiles_of_overflowing_laws_end() {
        let crc = Scheme::new(
            SchemeKind::Crc,
            10,
            Params {
                s: Some(2),
                ..Params::default()
            },
        )
        .unwrap();
        let laws = [
            Dist::pareto(1.0, 0.1).unwrap(),
            Dist::weibull(1e100, 0.05).unwrap(),
            Dist::pareto(1e100, 0.1).unwrap().with_stragglers(0.5, 1e100).unwrap(),
            Dist::lognormal(230.0, 20.0).unwrap(),
        ];
        for dist in laws {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let law = iteration_law(&dist, &LoadModel::Fixed, &crc).unwrap();
                tx.send([0.5, 0.99].map(|q| law.quantile(q))).unwrap();
            });
            let q = rx
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("{dist}: the quantile search did not end"));
            assert!(q.iter().all(|x| !x.is_nan() && *x > 0.0), "{dist}: {q:?}");
        }
    }
}
