//! Exact laws of clusters of worker classes: non-identical order statistics.
//!
//! Workers are independent; worker i has CDF F_i (its class's law through
//! the load model). The master can decode by t when
//! - k of n: at least k workers are done, P = P(Σ_j B_j ≥ k) with
//!   B_j ~ Binomial(c_j, F_j(t)) the finished workers of class j (David &
//!   Nagaraja 2003, §5.2, the non-identical case), by convolving the
//!   classes' binomial distributions;
//! - frc: every group of consecutive workers has one done,
//!   P = Π_g (1 − Π_{i∈g} (1 − F_i(t))).
//!
//! k of n does not depend on where the classes sit, so a shuffled placement
//! has the same law; frc does, and is exact here for the layout in order. The
//! mean integrates the survival function; quantiles are bracketed and found
//! by Brent's method.

use super::numeric::{brent, integrate};
use crate::dist::Dist;
use crate::load::LoadModel;
use crate::scheme::{Rule, Scheme};
use crate::workers::Workers;

/// Largest cluster whose class law is computed (the convolution is O(n²)).
pub const MAX_CLASS_LAW_N: usize = 4000;

/// The exact iteration-time law of a cluster of worker classes.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassLaw {
    classes: Vec<(usize, Dist)>,
    /// For frc: per group, the count of workers of each class.
    groups: Option<Vec<Vec<usize>>>,
    k: usize,
    model: LoadModel,
    load: f64,
    mean_infinite: bool,
    /// Per class of c workers, ln C(c, i) for i = 0..=c, as
    /// [`binomial_pmf`] accumulates them: they do not depend on t.
    ln_choose: Vec<Vec<f64>>,
}

impl ClassLaw {
    /// The law of `scheme` on `workers`, if they are classes under a
    /// load model that is one draw per worker, and the cluster is not too large.
    pub fn new(workers: &Workers, model: &LoadModel, scheme: &Scheme, mean_infinite: bool) -> Option<Self> {
        let Workers::Classes { classes, shuffle } = workers else {
            return None;
        };
        let n = scheme.n();
        // A deadline's law for classes is not implemented: simulated.
        if !model.is_monotone() || n > MAX_CLASS_LAW_N || scheme.deadline().is_some() || scheme.strategy().is_some() {
            return None;
        }
        let (k, groups) = match scheme.rule() {
            Rule::KOfN(k) => (k, None),
            Rule::Groups { .. } if *shuffle => return None,
            Rule::Groups { size } => {
                let class_of: Vec<usize> = classes
                    .iter()
                    .enumerate()
                    .flat_map(|(j, (c, _))| std::iter::repeat_n(j, *c))
                    .collect();
                let groups = class_of
                    .chunks(size)
                    .map(|g| {
                        let mut counts = vec![0; classes.len()];
                        g.iter().for_each(|&j| counts[j] += 1);
                        counts
                    })
                    .collect();
                (0, Some(groups))
            }
        };
        Some(Self {
            ln_choose: classes.iter().map(|(c, _)| ln_choose(*c)).collect(),
            classes: classes.clone(),
            groups,
            k,
            model: *model,
            load: scheme.load(),
            mean_infinite,
        })
    }

    /// P(a worker of class j is not done by t), from the law's own survival
    /// function, so that it keeps its digits far in the tail.
    fn worker_sf(&self, j: usize, t: f64) -> f64 {
        let d = &self.classes[j].1;
        match self.model {
            LoadModel::Fixed => d.sf(t),
            LoadModel::Scaled => d.sf(t / self.load),
            LoadModel::Affine { unit_time } => d.sf(t - unit_time * self.load),
            LoadModel::Additive => unreachable!("additive loads are not one draw per worker"),
        }
    }

    /// The iteration time at which a worker's draw is `x`.
    fn time_of(&self, x: f64) -> f64 {
        match self.model {
            LoadModel::Fixed => x,
            LoadModel::Scaled => x * self.load,
            LoadModel::Affine { unit_time } => x + unit_time * self.load,
            LoadModel::Additive => unreachable!("additive loads are not one draw per worker"),
        }
    }

