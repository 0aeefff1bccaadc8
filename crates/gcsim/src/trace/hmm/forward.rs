//! The scaled forward–backward pass (Rabiner 1989, *Proc. IEEE* 77(2),
//! §V.A and eq. 37–40) over several series side by side.
//!
//! The forward and backward recursions are chains: each step's
//! multiplications and division wait on the step before, so one series at a
//! time leaves the processor idle most of each step. [`LANES`] series of
//! equal length are walked in step instead, held lane by lane in arrays
//! (`[f64; LANES]` per state and step), so that each operation of a step is
//! one vector operation over the lanes and the lanes' chains overlap. Each
//! lane does exactly the arithmetic of a lone series, in the same order
//! (vector operations round each lane as the scalar ones do, and
//! floating-point contraction is never enabled), so its counts and
//! posteriors have the same bits as the pass over that series alone
//! (`tests.rs` holds that pass, written one series at a time). A run of
//! fewer than [`LANES`] series fills the free lanes with copies of its last
//! series and drops their results. On x86-64 processors with AVX2 and FMA
//! the pass is compiled a second time for them, its arithmetic written in
//! AVX2 instructions (`avx2.rs`), and chosen at run time. There the
//! exponentials of a step's emissions are taken four to an instruction
//! (`rng::exp`, glibc's bits; a step with an argument glibc computes apart
//! takes them one at a time). The logarithms of the scale factors are
//! taken after the forward recursion, off its chain, and added in the same
//! order; with AVX2 and FMA four to an instruction (`rng::ln`, glibc's
//! bits).

use rayon::prelude::*;

use super::Hmm;
use crate::rng::exp::exp;

/// Series walked side by side: two AVX2 vectors, so that two chains of
/// vector operations overlap.
pub(super) const LANES: usize = 8;

/// Expected counts from one forward–backward pass (Rabiner 1989, eq. 37–40).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counts {
    pub(super) log_likelihood: f64,
    /// Σ γ_t(k), Σ γ_t(k)·r_t, Σ γ_t(k)·r_t².
    pub(super) weight: [f64; 2],
    pub(super) sum: [f64; 2],
    pub(super) sum_sq: [f64; 2],
    /// Σ_{t<T} γ_t(k): expected departures from state k.
    pub(super) from: [f64; 2],
    /// Expected N→S and S→N transitions.
    pub(super) n_to_s: f64,
    pub(super) s_to_n: f64,
}

impl Counts {
    pub(super) fn add(&mut self, o: &Counts) {
        self.log_likelihood += o.log_likelihood;
        for k in 0..2 {
            self.weight[k] += o.weight[k];
            self.sum[k] += o.sum[k];
            self.sum_sq[k] += o.sum_sq[k];
            self.from[k] += o.from[k];
        }
        self.n_to_s += o.n_to_s;
        self.s_to_n += o.s_to_n;
    }
}

/// One value per lane.
type Lanes = [f64; LANES];

/// Per step, one value per state (N, S) and lane.
type Pairs = Vec<[Lanes; 2]>;

/// Up to [`LANES`] series of equal length as a full set of lanes (the free
/// ones repeat the last series); `None` when the lengths differ.
fn lanes<'a>(chunk: &[&'a [f64]]) -> Option<[&'a [f64]; LANES]> {
    let last = chunk.len() - 1;
    let equal = chunk.iter().all(|r| r.len() == chunk[0].len());
    equal.then(|| std::array::from_fn(|l| chunk[l.min(last)]))
}

/// The counts of every series, in order: runs of [`LANES`] series side by
/// side (series of different lengths one at a time), spread over rayon's
/// threads.
pub(super) fn counts(model: &Hmm, series: &[&[f64]]) -> Vec<Counts> {
    let chunks: Vec<Vec<Counts>> = series
        .par_chunks(LANES)
        .map(|chunk| match lanes(chunk) {
            Some(rs) => pass::<false>(model, rs).0[..chunk.len()].to_vec(),
            None => chunk.iter().map(|&r| forward_backward(model, r).1).collect(),
        })
        .collect();
    chunks.into_iter().flatten().collect()
}

/// The posterior slow probabilities of every series' steps, series by
/// series, walked as [`counts`] walks them.
pub(super) fn posteriors(model: &Hmm, series: &[&[f64]]) -> Vec<Vec<f64>> {
    let chunks: Vec<Vec<Vec<f64>>> = series
        .par_chunks(LANES)
        .map(|chunk| match lanes(chunk) {
            Some(rs) => {
                let steps = pass::<true>(model, rs).1;
                (0..chunk.len()).map(|l| steps.iter().map(|p| p[l]).collect()).collect()
            }
            None => chunk.iter().map(|&r| forward_backward(model, r).0).collect(),
        })
        .collect();
    chunks.into_iter().flatten().collect()
}

