//! The top of two ascending runs by Batcher's bitonic merge network
//! (Batcher 1968, "Sorting networks and their applications"), in AVX2
//! registers, for x86-64 processors that have them (chosen at run time).
//!
//! Pad each run below with −∞ to W values, A and B, ascending. Then
//! U[i] = max(A[i], B[W−1−i]) holds the W largest of both runs (the first
//! step of the bitonic merge: where A[i] < B[W−1−i], the i + 1 values
//! A[0..=i] lie below the W − i values B[W−1−i..], so A[i] is not among
//! the W largest, and likewise the other way), and U, the maximum of an
//! ascending and a descending sequence, is bitonic; half-cleaners at distances W/2, …, 2, 1 (the smaller of each
//! pair to the lower place) sort it ascending. Every step is a `vminpd`
//! or `vmaxpd` of values, which return one of their operands exactly, so
//! the values out are those of any merge: the same bits in the same order
//! for ordered, non-NaN inputs (equal values are interchangeable; only a
//! −0 and a +0 could swap places, and no time is a signed zero).
//!
//! Unlike a scalar merge, no step waits on the one before: about 290
//! vector operations for W = 64, none of them a load whose address
//! depends on a comparison.

use std::arch::x86_64::*;

/// The largest `out.len()` values (at most 4·V) of ascending `a` and `b`,
/// ascending, in `out`, by the network of width W = 4·V (V a power of two,
/// at least 2; see the module notes). Only each run's largest W are read.
#[target_feature(enable = "avx2")]
pub(super) fn top_two<const V: usize>(a: &[f64], b: &[f64], out: &mut [f64]) {
    let w = 4 * V;
    assert!(out.len() <= w && out.len() <= a.len() + b.len() && V.is_power_of_two() && (2..=16).contains(&V));
    let (a, b) = (&a[a.len() - a.len().min(w)..], &b[b.len() - b.len().min(w)..]);
    let mut u = [_mm256_setzero_pd(); V];
    for (v, x) in u.iter_mut().enumerate() {
        let lower = padded(a, w, v);
        // Lanes 4v..4v+4 of B reversed: B's vector V−1−v, its lanes reversed.
        let upper = _mm256_permute4x64_pd::<0x1B>(padded(b, w, V - 1 - v));
        *x = _mm256_max_pd(lower, upper);
    }
    // Half-cleaners across vectors: distances W/2 down to 4 (each a
    // separate call with a constant distance, so that every loop unrolls).
    for d in [8, 4, 2, 1] {
        if d < V {
            across(&mut u, d);
        }
    }
    // Distance 2, within each vector: its 128-bit halves swapped.
    for x in &mut u {
        let s = _mm256_permute2f128_pd::<0x01>(*x, *x);
        *x = _mm256_blend_pd::<0b1100>(_mm256_min_pd(*x, s), _mm256_max_pd(*x, s));
    }
    // Distance 1: the lanes of each pair swapped.
    for x in &mut u {
        let s = _mm256_permute_pd::<0b0101>(*x);
        *x = _mm256_blend_pd::<0b1010>(_mm256_min_pd(*x, s), _mm256_max_pd(*x, s));
    }
    // Lane l of vector v is out[4v + l − (W − m)]: vectors wholly inside
    // stored whole, the one that straddles W − m by a masked store.
    let skip = w - out.len();
    for (v, x) in u.iter().enumerate().skip(skip / 4) {
        let base = (4 * v) as i64 - skip as i64;
        if base >= 0 {
            let at = &mut out[base as usize..base as usize + 4];
            // SAFETY: `at` holds four values.
            unsafe { _mm256_storeu_pd(at.as_mut_ptr(), *x) };
        } else {
            let inside = lanes_from(base);
            // SAFETY: only the lanes of `inside` are written, and they lie
            // in `out`: their indices run from 0 to base + 3 = 4v + 3 − skip,
            // which is below m = w − skip as 4v + 3 < w.
            unsafe { _mm256_maskstore_pd(out.as_mut_ptr().wrapping_offset(base as isize), inside, *x) };
        }
    }
}