    /// `(P(T ≤ t), P(T > t))`, each computed directly from the workers'
    /// survival probabilities (no 1 − cdf), so both keep their digits.
    fn both(&self, t: f64) -> (f64, f64) {
        let q: Vec<f64> = (0..self.classes.len())
            .map(|j| self.worker_sf(j, t).clamp(0.0, 1.0))
            .collect();
        if let Some(groups) = &self.groups {
            // A group is late with probability Π q_i; T ≤ t when none is.
            let late: Vec<f64> = groups
                .iter()
                .map(|counts| counts.iter().zip(&q).map(|(&c, &qj)| qj.powi(c as i32)).product())
                .collect();
            let ln_cdf: f64 = late.iter().map(|&l: &f64| (-l).ln_1p()).sum();
            return (ln_cdf.exp(), -ln_cdf.exp_m1());
        }
        // Distribution of the number of workers not yet done: the binomials
        // of every class but the last convolved. T > t when at least
        // n − k + 1 are not done: with the last class's cumulative sums that
        // is one pass over the others' distribution, not a convolution.
        let classes = self.classes.iter().zip(q.iter().zip(&self.ln_choose));
        let (&(last, _), (&q_last, ln_last)) = classes.clone().next_back().expect("a law has a class");
        let mut dist = vec![1.0];
        for ((count, _), (&qj, ln_c)) in classes.take(self.classes.len() - 1) {
            let pmf = binomial_pmf(*count, qj, ln_c);
            let mut next = vec![0.0; dist.len() + count];
            for (a, &x) in dist.iter().enumerate() {
                if x != 0.0 {
                    for (b, &y) in pmf.iter().enumerate() {
                        next[a + b] += x * y;
                    }
                }
            }
            dist = next;
        }
        let pmf = binomial_pmf(last, q_last, ln_last);
        // at_most[j] = P(L ≤ j) and at_least[j] = P(L ≥ j) for the last
        // class's L, each summed from its own tail.
        let mut at_most = pmf.clone();
        for j in 1..at_most.len() {
            at_most[j] += at_most[j - 1];
        }
        let mut from = pmf;
        for j in (0..from.len() - 1).rev() {
            from[j] += from[j + 1];
        }
        let late_needed = dist.len() + last - self.k;
        let (mut below, mut above) = (0.0, 0.0);
        for (a, &x) in dist.iter().enumerate() {
            // The others' a late and the last class's below or at least the rest.
            if a < late_needed {
                below += x * at_most[(late_needed - 1 - a).min(last)];
            }
            above += x * from.get(late_needed.saturating_sub(a)).copied().unwrap_or(0.0);
        }
        (below, above)
    }

    /// P(T ≤ t).
    pub fn cdf(&self, t: f64) -> f64 {
        self.both(t).0
    }

    /// P(T > t).
    pub fn sf(&self, t: f64) -> f64 {
        self.both(t).1
    }

    /// A time by which the iteration is certainly done (survival below 1e-15).
    fn far(&self) -> f64 {
        let mut hi = 1.0f64;
        while self.sf(hi) > 1e-15 && hi < 1e300 {
            hi *= 2.0;
        }
        hi
    }

    /// The q-quantile, to about 1e-12 relative.
    pub fn quantile(&self, q: f64) -> f64 {
        if q <= 0.0 {
            return 0.0;
        }
        if q >= 1.0 {
            return f64::INFINITY;
        }
        let hi = {
            let mut hi = 1.0f64;
            while self.cdf(hi) < q && hi < 1e300 {
                hi *= 2.0;
            }
            hi
        };
        brent(&mut |t| self.cdf(t) - q, 0.0, hi, 1e-13 * hi)
    }

    /// The polynomial tail index γ of T, P(T > t) ~ t^(−γ): the smallest
    /// sum of the workers' indices over a set whose lateness delays T (the
    /// n − k + 1 heaviest-tailed for k of n, a whole group for frc).
    fn tail_index(&self) -> f64 {
        let alphas = |counts: &mut dyn Iterator<Item = (usize, &Dist)>| -> Vec<f64> {
            let mut a: Vec<f64> = counts
                .flat_map(|(c, d)| std::iter::repeat_n(d.tail_index(), c))
                .collect();
            a.sort_by(f64::total_cmp);
            a
        };
        match &self.groups {
            Some(groups) => groups
                .iter()
                .map(|counts| {
                    alphas(&mut counts.iter().zip(&self.classes).map(|(&c, (_, d))| (c, d)))
                        .iter()
                        .sum::<f64>()
                })
                .fold(f64::INFINITY, f64::min),
            None => {
                let all = alphas(&mut self.classes.iter().map(|(c, d)| (*c, d)));
                all[..all.len() - self.k + 1].iter().sum()
            }
        }
    }

