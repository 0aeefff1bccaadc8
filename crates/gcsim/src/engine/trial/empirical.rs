//! The bootstrap from a trace as a function of a standard exponential E:
//! the ⌊M·U⌋-th smallest of its M values (0-based) for U = 1 − e^(−E),
//! each value with probability 1/M.
//!
//! Evaluating U takes an `exp_m1` per order statistic. The index is a step
//! function of E, which steps up by one at the edges e_k = −ln(1 − k/M),
//! k = 1..M−1; a table of the edges gives it with a few loads and
//! comparisons. The table's answer is taken only where E lies clear of both
//! edges of its step, by a relative margin G = 10⁻⁷: there M·U is at least
//! G·(M−k)·e_k ≥ G·ln 2 (k < M) away from the integers on either side (as
//! dU/dE = 1 − U), a million times more than the rounding of `exp_m1` (an
//! ulp or two of U) and of the product can move it for M ≤ 10⁸, so the
//! formula itself would give the same index. Anywhere else, about one value
//! in 10⁴ for a trace of a few thousand times, the formula is evaluated:
//! the result is the formula's, bit for bit, for every E.
//!
//! A slice of values goes faster another way on processors with AVX2
//! ([`Empirical::apply_in_place`]): four at a time, X = M·(1 − e^(−E)) with
//! e^(−E) from a short polynomial (relative error under 10⁻¹¹, see
//! [`exp_neg`]), and the index ⌊X⌋ read from the values alone (M·8 bytes,
//! which stay in the first-level cache where the edge table does not).
//! The formula's X, from `exp_m1` and the product, is within an ulp or two
//! of M·U; the polynomial's within M·10⁻¹¹. Where X lies more than
//! M·10⁻¹⁰ from every integer the two floors agree; anywhere else (about
//! one value in 10⁶ for M of a few thousand) the value is looked up as
//! above. Same bits either way.

/// The edges' relative margin (see the module notes).
const MARGIN: f64 = 1e-7;

/// Buckets of the edge table at most.
const MAX_BUCKETS: usize = 1 << 16;

/// How far, relative to M, the polynomial's X must lie from every integer
/// for its floor to be taken (see the module notes).
const LANE_MARGIN: f64 = 1e-10;

/// Values whose indices the lanes compute in one loop, before reading
/// their values (a multiple of four).
const LANE_RUN: usize = 64;

/// Traces of more values than this take the edge table alone: the lanes'
/// margin, M·[`LANE_MARGIN`], would send too many values to it.
const MAX_LANE_VALUES: usize = 10_000_000;

/// A trace's sorted values, and the edges of E at which the index steps.
#[derive(Debug)]
pub(in crate::engine) struct Empirical {
    /// Step k for k = 0..M−1: what one lookup reads, in one cache line.
    steps: Vec<Step>,
    /// For bucket b, covering E in [b/scale, (b+1)/scale), the edges at or
    /// below its start: where the step search begins.
    bucket: Vec<u32>,
    scale: f64,
    /// The k-th smallest value at k, for the lanes.
    values: Vec<f64>,
    /// Whether [`Self::apply_in_place`] takes the lanes: the processor has
    /// AVX2 and M is at most [`MAX_LANE_VALUES`].
    lanes: bool,
}

/// The step of index k, for E in [e_k, e_(k+1)).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Step {
    /// e_(k+1) (+∞ for k = M − 1).
    next_edge: f64,
    /// e_k·(1 + G): at or above, the index is certainly at least k (0 for
    /// k = 0).
    clear_above: f64,
    /// e_(k+1)·(1 − G): below, the index is certainly under k + 1 (+∞ for
    /// k = M − 1).
    clear_below: f64,
    /// The k-th smallest value.
    value: f64,
}