/// One half-cleaner stage at a distance of `d` vectors: the smaller of
/// vectors v and v + d (v with bit d clear) to v, the larger to v + d.
#[inline]
#[target_feature(enable = "avx2")]
fn across<const V: usize>(u: &mut [__m256d; V], d: usize) {
    for base in (0..V).step_by(2 * d) {
        for v in base..base + d {
            let (x, y) = (u[v], u[v + d]);
            u[v] = _mm256_min_pd(x, y);
            u[v + d] = _mm256_max_pd(x, y);
        }
    }
}

/// The lanes l of a vector whose index `base + l` is at least 0, as a mask.
#[inline]
#[target_feature(enable = "avx2")]
fn lanes_from(base: i64) -> __m256i {
    let index = _mm256_add_epi64(_mm256_setr_epi64x(0, 1, 2, 3), _mm256_set1_epi64x(base));
    _mm256_cmpgt_epi64(index, _mm256_set1_epi64x(-1))
}

/// Vector `v` of run `r` padded below with −∞ to `w` values: lane l holds
/// `r[4v + l − (w − r.len())]` where that index is in the run, else −∞.
/// A vector that straddles the run's start is read by a masked load, which
/// reads no memory for the lanes outside; the others by a plain load or
/// none (which they are depends on the runs' lengths alone, so the branch
/// is predicted where the lengths repeat).
#[inline]
#[target_feature(enable = "avx2")]
fn padded(r: &[f64], w: usize, v: usize) -> __m256d {
    debug_assert!(r.len() <= w && v < w / 4);
    let base = (4 * v) as i64 - (w - r.len()) as i64;
    if base >= 0 {
        let at = &r[base as usize..base as usize + 4];
        // SAFETY: `at` holds four values.
        return unsafe { _mm256_loadu_pd(at.as_ptr()) };
    }
    let neg = _mm256_set1_pd(f64::NEG_INFINITY);
    if base <= -4 {
        return neg;
    }
    let inside = lanes_from(base);
    // SAFETY: only the lanes of `inside` are read, and they lie in `r`:
    // their indices run from 0 to base + 3 = 4v + 3 − (w − len), which is
    // below len as 4v + 3 < w. The address of the masked lanes is
    // computed but not dereferenced.
    let x = unsafe { _mm256_maskload_pd(r.as_ptr().wrapping_offset(base as isize), inside) };
    _mm256_blendv_pd(neg, x, _mm256_castsi256_pd(inside))
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};

    /// The network's top is the comparison merge's and a sort's, bit for
    /// bit, at every width: random runs of up to 80 values (longer than the network, so
    /// that only their tops are read), with ties, ±∞ and a run shorter
    /// than the top, for every top size up to 64.
    #[test]
    fn the_network_gives_the_merges_top() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let inf = f64::INFINITY;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        let run = |len: usize, rng: &mut rand_xoshiro::Xoshiro256PlusPlus| {
            let mut r: Vec<f64> = (0..len)
                .map(|_| match rng.random_range(0..20) {
                    0 => inf,
                    1 => -inf,
                    k if k < 8 => rng.random_range(0..6) as f64,
                    _ => rng.random::<f64>() * 10.0,
                })
                .collect();
            r.sort_by(f64::total_cmp);
            r
        };
        let mut checked = 0;
        for _ in 0..400 {
            let (la, lb) = (rng.random_range(1..=80), rng.random_range(1..=80));
            let (a, b) = (run(la, &mut rng), run(lb, &mut rng));
            let mut all = [a.as_slice(), b.as_slice()].concat();
            all.sort_by(f64::total_cmp);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for m in 1..=(la + lb).min(64) {
                let want = bits(&all[all.len() - m..]);
                let mut scalar = vec![f64::NAN; m];
                super::super::merge_top_two_scalar(&a, &b, &mut scalar);
                assert_eq!(bits(&scalar), want, "scalar: a {a:?}, b {b:?}, top {m}");
                let mut got = vec![f64::NAN; m];
                super::super::merge_top_two(&a, &b, &mut got);
                assert_eq!(bits(&got), want, "network: a {a:?}, b {b:?}, top {m}");
                checked += 1;
            }
        }
        assert!(checked > 10_000);
    }
}