    /// The mean, ∫ P(T > t) dt; infinite where the tails make it so.
    ///
    /// Light tails: the integral runs to where the survival is below 1e-15.
    /// A polynomial tail P(T > t) ~ A·t^(−γ) holds too much mass out there
    /// (at γ = 1.01 most of the mean lies beyond t = 10¹⁵), so past the body
    /// the integral is taken over x ∈ (0, 1] with t = t_c·x^(−1/(γ−1)), where
    /// the integrand tends to the constant A·t_c^(1−γ)/(γ−1): smooth, and
    /// flat near x = 0, where the short stretch past t = 10³⁰⁰ (beyond
    /// floating point) is that constant times its length.
    pub fn mean(&self) -> f64 {
        if self.mean_infinite {
            return f64::INFINITY;
        }
        let gamma = self.tail_index();
        if !gamma.is_finite() {
            let hi = self.far();
            return integrate(&mut |t| self.sf(t), 0.0, hi, 1e-11);
        }
        // The body, split at quantiles so each piece is smooth; it is at
        // least half the median, which sets the absolute tolerance.
        let points: Vec<f64> = [0.0, 1e-3, 0.1, 0.5, 0.9, 0.999, 1.0 - 1e-6]
            .iter()
            .map(|&q| self.quantile(q))
            .collect();
        let (median, t_c) = (points[3], points[6]);
        let tol = 1e-12 * median.max(f64::MIN_POSITIVE);
        // Each class's smallest time is a kink of the survival function.
        let mut points = points;
        points.extend(self.classes.iter().map(|(_, d)| self.time_of(d.support_min())));
        points.retain(|&t| t > 0.0 && t < t_c);
        points.extend([0.0, t_c]);
        points.sort_by(f64::total_cmp);
        points.dedup();
        let body: f64 = points
            .windows(2)
            .map(|w| integrate(&mut |t| self.sf(t), w[0], w[1], tol / points.len() as f64))
            .sum();
        let p = 1.0 / (gamma - 1.0);
        // t(x) = t_c·x^(−p), dt = p·t/x dx; x_end is where t reaches 1e300.
        let x_end = (t_c / 1e300).powf(1.0 / p).min(1.0);
        let mut f = |x: f64| {
            let t = t_c * x.powf(-p);
            if t.is_finite() { self.sf(t) * p * t / x } else { 0.0 }
        };
        let near_zero = if x_end > 0.0 { x_end * f(x_end) } else { 0.0 };
        let tail = integrate(&mut f, x_end, 1.0, tol);
        body + near_zero + tail
    }
}

/// ln C(n, i) for i = 0..=n, accumulated as ln C(n, i−1) + ln(n − i + 1) − ln i.
fn ln_choose(n: usize) -> Vec<f64> {
    let mut ln_c = 0.0;
    (0..=n)
        .map(|i| {
            if i > 0 {
                ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
            }
            ln_c
        })
        .collect()
}

/// The Binomial(n, p) probabilities of 0..=n, from `ln_c` = [`ln_choose`]`(n)`.
fn binomial_pmf(n: usize, p: f64, ln_c: &[f64]) -> Vec<f64> {
    if p <= 0.0 {
        let mut v = vec![0.0; n + 1];
        v[0] = 1.0;
        return v;
    }
    if p >= 1.0 {
        let mut v = vec![0.0; n + 1];
        v[n] = 1.0;
        return v;
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    ln_c.iter()
        .enumerate()
        .map(|(i, &c)| (c + i as f64 * lp + (n - i) as f64 * lq).exp())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::{Params, SchemeKind};

    #[test]
    fn one_class_equals_the_iid_law() {
        let d = Dist::exp(1.5).unwrap();
        let workers = Workers::Classes {
            classes: vec![(7, d), (5, d)],
            shuffle: false,
        };
        for (kind, s) in [(SchemeKind::Crc, 3), (SchemeKind::Frc, 2), (SchemeKind::Ignore, 0)] {
            let scheme = Scheme::new(
                kind,
                12,
                Params {
                    s: Some(s),
                    m: None,
                    k: None,
                    d: None,
                    ..Params::default()
                },
            )
            .unwrap();
            let classes = ClassLaw::new(&workers, &LoadModel::Scaled, &scheme, false).unwrap();
            let iid = crate::analytic::iteration_law(&d, &LoadModel::Scaled, &scheme).unwrap();
            assert!((classes.mean() - iid.mean()).abs() < 1e-9 * iid.mean(), "{scheme}");
            for q in [0.1, 0.5, 0.99] {
                assert!(
                    (classes.quantile(q) - iid.quantile(q)).abs() < 1e-9 * iid.quantile(q),
                    "{scheme} q={q}"
                );
            }
        }
    }
}
