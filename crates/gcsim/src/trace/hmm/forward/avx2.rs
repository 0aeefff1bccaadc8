//! The arithmetic of the lanes' pass written in AVX2 instructions: each
//! [`LANES`]-lane array is two vectors of four, the two walked together so
//! that their chains overlap. Every operation is the portable pass's, in
//! its order, on each lane (a vector operation rounds each lane as the
//! scalar one does; no fused multiply–add outside the exponentials, which
//! are glibc's in four lanes, `rng::exp`), so the results have the same
//! bits (`tests.rs`).

// A half's index h picks the same vector of several arrays at once.
#![allow(clippy::needless_range_loop)]

use std::arch::x86_64::{
    __m256d, _CMP_EQ_OQ, _mm256_add_pd, _mm256_blendv_pd, _mm256_cmp_pd, _mm256_div_pd, _mm256_loadu_pd, _mm256_max_pd,
    _mm256_mul_pd, _mm256_set1_pd, _mm256_setzero_pd, _mm256_storeu_pd, _mm256_sub_pd,
};

use super::{Hmm, LANES, Lanes, Pairs, Sums};
use crate::rng::{exp, ln};

/// Vectors per lane array.
const HALVES: usize = LANES / 4;

#[inline]
#[target_feature(enable = "avx2")]
fn load(x: &Lanes, h: usize) -> __m256d {
    let quarter: &[f64; 4] = x[4 * h..4 * h + 4].try_into().expect("four lanes");
    // SAFETY: `quarter` holds the four values read.
    unsafe { _mm256_loadu_pd(quarter.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn store(x: &mut Lanes, h: usize, v: __m256d) {
    let quarter: &mut [f64; 4] = (&mut x[4 * h..4 * h + 4]).try_into().expect("four lanes");
    // SAFETY: `quarter` holds the four values written.
    unsafe { _mm256_storeu_pd(quarter.as_mut_ptr(), v) }
}

/// The log-densities of `r` in states N and S (`Hmm::ln_emission_with`
/// with the constant `c`), lane by lane.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn log_densities(model: &Hmm, c: f64, r: &Lanes) -> [Lanes; 2] {
    let (mu, sigma, shift) = (
        _mm256_set1_pd(model.mu),
        _mm256_set1_pd(model.sigma),
        _mm256_set1_pd(model.shift),
    );
    let (c, half) = (_mm256_set1_pd(c), _mm256_set1_pd(0.5));
    let mut x = [[0.0; LANES]; 2];
    for h in 0..HALVES {
        let d = _mm256_sub_pd(load(r, h), mu);
        let z0 = _mm256_div_pd(d, sigma);
        let z1 = _mm256_div_pd(_mm256_sub_pd(d, shift), sigma);
        store(
            &mut x[0],
            h,
            _mm256_sub_pd(c, _mm256_mul_pd(_mm256_mul_pd(half, z0), z0)),
        );
        store(
            &mut x[1],
            h,
            _mm256_sub_pd(c, _mm256_mul_pd(_mm256_mul_pd(half, z1), z1)),
        );
    }
    x
}

/// The portable `scale_step` (`e^x` scaled by the larger term, whose log
/// is added to `ll`), the exponentials four to an instruction; false, with
/// nothing written, where a lane's exponential is one glibc computes apart
/// (which covers equal terms and those that are not finite), for the
/// portable step to take.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn scale_step(x: &[Lanes; 2], e: &mut [Lanes; 2], ll: &mut Lanes) -> bool {
    let zero = _mm256_setzero_pd();
    let (mut m, mut first, mut arg) = ([zero; HALVES], [zero; HALVES], [zero; HALVES]);
    for h in 0..HALVES {
        let (x0, x1) = (load(&x[0], h), load(&x[1], h));
        // Where the two differ and neither is NaN, the larger as `f64::max`
        // takes it; else the argument below is 0 or not finite, apart.
        m[h] = _mm256_max_pd(x0, x1);
        first[h] = _mm256_cmp_pd::<_CMP_EQ_OQ>(x0, m[h]);
        // The smaller term's exponent: x1 − m where x0 is the larger.
        arg[h] = _mm256_blendv_pd(_mm256_sub_pd(x0, m[h]), _mm256_sub_pd(x1, m[h]), first[h]);
        if exp::any_apart4(arg[h]) {
            return false;
        }
    }
    let one = _mm256_set1_pd(1.0);
    for h in 0..HALVES {
        let small = exp::exp4(arg[h]);
        store(&mut e[0], h, _mm256_blendv_pd(small, one, first[h]));
        store(&mut e[1], h, _mm256_blendv_pd(one, small, first[h]));
        store(ll, h, _mm256_add_pd(load(ll, h), m[h]));
    }
    true
}

/// The portable `add_logs`: the logarithms of the scale factors added to
/// each lane's `ll`, step by step, four to an instruction (a quad with a
/// factor glibc takes apart one at a time).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn add_logs(ll: &mut Lanes, scale: &[Lanes]) {
    for c in scale {
        for h in 0..HALVES {
            match ln::ln4(load(c, h)) {
                Some(v) => store(ll, h, _mm256_add_pd(load(ll, h), v)),
                None => {
                    for l in 4 * h..4 * h + 4 {
                        ll[l] += c[l].ln();
                    }
                }
            }
        }
    }
}

/// The transition matrix, each entry in every lane.
#[inline]
#[target_feature(enable = "avx2")]
fn splat(tr: &[[f64; 2]; 2]) -> [[__m256d; 2]; 2] {
    tr.map(|row| row.map(|p| _mm256_set1_pd(p)))
}

