//! The sweep of [`Counts::sweep`] in AVX2 instructions, four values at a
//! time, for x86-64 processors that have them (chosen at run time).
//!
//! The operations per lane are the portable sweep's, in the same order, so
//! the results are the same bits: `vminpd`/`vmaxpd` return their first
//! operand exactly where the portable `if v < m { v } else { m }` does (on
//! NaN too), the sums add `v − r` and `(v − r)²` without fused
//! multiply-adds, and the counts are integer. The values inside a window
//! are packed to the front of a vector by a permutation picked by the
//! mask of lanes inside, and stored at the end of the gathered ones.
//!
//! What it buys: the AVX2 passes (this sweep, and the step sums of
//! `steps.rs`) make `gcsim sweep --n 100 --s 0..50 --trials 300000` 1.26
//! times as fast as the portable code on one thread (CPU time, medians of
//! alternating runs with `bench/alternate.sh`, the same output bytes), and
//! the two-class sweep of `bench/compare.sh classes` 1.29 times.

use std::arch::x86_64::*;

use super::{Counts, Group, Lanes, Pass};

/// For each 4-bit mask of lanes, the 32-bit indices that move the masked
/// 64-bit lanes, in order, to the front of a vector.
const PACK: [[i32; 8]; 16] = {
    let mut table = [[0; 8]; 16];
    let mut m = 0;
    while m < 16 {
        let mut at = 0;
        let mut l = 0;
        while l < 4 {
            if m & (1 << l) != 0 {
                table[m][2 * at] = 2 * l;
                table[m][2 * at + 1] = 2 * l + 1;
                at += 1;
            }
            l += 1;
        }
        m += 1;
    }
    table
};

impl Counts {
    /// [`Counts::sweep`], four values per instruction.
    #[target_feature(enable = "avx2")]
    pub(super) fn sweep_avx2<const STATS: bool>(&mut self, pass: &Pass, j: usize, col: &[f64], g: &Group) {
        let r = pass.refs.get(j).copied();
        let start = self.lanes(j);
        let load = |a: &[f64; 4]| _mm256_setr_pd(a[0], a[1], a[2], a[3]);
        let (mut s1, mut s2) = (load(&start.s1), load(&start.s2));
        let (mut mn, mut mx) = (load(&start.mn), load(&start.mx));
        let mut infinite = _mm256_setzero_si256();
        let mut below = [_mm256_setzero_si256(); 4];
        let (rv, inf) = (_mm256_set1_pd(r.unwrap_or(0.0)), _mm256_set1_pd(f64::INFINITY));
        let lo: [__m256d; 4] = std::array::from_fn(|i| _mm256_set1_pd(g.lo[i]));
        let hi: [__m256d; 4] = std::array::from_fn(|i| _mm256_set1_pd(g.hi[i]));
        let mut pending = self.take_pending(col.len());
        let mut n = 0;
        let quads = col.chunks_exact(4);
        let tail = quads.remainder();
        // The power sums and range in one loop, the windows in another: in
        // one, their nineteen vectors outnumber the sixteen registers, and
        // the range's lanes went to memory and back on every quad, a
        // store-to-load forward on the loop's chain.
        if STATS {
            // The reference's test out of the loop: with it inside, the
            // sums and the range were kept in memory.
            let range = |v: __m256d, mn: &mut __m256d, mx: &mut __m256d, infinite: &mut __m256i| {
                *mn = _mm256_min_pd(v, *mn);
                *mx = _mm256_max_pd(v, *mx);
                // An all-ones lane is −1: subtracting it counts one.
                let is_inf = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_EQ_OQ>(v, inf));
                *infinite = _mm256_sub_epi64(*infinite, is_inf);
            };
            let values = quads.clone().map(|q| {
                // SAFETY: `q` holds four values.
                unsafe { _mm256_loadu_pd(q.as_ptr()) }
            });
            if r.is_some() {
                for v in values {
                    range(v, &mut mn, &mut mx, &mut infinite);
                    let d = _mm256_sub_pd(v, rv);
                    s1 = _mm256_add_pd(s1, d);
                    s2 = _mm256_add_pd(s2, _mm256_mul_pd(d, d));
                }
            } else {
                for v in values {
                    range(v, &mut mn, &mut mx, &mut infinite);
                }
            }
        }
        for q in quads {
            // SAFETY: `q` holds four values.
            let v = unsafe { _mm256_loadu_pd(q.as_ptr()) };
            let mut inside = _mm256_setzero_pd();
            for i in 0..4 {
                let under = _mm256_cmp_pd::<_CMP_LT_OQ>(v, lo[i]);
                below[i] = _mm256_sub_epi64(below[i], _mm256_castpd_si256(under));
                let under_hi = _mm256_cmp_pd::<_CMP_LT_OQ>(v, hi[i]);
                inside = _mm256_or_pd(inside, _mm256_andnot_pd(under, under_hi));
            }
            let mask = _mm256_movemask_pd(inside) as usize;
            // SAFETY: `PACK[mask]` holds eight 32-bit indices.
            let order = unsafe { _mm256_loadu_si256(PACK[mask].as_ptr().cast()) };
            let packed = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(v), order);
            // At most the values swept so far are gathered, so the four
            // stored from `n` lie within the column's length.
            let dst = &mut pending[n..n + 4];
            // SAFETY: `dst` holds four values.
            unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), packed) };
            n += mask.count_ones() as usize;
        }
        let store = |v: __m256d| {
            let mut a = [0.0; 4];
            // SAFETY: `a` holds four values.
            unsafe { _mm256_storeu_pd(a.as_mut_ptr(), v) };
            a
        };
        let counts = |v: __m256i| {
            let mut a = [0u64; 4];
            // SAFETY: `a` holds four 64-bit integers.
            unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), v) };
            a
        };
        let lanes = Lanes {
            s1: store(s1),
            s2: store(s2),
            mn: store(mn),
            mx: store(mx),
            infinite: counts(infinite),
            below: below.map(counts),
        };
        self.finish_sweep::<STATS>(pass, j, g, tail, lanes, pending, n);
    }
}

#[cfg(test)]
mod tests {
    /// Each mask's permutation puts exactly the masked lanes first, in order.
    #[test]
    fn pack_moves_the_masked_lanes_to_the_front() {
        for (m, order) in super::PACK.iter().enumerate() {
            let lanes: Vec<i32> = (0..4).filter(|l| m & (1 << l) != 0).collect();
            for (at, &l) in lanes.iter().enumerate() {
                assert_eq!([order[2 * at], order[2 * at + 1]], [2 * l, 2 * l + 1], "mask {m:04b}");
            }
        }
    }
}
