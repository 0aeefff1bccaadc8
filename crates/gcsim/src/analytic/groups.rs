//! Exact laws of i.i.d. workers that slow down together in groups: a
//! mixture over the number of workers in slow groups.
//!
//! Workers w = 0..n fall in consecutive groups of G (worker w in group
//! ⌊w/G⌋, the last group r = n mod G workers when G ∤ n); in each iteration
//! each group is slow with probability P, independently, and then its
//! workers' times are F times their own (law L, a worker's law without
//! groups). Under a k-of-n rule the iteration time depends on which
//! workers are slow only through their number
//!
//! `m = G·J + r·B`, J ~ Binomial(⌊n/G⌋, P), B ~ Bernoulli(P) (no B when r = 0),
//!
//! and given m the workers are independent, n − m of law L and m of law
//! F·L: two worker classes (`classes.rs`; i.i.d. at m = 0 and m = n). So
//!
//! `P(T ≤ t) = Σ_m w_m·P(T ≤ t | m)`, `w_{Gj+rb} = C(⌊n/G⌋, j)·P^j·(1−P)^(⌊n/G⌋−j)·P^b·(1−P)^(1−b)`,
//!
//! with `E[T] = Σ_m w_m·E[T | m]` and quantiles Brent roots of the mixture's
//! CDF (David & Nagaraja 2003, §5.2, conditioned on the slow groups). The
//! values G·j + r·b are distinct (r < G), so each m has one weight.
//!
//! frc's groups of s + 1 consecutive workers: where each lies in one
//! slowdown group (s + 1 divides G, as both partitions start at 0 and s + 1
//! divides n; or one slowdown group holds all n), given m exactly m/(s+1)
//! of them are slow, which is the class law with the m slow workers placed
//! last. Otherwise an frc group straddles slowdown groups and the law is
//! not a mixture over m; it is not computed.
//!
//! Weights below 10⁻¹⁶ are dropped and the rest rescaled to sum to 1, which
//! keeps the values of J within about 8.5 standard deviations of its mean
//! (twice as many terms with a partial group) and the CDF exact to about
//! 10⁻¹⁵ absolute. Every term costs about n operations per evaluation, so
//! a law of more than [`MAX_GROUP_LAW_WORK`] terms × workers is left to
//! the simulation.

use super::classes::{ClassLaw, MAX_CLASS_LAW_N};
use super::numeric::brent;
use super::{ComputationLaw, binomial, iteration_law, kth_arrival, memoryless};
use crate::dist::{Dist, Groups};
use crate::load::LoadModel;
use crate::scheme::{Rule, Scheme, SchemeKind, Strategy};
use crate::workers::Workers;

/// Most terms × workers of a group law that is computed: a term costs about
/// n operations per evaluation and a mean some thousand evaluations of
/// every term, so this keeps a mean under about half a second (n = 300 at
/// G = 1, n = 1000 at G = 20, for P = 0.2). The terms number about
/// 17·√(⌊n/G⌋·P(1−P)) + 1, twice that with a partial group.
pub const MAX_GROUP_LAW_WORK: usize = 1 << 15;

/// Mixture weights below this are dropped.
const MIN_WEIGHT: f64 = 1e-16;

/// The exact iteration-time law of i.i.d. workers with group slowdowns.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupLaw {
    /// `(w_m, law of T given m slow workers)`, ascending in m.
    terms: Vec<(f64, ComputationLaw)>,
    mean_infinite: bool,
}