/// The portable `forward`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn forward(tr: &[[f64; 2]; 2], p: f64, e: &[[Lanes; 2]]) -> (Pairs, Vec<Lanes>) {
    let n = e.len();
    let t = splat(tr);
    let mut alpha = vec![[[0.0; LANES]; 2]; n];
    let mut scale = vec![[0.0; LANES]; n];
    let mut prior = [[_mm256_set1_pd(1.0 - p); HALVES], [_mm256_set1_pd(p); HALVES]];
    for s in 0..n {
        for h in 0..HALVES {
            let f0 = _mm256_mul_pd(prior[0][h], load(&e[s][0], h));
            let f1 = _mm256_mul_pd(prior[1][h], load(&e[s][1], h));
            let c = _mm256_add_pd(f0, f1);
            store(&mut scale[s], h, c);
            let (a0, a1) = (_mm256_div_pd(f0, c), _mm256_div_pd(f1, c));
            store(&mut alpha[s][0], h, a0);
            store(&mut alpha[s][1], h, a1);
            prior[0][h] = _mm256_add_pd(_mm256_mul_pd(a0, t[0][0]), _mm256_mul_pd(a1, t[1][0]));
            prior[1][h] = _mm256_add_pd(_mm256_mul_pd(a0, t[0][1]), _mm256_mul_pd(a1, t[1][1]));
        }
    }
    (alpha, scale)
}

/// The portable `backward`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn backward(tr: &[[f64; 2]; 2], e: &[[Lanes; 2]], scale: &[Lanes]) -> Pairs {
    let n = e.len();
    let t = splat(tr);
    let mut beta = vec![[[1.0; LANES]; 2]; n];
    for s in (0..n.saturating_sub(1)).rev() {
        let mut here = [[0.0; LANES]; 2];
        for h in 0..HALVES {
            let next0 = _mm256_mul_pd(load(&e[s + 1][0], h), load(&beta[s + 1][0], h));
            let next1 = _mm256_mul_pd(load(&e[s + 1][1], h), load(&beta[s + 1][1], h));
            let c = load(&scale[s + 1], h);
            for (j, row) in t.iter().enumerate() {
                let v = _mm256_add_pd(_mm256_mul_pd(row[0], next0), _mm256_mul_pd(row[1], next1));
                store(&mut here[j], h, _mm256_div_pd(v, c));
            }
        }
        beta[s] = here;
    }
    beta
}

/// The sums of the portable `Sums::add_step` over every step, and with
/// `POSTERIOR` the posterior slow probabilities step by step.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn sums<const POSTERIOR: bool>(
    tr: &[[f64; 2]; 2],
    rs: &[&[f64]; LANES],
    alpha: &[[Lanes; 2]],
    beta: &[[Lanes; 2]],
    e: &[[Lanes; 2]],
    scale: &[Lanes],
) -> (Sums, Vec<Lanes>) {
    let n = alpha.len();
    let t = splat(tr);
    let zero = [[_mm256_setzero_pd(); HALVES]; 2];
    let (mut weight, mut sum, mut sum_sq, mut from) = (zero, zero, zero, zero);
    let (mut n_to_s, mut s_to_n) = (zero[0], zero[0]);
    let mut posterior = Vec::with_capacity(if POSTERIOR { n } else { 0 });
    for s in 0..n {
        let r: Lanes = std::array::from_fn(|l| rs[l][s]);
        let mut slow = [0.0; LANES];
        for h in 0..HALVES {
            let (a0, a1) = (load(&alpha[s][0], h), load(&alpha[s][1], h));
            let g0 = _mm256_mul_pd(a0, load(&beta[s][0], h));
            let g1 = _mm256_mul_pd(a1, load(&beta[s][1], h));
            let total = _mm256_add_pd(g0, g1);
            let g = [_mm256_div_pd(g0, total), _mm256_div_pd(g1, total)];
            store(&mut slow, h, g[1]);
            let x = load(&r, h);
            for k in 0..2 {
                weight[k][h] = _mm256_add_pd(weight[k][h], g[k]);
                let gx = _mm256_mul_pd(g[k], x);
                sum[k][h] = _mm256_add_pd(sum[k][h], gx);
                sum_sq[k][h] = _mm256_add_pd(sum_sq[k][h], _mm256_mul_pd(gx, x));
            }
            if s + 1 < n {
                from[0][h] = _mm256_add_pd(from[0][h], g[0]);
                from[1][h] = _mm256_add_pd(from[1][h], g[1]);
                let c = load(&scale[s + 1], h);
                let to_s = _mm256_mul_pd(_mm256_mul_pd(a0, t[0][1]), load(&e[s + 1][1], h));
                let to_s = _mm256_mul_pd(to_s, load(&beta[s + 1][1], h));
                n_to_s[h] = _mm256_add_pd(n_to_s[h], _mm256_div_pd(to_s, c));
                let to_n = _mm256_mul_pd(_mm256_mul_pd(a1, t[1][0]), load(&e[s + 1][0], h));
                let to_n = _mm256_mul_pd(to_n, load(&beta[s + 1][0], h));
                s_to_n[h] = _mm256_add_pd(s_to_n[h], _mm256_div_pd(to_n, c));
            }
        }
        if POSTERIOR {
            posterior.push(slow);
        }
    }
    let lanes = |v: &[__m256d; HALVES]| {
        let mut x = [0.0; LANES];
        for (h, v) in v.iter().enumerate() {
            store(&mut x, h, *v);
        }
        x
    };
    let sums = Sums {
        weight: weight.each_ref().map(lanes),
        sum: sum.each_ref().map(lanes),
        sum_sq: sum_sq.each_ref().map(lanes),
        from: from.each_ref().map(lanes),
        n_to_s: lanes(&n_to_s),
        s_to_n: lanes(&s_to_n),
    };
    (sums, posterior)
}