/// The pass over one series: the posterior slow probability of each step,
/// and the expected counts.
pub(super) fn forward_backward(model: &Hmm, r: &[f64]) -> (Vec<f64>, Counts) {
    let (counts, posterior) = pass::<true>(model, [r; LANES]);
    (posterior.into_iter().map(|p| p[0]).collect(), counts[0])
}

/// [`lanes_pass`], compiled for AVX2 and FMA where the processor has them.
fn pass<const POSTERIOR: bool>(model: &Hmm, rs: [&[f64]; LANES]) -> ([Counts; LANES], Vec<Lanes>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has AVX2 and FMA.
        return unsafe { pass_avx2::<POSTERIOR>(model, rs) };
    }
    lanes_pass::<POSTERIOR, false>(model, rs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn pass_avx2<const POSTERIOR: bool>(model: &Hmm, rs: [&[f64]; LANES]) -> ([Counts; LANES], Vec<Lanes>) {
    lanes_pass::<POSTERIOR, true>(model, rs)
}

/// The pass over [`LANES`] series of equal length: each one's counts, and
/// with `POSTERIOR` the posterior slow probabilities step by step, lane by
/// lane (empty without); with `AVX2` (set only by [`pass_avx2`]), its
/// arithmetic in AVX2 and FMA instructions (`avx2.rs`).
#[inline(always)]
#[allow(clippy::needless_range_loop)] // t indexes every lane's series and the pass's arrays
fn lanes_pass<const POSTERIOR: bool, const AVX2: bool>(
    model: &Hmm,
    rs: [&[f64]; LANES],
) -> ([Counts; LANES], Vec<Lanes>) {
    let n = rs[0].len();
    debug_assert!(rs.iter().all(|r| r.len() == n));
    let tr = model.transition();
    let (e, mut ll) = emissions::<AVX2>(model, &rs, n);
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY (each call): `AVX2` is set only where the processor has AVX2 and FMA.
        let (alpha, scale) = unsafe { avx2::forward(&tr, model.p_slow, &e) };
        unsafe { avx2::add_logs(&mut ll, &scale) };
        let beta = unsafe { avx2::backward(&tr, &e, &scale) };
        let (sums, posterior) = unsafe { avx2::sums::<POSTERIOR>(&tr, &rs, &alpha, &beta, &e, &scale) };
        return (sums.counts(ll), posterior);
    }
    let (alpha, scale) = forward(&tr, model.p_slow, &e);
    add_logs(&mut ll, &scale);
    let beta = backward(&tr, &e, &scale);
    let mut sums = Sums::default();
    let mut posterior = Vec::with_capacity(if POSTERIOR { n } else { 0 });
    for t in 0..n {
        let r: Lanes = std::array::from_fn(|l| rs[l][t]);
        let slow = sums.add_step(&tr, t, &r, &alpha, &beta, &e, &scale);
        if POSTERIOR {
            posterior.push(slow);
        }
    }
    (sums.counts(ll), posterior)
}

/// Adds the logarithms of the scale factors to each lane's `ll`, step by step.
#[inline(always)]
fn add_logs(ll: &mut Lanes, scale: &[Lanes]) {
    for c in scale {
        for (l, c) in c.iter().enumerate() {
            ll[l] += c.ln();
        }
    }
}

/// The counts' sums, lane by lane.
#[derive(Default)]
struct Sums {
    weight: [Lanes; 2],
    sum: [Lanes; 2],
    sum_sq: [Lanes; 2],
    from: [Lanes; 2],
    n_to_s: Lanes,
    s_to_n: Lanes,
}

impl Sums {
    /// Adds step `t` (observations `r`) to the sums; its posterior slow
    /// probabilities (γ_t(S)).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn add_step(
        &mut self,
        tr: &[[f64; 2]; 2],
        t: usize,
        r: &Lanes,
        alpha: &[[Lanes; 2]],
        beta: &[[Lanes; 2]],
        e: &[[Lanes; 2]],
        scale: &[Lanes],
    ) -> Lanes {
        let ([a0, a1], [b0, b1]) = (&alpha[t], &beta[t]);
        let mut gamma = [[0.0; LANES]; 2];
        for l in 0..LANES {
            let g = [a0[l] * b0[l], a1[l] * b1[l]];
            let total = g[0] + g[1];
            let g = [g[0] / total, g[1] / total];
            (gamma[0][l], gamma[1][l]) = (g[0], g[1]);
            for (k, gk) in g.into_iter().enumerate() {
                self.weight[k][l] += gk;
                self.sum[k][l] += gk * r[l];
                self.sum_sq[k][l] += gk * r[l] * r[l];
            }
        }
        if t + 1 < alpha.len() {
            let ([e0, e1], [b0, b1], s) = (&e[t + 1], &beta[t + 1], &scale[t + 1]);
            for l in 0..LANES {
                self.from[0][l] += gamma[0][l];
                self.from[1][l] += gamma[1][l];
                self.n_to_s[l] += a0[l] * tr[0][1] * e1[l] * b1[l] / s[l];
                self.s_to_n[l] += a1[l] * tr[1][0] * e0[l] * b0[l] / s[l];
            }
        }
        gamma[1]
    }

    /// Each lane's counts, with its log-likelihood `ll`.
    fn counts(&self, ll: Lanes) -> [Counts; LANES] {
        std::array::from_fn(|l| Counts {
            log_likelihood: ll[l],
            weight: [self.weight[0][l], self.weight[1][l]],
            sum: [self.sum[0][l], self.sum[1][l]],
            sum_sq: [self.sum_sq[0][l], self.sum_sq[1][l]],
            from: [self.from[0][l], self.from[1][l]],
            n_to_s: self.n_to_s[l],
            s_to_n: self.s_to_n[l],
        })
    }
}