impl GroupLaw {
    /// The law of `scheme` on n = `scheme.n()` workers of law `dist`, which
    /// has groups, under a load model that is one draw per worker; `None`
    /// for a deadline, a strategy, frc whose groups straddle slowdown
    /// groups, more than [`MAX_CLASS_LAW_N`] workers, or more work than
    /// [`MAX_GROUP_LAW_WORK`].
    pub fn new(dist: &Dist, model: &LoadModel, scheme: &Scheme, mean_infinite: bool) -> Option<Self> {
        let groups = dist.groups()?;
        let n = scheme.n();
        // A deadline's law for classes is not implemented: simulated.
        if !model.is_monotone() || n > MAX_CLASS_LAW_N || scheme.deadline().is_some() || scheme.strategy().is_some() {
            return None;
        }
        if let Rule::Groups { size } = scheme.rule()
            && !(0..n / size).all(|g| g * size / groups.size == ((g + 1) * size - 1) / groups.size)
        {
            // An frc group straddles slowdown groups.
            return None;
        }
        let weights = weights(n, groups);
        if weights.len().saturating_mul(n) > MAX_GROUP_LAW_WORK {
            return None;
        }
        let normal = dist.independent();
        let slow = normal.scaled(groups.slowdown).ok()?;
        let terms = weights
            .into_iter()
            .map(|(m, w)| {
                let law = if m == 0 {
                    ComputationLaw::Iid(iteration_law(&normal, model, scheme)?)
                } else if m == n {
                    ComputationLaw::Iid(iteration_law(&slow, model, scheme)?)
                } else {
                    // The slow workers last: frc's groups see them whole.
                    let workers = Workers::Classes {
                        classes: vec![(n - m, normal), (m, slow)],
                        shuffle: false,
                    };
                    ComputationLaw::Classes(ClassLaw::new(&workers, model, scheme, mean_infinite)?)
                };
                Some((w, law))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self { terms, mean_infinite })
    }

    /// The time per update of K-batch-sync, K-batch-async or K-async on
    /// i.i.d. exponential workers (rate μ at load 1) of a straggler mixture
    /// (`p_slow` = p, `slowdown` = F), whose slow or normal state holds for
    /// the whole iteration, every mini-batch of a slow worker slow: the
    /// groups of one worker above. Given m slow workers, the n − m normal
    /// ones complete mini-batches as Poisson processes of rate μ and the m
    /// slow ones of rate μ/F, so the K-batch strategies' K-th completion is
    /// Gamma(K, (n − m)μ + mμ/F) (one Poisson stream, as in
    /// [`super::iteration_law`]), and K-async's update interval is the K-th
    /// smallest of n − m Exp(μ) and m Exp(μ/F) times (each worker's time
    /// left is exponential at its own rate after every update, by
    /// memorylessness given the states). `None` for other schemes and laws,
    /// and for K-async on more than [`MAX_CLASS_LAW_N`] workers or more
    /// work than [`MAX_GROUP_LAW_WORK`].
    pub fn slow_workers(dist: &Dist, model: &LoadModel, scheme: &Scheme) -> Option<Self> {
        let (p, slowdown) = dist.stragglers()?;
        if dist.groups().is_some() || !(p > 0.0 && p < 1.0 && slowdown > 1.0) {
            return None;
        }
        let rate = memoryless(&Dist::checked(dist.base()).ok()?, model)?;
        let (k, batch) = match scheme.strategy() {
            Some(Strategy::KBatchSync { k }) => (k, true),
            Some(Strategy::Async { k, batch }) => (k, batch),
            _ => return None,
        };
        let n = scheme.n();
        let weights = weights(n, Groups { size: 1, p, slowdown });
        if !batch && (n > MAX_CLASS_LAW_N || weights.len().saturating_mul(n) > MAX_GROUP_LAW_WORK) {
            return None;
        }
        let (normal, slow) = (Dist::exp(rate).ok()?, Dist::exp(rate / slowdown).ok()?);
        let k_of_n = Scheme::with_tolerance(SchemeKind::Ignore, n, n - k).ok()?;
        let terms = weights
            .into_iter()
            .map(|(m, w)| {
                let law = if batch {
                    ComputationLaw::Iid(kth_arrival(k, (n - m) as f64 * rate + m as f64 * rate / slowdown))
                } else if m == 0 || m == n {
                    let one = if m == 0 { normal } else { slow };
                    ComputationLaw::Iid(iteration_law(&one, &LoadModel::Fixed, &k_of_n)?)
                } else {
                    let workers = Workers::Classes {
                        classes: vec![(n - m, normal), (m, slow)],
                        shuffle: false,
                    };
                    ComputationLaw::Classes(ClassLaw::new(&workers, &LoadModel::Fixed, &k_of_n, false)?)
                };
                Some((w, law))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            terms,
            mean_infinite: false,
        })
    }

    /// P(T ≤ t).
    pub fn cdf(&self, t: f64) -> f64 {
        self.terms.iter().map(|(w, law)| w * law.cdf(t)).sum()
    }

    /// P(T > t), summed from the terms' own survival functions, so that it
    /// keeps its digits in the upper tail.
    pub fn sf(&self, t: f64) -> f64 {
        self.terms.iter().map(|(w, law)| w * law.sf(t)).sum()
    }

    /// The q-quantile, to about 1e-13 relative.
    ///
    /// Given m the time is stochastically increasing in m (a worker of law
    /// F·L with F ≥ 1 is never faster), so the mixture's quantile lies
    /// between the quantiles of the fewest and of the most slow workers:
    /// a bracket for Brent's method on the CDF (on the survival function
    /// for q ≥ ½).
    ///
    /// Cost: two quantiles of one term, then some 40 evaluations of every term.
    pub fn quantile(&self, q: f64) -> f64 {
        let (fewest, most) = (&self.terms[0].1, &self.terms[self.terms.len() - 1].1);
        if q.is_nan() || q <= 0.0 || self.terms.len() == 1 {
            return fewest.quantile(q);
        }
        if q >= 1.0 {
            return f64::INFINITY;
        }
        let mut g = |t: f64| {
            if q < 0.5 {
                self.cdf(t) - q
            } else {
                (1.0 - q) - self.sf(t)
            }
        };
        let lo = fewest.quantile(q);
        if g(lo) >= 0.0 {
            return lo;
        }
        let mut hi = most.quantile(q);
        if !hi.is_finite() {
            // Beyond f64::MAX for the slowest term: search up from lo.
            hi = lo.max(f64::MIN_POSITIVE);
            while g(hi) < 0.0 {
                if hi > f64::MAX / 2.0 {
                    return f64::INFINITY;
                }
                hi *= 2.0;
            }
        }
        brent(&mut g, lo, hi, 1e-14 * hi.abs())
    }

    /// The mean, Σ w_m·E[T | m]; infinite where the tails make it so.
    pub fn mean(&self) -> f64 {
        if self.mean_infinite {
            return f64::INFINITY;
        }
        self.terms.iter().map(|(w, law)| w * law.mean()).sum()
    }
}

/// `(m, w_m)` for every count m of workers in slow groups whose weight is
/// at least [`MIN_WEIGHT`], ascending in m, rescaled to sum to 1.
fn weights(n: usize, groups: Groups) -> Vec<(usize, f64)> {
    let Groups { size, p, .. } = groups;
    let (whole, rest) = (n / size, n % size);
    let q = 1.0 - p;
    // The partial group's (workers, probability): slow or not.
    let partial: Vec<(usize, f64)> = if rest == 0 {
        vec![(0, 1.0)]
    } else {
        vec![(0, q), (rest, p)]
    };
    let whole_weight = |j: usize| {
        if whole == 0 {
            1.0
        } else {
            binomial::pmf(j as f64, whole as f64, p, q)
        }
    };
    // (j, 0) < (j, r) < (j + 1, 0) in m, since r < G: already ascending.
    let mut terms: Vec<(usize, f64)> = (0..=whole)
        .flat_map(|j| {
            let wj = whole_weight(j);
            partial.iter().map(move |&(extra, wb)| (j * size + extra, wj * wb))
        })
        .filter(|&(_, w)| w >= MIN_WEIGHT)
        .collect();
    let total: f64 = terms.iter().map(|t| t.1).sum();
    terms.iter_mut().for_each(|t| t.1 /= total);
    terms
}

#[cfg(test)]
mod tests;