impl Empirical {
    /// The bootstrap from the values `sorted` (ascending, at least one).
    pub(in crate::engine) fn new(sorted: Vec<f64>) -> Self {
        let m = sorted.len();
        assert!(
            m > 0 && m < u32::MAX as usize,
            "the bootstrap needs 1 to 2^32 - 2 values"
        );
        let mut edge: Vec<f64> = (0..m).map(|k| -(-(k as f64) / m as f64).ln_1p()).collect();
        edge.push(f64::INFINITY);
        let steps = (0..m)
            .map(|k| Step {
                next_edge: edge[k + 1],
                clear_above: edge[k] * (1.0 + MARGIN),
                clear_below: if k + 1 < m {
                    edge[k + 1] * (1.0 - MARGIN)
                } else {
                    f64::INFINITY
                },
                value: sorted[k],
            })
            .collect();
        // Edges are at least 1/M apart: 2M buckets per unit of E hold at
        // most one each, up to the last edge, ln M.
        let last = edge[m - 1];
        let scale = if last > 0.0 {
            (2.0 * m as f64).min((MAX_BUCKETS - 1) as f64 / last)
        } else {
            1.0
        };
        let buckets = (last * scale) as usize + 1;
        let mut k = 0;
        let bucket = (0..buckets)
            .map(|b| {
                let start = b as f64 / scale;
                while k + 1 < m && edge[k + 1] <= start {
                    k += 1;
                }
                k as u32
            })
            .collect();
        #[cfg(target_arch = "x86_64")]
        let lanes = m <= MAX_LANE_VALUES && std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let lanes = false;
        Self {
            steps,
            bucket,
            scale,
            values: sorted,
            lanes,
        }
    }

    /// The value at ⌊M·(1 − e^(−e))⌋ (at most M − 1), as the formula
    /// computes it.
    #[inline(always)]
    pub(in crate::engine) fn apply(&self, e: f64) -> f64 {
        let m = self.steps.len();
        let b = ((e * self.scale) as usize).min(self.bucket.len() - 1);
        // A bucket holds at most one edge (or the check below fails): one
        // step up at most, without a branch.
        let k = self.bucket[b] as usize;
        let k = (k + usize::from(e >= self.steps[k].next_edge)).min(m - 1);
        let step = &self.steps[k];
        if e >= step.clear_above && e < step.clear_below {
            step.value
        } else {
            self.steps[Self::index_by_formula(e, m)].value
        }
    }

    /// [`Self::apply`], not inlined.
    #[inline(never)]
    pub(in crate::engine) fn apply_outlined(&self, e: f64) -> f64 {
        self.apply(e)
    }

    /// `e ← apply(e)` for every value of `es`: the same bits, by the lanes
    /// where [`Self::lanes`] says so (see the module notes).
    pub(in crate::engine) fn apply_in_place(&self, es: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if self.lanes {
            // SAFETY: `lanes` is set only where the processor has AVX2.
            unsafe { self.apply_lanes(es) };
            return;
        }
        es.iter_mut().for_each(|e| *e = self.apply(*e));
    }

