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
    /// Per class, what its binomial's probabilities take that does not
    /// depend on t (see [`Choose`]).
    choose: Vec<Choose>,
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
            choose: classes.iter().map(|(c, _)| Choose::new(*c)).collect(),
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
        // The buffers are the thread's own: a law's mean and quantiles
        // take thousands of these.
        thread_local! {
            static BUFFERS: std::cell::RefCell<[Vec<f64>; 4]> = std::cell::RefCell::default();
        }
        BUFFERS.with_borrow_mut(|[dist, next, pmf, at_most]| {
            let classes = self.classes.iter().zip(q.iter().zip(&self.choose));
            let (&(last, _), (&q_last, choose_last)) = classes.clone().next_back().expect("a law has a class");
            dist.clear();
            dist.push(1.0);
            for ((count, _), (&qj, choose)) in classes.take(self.classes.len() - 1) {
                choose.pmf(qj, pmf);
                next.clear();
                next.resize(dist.len() + count, 0.0);
                for (a, &x) in dist.iter().enumerate() {
                    if x != 0.0 {
                        for (o, &y) in next[a..].iter_mut().zip(pmf.iter()) {
                            *o += x * y;
                        }
                    }
                }
                std::mem::swap(dist, next);
            }
            choose_last.pmf(q_last, pmf);
            // at_most[j] = P(L ≤ j) and from[j] = P(L ≥ j) for the last
            // class's L, each summed from its own tail.
            at_most.clear();
            at_most.extend_from_slice(pmf);
            for j in 1..at_most.len() {
                at_most[j] += at_most[j - 1];
            }
            let from = pmf;
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
        })
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

/// What the Binomial(n, p) probabilities take that does not depend on p:
/// ln C(n, i) for i = 0..=n, accumulated as ln C(n, i−1) + ln(n − i + 1)
/// − ln i, and the ratios of neighbouring coefficients.
#[derive(Debug, Clone, PartialEq)]
struct Choose {
    ln_c: Vec<f64>,
    /// C(n, i+1)/C(n, i) = (n − i)/(i + 1), for i = 0..n.
    up: Vec<f64>,
    /// C(n, i−1)/C(n, i) = i/(n − i + 1), for i = 1..=n (at i − 1).
    down: Vec<f64>,
}

impl Choose {
    fn new(n: usize) -> Self {
        let mut ln_c = 0.0;
        Self {
            ln_c: (0..=n)
                .map(|i| {
                    if i > 0 {
                        ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
                    }
                    ln_c
                })
                .collect(),
            up: (0..n).map(|i| (n - i) as f64 / (i + 1) as f64).collect(),
            down: (1..=n).map(|i| i as f64 / (n - i + 1) as f64).collect(),
        }
    }

    /// The Binomial(n, p) probabilities of 0..=n, in `out`.
    ///
    /// From the mode, where the probability is largest, outward by the
    /// ratios of neighbours, P(i+1)/P(i) = (n−i)/(i+1)·p/q: one exp per
    /// pmf instead of one per term, each value within about 3(n/2) ulps of
    /// the term's own (the products shrink away from the mode, so nothing
    /// overflows, and far terms underflow as the direct ones do).
    fn pmf(&self, p: f64, out: &mut Vec<f64>) {
        let n = self.up.len();
        out.clear();
        out.resize(n + 1, 0.0);
        if p <= 0.0 {
            out[0] = 1.0;
            return;
        }
        if p >= 1.0 {
            out[n] = 1.0;
            return;
        }
        let (lp, lq) = (p.ln(), (-p).ln_1p());
        let term = |i: usize| (self.ln_c[i] + i as f64 * lp + (n - i) as f64 * lq).exp();
        let odds = lp - lq;
        if odds.abs() > 600.0 {
            // p/q beyond what a product of ratios can carry: term by term.
            out.iter_mut().enumerate().for_each(|(i, o)| *o = term(i));
            return;
        }
        let mode = (((n + 1) as f64 * p).floor() as usize).min(n);
        let (up, down) = (odds.exp(), (-odds).exp());
        out[mode] = term(mode);
        for i in mode..n {
            out[i + 1] = out[i] * (self.up[i] * up);
        }
        for i in (1..=mode).rev() {
            out[i - 1] = out[i] * (self.down[i - 1] * down);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::{Params, SchemeKind};

    /// The probabilities by ratios from the mode are each term's own,
    /// ln C(n, i) + i ln p + (n − i) ln q through exp, to 1e-12 relative
    /// (where the term is not far below the smallest normal number), from
    /// p near 0 to p near 1, on both sides of the mode, and through the
    /// term-by-term path where the odds are extreme.
    #[test]
    fn binomial_by_ratios_is_term_by_term() {
        for n in [1, 2, 7, 50, 399] {
            let choose = Choose::new(n);
            for p in [1e-280, 1e-9, 0.003, 0.3, 0.5, 0.77, 1.0 - 1e-10, 0.0, 1.0] {
                let mut pmf = Vec::new();
                choose.pmf(p, &mut pmf);
                assert_eq!(pmf.len(), n + 1);
                let (lp, lq) = (p.ln(), (-p).ln_1p());
                for (i, &v) in pmf.iter().enumerate() {
                    let want = match p {
                        0.0 => f64::from(u8::from(i == 0)),
                        1.0 => f64::from(u8::from(i == n)),
                        _ => (choose.ln_c[i] + i as f64 * lp + (n - i) as f64 * lq).exp(),
                    };
                    if want > 1e-290 {
                        assert!((v - want).abs() <= 1e-12 * want, "n {n}, p {p}, i {i}: {v} vs {want}");
                    } else {
                        assert!(v <= 1e-280, "n {n}, p {p}, i {i}: {v} vs {want}");
                    }
                }
                let total: f64 = pmf.iter().sum();
                assert!((total - 1.0).abs() < 1e-12, "n {n}, p {p}: sums to {total}");
            }
        }
    }

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