/// Emissions scaled by their larger term, and each lane's sum of the logs
/// of those terms (the likelihood's first part).
#[inline(always)]
fn emissions<const AVX2: bool>(model: &Hmm, rs: &[&[f64]; LANES], n: usize) -> (Pairs, Lanes) {
    let c = model.ln_normaliser();
    let mut e = vec![[[0.0; LANES]; 2]; n];
    let mut ll = [0.0; LANES];
    for (t, et) in e.iter_mut().enumerate() {
        let r: Lanes = std::array::from_fn(|l| rs[l][t]);
        let mut x = [[0.0; LANES]; 2];
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY (each call): `AVX2` is set only where the processor
            // has AVX2 and FMA.
            x = unsafe { avx2::log_densities(model, c, &r) };
            if unsafe { avx2::scale_step(&x, et, &mut ll) } {
                continue;
            }
        }
        if !AVX2 || cfg!(not(target_arch = "x86_64")) {
            for l in 0..LANES {
                [x[0][l], x[1][l]] = model.ln_emission_with(c, r[l]);
            }
        }
        scale_step(&x, et, &mut ll);
    }
    (e, ll)
}

/// One step's emissions `e^x` scaled by their larger term, whose log is
/// added to each lane's `ll`.
#[inline(always)]
fn scale_step(x: &[Lanes; 2], et: &mut [Lanes; 2], ll: &mut Lanes) {
    for l in 0..LANES {
        let (x0, x1) = (x[0][l], x[1][l]);
        let m = x0.max(x1);
        // The larger term is e⁰ = 1 exactly: one exponential, not two
        // (both where m is not finite, so a NaN stays a NaN). The
        // exponential is glibc's, computed in place of a libm call (the
        // same bits; see `rng::exp`).
        let [e0, e1] = match (m.is_finite(), x0 == m, x1 == m) {
            (true, true, _) => [1.0, exp(x1 - m)],
            (true, _, true) => [exp(x0 - m), 1.0],
            _ => [exp(x0 - m), exp(x1 - m)],
        };
        (et[0][l], et[1][l]) = (e0, e1);
        ll[l] += m;
    }
}

/// The scaled forward variables and the scale factors, each chain starting
/// in the stationary law.
#[inline(always)]
fn forward(tr: &[[f64; 2]; 2], p: f64, e: &[[Lanes; 2]]) -> (Pairs, Vec<Lanes>) {
    let n = e.len();
    let mut alpha = vec![[[0.0; LANES]; 2]; n];
    let mut scale = vec![[0.0; LANES]; n];
    let mut prior = [[1.0 - p; LANES], [p; LANES]];
    for t in 0..n {
        let [e0, e1] = &e[t];
        let mut next = [[0.0; LANES]; 2];
        for l in 0..LANES {
            let f = [prior[0][l] * e0[l], prior[1][l] * e1[l]];
            let c = f[0] + f[1];
            scale[t][l] = c;
            let a = [f[0] / c, f[1] / c];
            alpha[t][0][l] = a[0];
            alpha[t][1][l] = a[1];
            next[0][l] = a[0] * tr[0][0] + a[1] * tr[1][0];
            next[1][l] = a[0] * tr[0][1] + a[1] * tr[1][1];
        }
        prior = next;
    }
    (alpha, scale)
}

/// The scaled backward variables.
#[inline(always)]
fn backward(tr: &[[f64; 2]; 2], e: &[[Lanes; 2]], scale: &[Lanes]) -> Pairs {
    let n = e.len();
    let mut beta = vec![[[1.0; LANES]; 2]; n];
    for t in (0..n.saturating_sub(1)).rev() {
        let ([e0, e1], [b0, b1], s) = (&e[t + 1], &beta[t + 1], &scale[t + 1]);
        let mut here = [[0.0; LANES]; 2];
        for l in 0..LANES {
            let next = [e0[l] * b0[l], e1[l] * b1[l]];
            for (j, row) in tr.iter().enumerate() {
                here[j][l] = (row[0] * next[0] + row[1] * next[1]) / s[l];
            }
        }
        beta[t] = here;
    }
    beta
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(test)]
mod tests;