    /// [`Self::apply_in_place`] four values at a time, in AVX2: up to
    /// [`LANE_RUN`] values' indices in one loop (the lanes' chains
    /// overlap, with no load or branch between them), then their values.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn apply_lanes(&self, es: &mut [f64]) {
        use std::arch::x86_64::*;
        let m = self.values.len() as f64;
        let (mv, margin, one) = (_mm256_set1_pd(m), _mm256_set1_pd(m * LANE_MARGIN), _mm256_set1_pd(1.0));
        let mut index = [0i32; LANE_RUN];
        for run in es.chunks_mut(LANE_RUN) {
            let whole = run.len() / 4 * 4;
            let (lanes, rest) = run.split_at_mut(whole);
            let mut clear_all = 0b1111;
            for (q, at) in lanes.chunks_exact(4).zip(index.chunks_exact_mut(4)) {
                // SAFETY: `q` holds four values.
                let e = unsafe { _mm256_loadu_pd(q.as_ptr()) };
                let x = _mm256_mul_pd(mv, _mm256_sub_pd(one, exp_neg(e)));
                let k = _mm256_floor_pd(x);
                // Clear of both integers. X lies in [0, M]: e^(−E) is
                // clamped to [e^(−40), 1] (NaN to 1), so X = 0 or M, the
                // ends, are never clear, and a clear X has its floor in 0..M.
                let clear = _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_GT_OQ>(_mm256_sub_pd(x, k), margin),
                    _mm256_cmp_pd::<_CMP_GT_OQ>(_mm256_sub_pd(_mm256_add_pd(k, one), x), margin),
                );
                // An index of −1 marks a value that is not clear.
                let k = _mm256_blendv_pd(_mm256_set1_pd(-1.0), k, clear);
                // SAFETY: `at` holds four 32-bit integers.
                unsafe { _mm_storeu_si128(at.as_mut_ptr().cast(), _mm256_cvttpd_epi32(k)) };
                clear_all &= _mm256_movemask_pd(clear);
            }
            if clear_all == 0b1111 {
                for (v, &i) in lanes.iter_mut().zip(&index) {
                    *v = self.values[i as usize];
                }
            } else {
                for (v, &i) in lanes.iter_mut().zip(&index) {
                    *v = if i >= 0 {
                        self.values[i as usize]
                    } else {
                        self.apply(*v)
                    };
                }
            }
            for e in rest {
                *e = self.apply(*e);
            }
        }
    }

    /// ⌊M·U⌋ for U = 1 − e^(−e), at most M − 1.
    #[inline]
    fn index_by_formula(e: f64, m: usize) -> usize {
        let u = -(-e).exp_m1();
        ((u * m as f64) as usize).min(m - 1)
    }
}

/// e^(−c) in four lanes for c = `e` clamped to [0, 40] (NaN to 0), with
/// relative error under 10⁻¹¹: −c = n·ln 2 + r with n an integer and
/// |r| ≤ ln 2 / 2 (and a rounding), e^r by its Taylor polynomial of degree
/// 9 (remainder at most 0.35¹⁰/10!·e^0.35 ≈ 1.1·10⁻¹¹), times 2ⁿ built in
/// the exponent's bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn exp_neg(e: std::arch::x86_64::__m256d) -> std::arch::x86_64::__m256d {
    use std::arch::x86_64::*;
    // 1.5·2⁵²: adding it rounds to an integer, held in the low bits.
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    // ln 2 in two parts, the first with trailing zeros so that n·LN2_HI
    // is exact for |n| < 2¹¹ (fdlibm's split, by its bits).
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // max returns its second operand where the first is NaN.
    let c = _mm256_min_pd(_mm256_max_pd(e, _mm256_setzero_pd()), _mm256_set1_pd(40.0));
    let y = _mm256_sub_pd(_mm256_setzero_pd(), c);
    let shift = _mm256_set1_pd(SHIFT);
    let kd = _mm256_add_pd(_mm256_mul_pd(y, _mm256_set1_pd(std::f64::consts::LOG2_E)), shift);
    let n = _mm256_sub_pd(kd, shift);
    let r = _mm256_sub_pd(
        _mm256_sub_pd(y, _mm256_mul_pd(n, _mm256_set1_pd(LN2_HI))),
        _mm256_mul_pd(n, _mm256_set1_pd(LN2_LO)),
    );
    // Σ r^k/k! for k ≤ 9 by Estrin's scheme: pairs, then pairs of pairs,
    // so that the chain of dependent operations is four steps long rather
    // than Horner's nine (the lanes wait on that chain).
    let f = |k: u32| _mm256_set1_pd(1.0 / (1..=k).product::<u32>() as f64);
    let pair = |k: u32| _mm256_add_pd(f(k), _mm256_mul_pd(f(k + 1), r));
    let r2 = _mm256_mul_pd(r, r);
    let r4 = _mm256_mul_pd(r2, r2);
    let r8 = _mm256_mul_pd(r4, r4);
    let low = _mm256_add_pd(pair(0), _mm256_mul_pd(pair(2), r2));
    let high = _mm256_add_pd(pair(4), _mm256_mul_pd(pair(6), r2));
    let p = _mm256_add_pd(_mm256_add_pd(low, _mm256_mul_pd(high, r4)), _mm256_mul_pd(pair(8), r8));
    // 2ⁿ for n in [−58, 0]: the low bits of kd are n + 2⁵¹ (mod 2¹²).
    let scale = _mm256_slli_epi64::<52>(_mm256_add_epi64(_mm256_castpd_si256(kd), _mm256_set1_epi64x(1023)));
    _mm256_mul_pd(p, _mm256_castsi256_pd(scale))
}

#[cfg(test)]
mod tests {
    use super::Empirical;
    use rand::{RngExt, SeedableRng};

    /// The table, and the lanes over a slice, give the formula's index for
    /// random E, for E at and around every edge (where the formula's
    /// rounding decides), and for the ends: 0, tiny, huge, +∞ and NaN.
    #[test]
    fn table_gives_the_formulas_index_everywhere() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        for m in [1usize, 2, 3, 7, 100, 2752, 100_000] {
            let emp = Empirical::new((0..m).map(|i| i as f64).collect());
            #[cfg(target_arch = "x86_64")]
            assert_eq!(emp.lanes, std::arch::is_x86_feature_detected!("avx2"));
            let all = std::cell::RefCell::new(Vec::new());
            let check = |e: f64| {
                let want = Empirical::index_by_formula(e, m) as f64;
                assert_eq!(emp.apply(e).to_bits(), want.to_bits(), "M = {m}, E = {e:e}");
                all.borrow_mut().push(e);
            };
            for e in [0.0, 1e-300, 1e-9, 50.0, 1e300, f64::INFINITY, f64::NAN] {
                check(e);
            }
            for k in 1..m.min(5000) {
                let edge = -(-(k as f64) / m as f64).ln_1p();
                let mut e = edge;
                let mut up = edge;
                for _ in 0..40 {
                    check(e);
                    check(up);
                    e = e.next_down();
                    up = up.next_up();
                }
                for f in [1e-12, 1e-9, 1e-7, 2e-7, 1e-5] {
                    check(edge * (1.0 + f));
                    check(edge * (1.0 - f));
                }
            }
            for _ in 0..200_000 {
                let e: f64 = rand_distr::Distribution::sample(&rand_distr::Exp1, &mut rng);
                check(e * rng.random_range(0.5..3.0));
            }
            for e in [-1.0, -1e300, f64::NEG_INFINITY, 39.9, 40.0, 41.0, 700.0, 800.0] {
                check(e);
            }
            let mut all = all.into_inner();
            // Every value in every lane, and a remainder.
            for shift in 0..4 {
                let mut got = all[shift..].to_vec();
                emp.apply_in_place(&mut got);
                for (&e, g) in all[shift..].iter().zip(got) {
                    let want = Empirical::index_by_formula(e, m) as f64;
                    assert_eq!(g.to_bits(), want.to_bits(), "lanes, M = {m}, E = {e:e}");
                }
            }
            all.clear();
        }
    }

    /// The lanes' exponential is within its stated relative error, 10⁻¹¹,
    /// of the library's across [0, 40], and clamps outside it.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn exp_neg_is_within_its_error() {
        use std::arch::x86_64::*;
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let lanes = |e: [f64; 4]| {
            let mut out = [0.0; 4];
            // SAFETY: the processor has AVX2 (checked above); both arrays hold four values.
            unsafe { _mm256_storeu_pd(out.as_mut_ptr(), super::exp_neg(_mm256_loadu_pd(e.as_ptr()))) };
            out
        };
        let mut worst = 0.0f64;
        for i in 0..100_000 {
            let e: [f64; 4] = std::array::from_fn(|l| (4 * i + l) as f64 * 1e-4);
            for (e, got) in e.iter().zip(lanes(e)) {
                let want = (-e).exp();
                worst = worst.max(((got - want) / want).abs());
            }
        }
        assert!(worst < 1e-11, "relative error {worst:e}");
        let ends = lanes([-3.0, f64::NAN, 1e300, f64::INFINITY]);
        assert_eq!(ends[..2], [1.0, 1.0]);
        assert_eq!(ends[2..], lanes([40.0; 4])[2..]);
    }
}
