//! ln x as glibc's `log` computes it on a processor with FMA (glibc 2.28
//! on, Arm's optimized-routines algorithm), four values to an instruction:
//! x = 2^k·z with z near a table point c, ln x = k·ln2 + ln c + ln(z/c),
//! 1/c and ln c from a 128-entry table and ln(z/c) = ln(1 + r) from a
//! degree-5 polynomial in r = z/c − 1, with glibc's operations and fused
//! multiply-adds in glibc's order, so the same bits.
//!
//! Why: the forward–backward pass of `trace::hmm` takes the logarithm of
//! every scale factor in every E-step, and `trace` and `fit` that of every
//! time; through libm each is a call, one value at a time.
//!
//! Within about 1/16 of 1 glibc takes ln(1 + r) with r = x − 1 from a
//! degree-11 polynomial instead, also done here. Where the processor lacks
//! AVX2 or FMA, and for x not a positive normal number (which glibc
//! handles apart), [`ln_in_place`] calls the platform's `f64::ln`, a quad
//! at a time.

use super::ln_data::TAB;

/// `Ln2hi`, `Ln2lo`: ln 2 in two parts.
#[cfg(target_arch = "x86_64")]
const LN2_HI: f64 = f64::from_bits(0x3fe62e42fefa3800);
#[cfg(target_arch = "x86_64")]
const LN2_LO: f64 = f64::from_bits(0x3d2ef35793c76730);
/// The polynomial's coefficients, `__log_data.poly`, and those of the
/// polynomial near 1, `__log_data.poly1`.
#[cfg(target_arch = "x86_64")]
const A: [f64; 5] = [
    f64::from_bits(0xbfe0000000000001),
    f64::from_bits(0x3fd555555551305b),
    f64::from_bits(0xbfcfffffffeb4590),
    f64::from_bits(0x3fc999b324f10111),
    f64::from_bits(0xbfc55575e506c89f),
];
#[cfg(target_arch = "x86_64")]
const B: [f64; 11] = [
    f64::from_bits(0xbfe0000000000000),
    f64::from_bits(0x3fd5555555555577),
    f64::from_bits(0xbfcffffffffffdcb),
    f64::from_bits(0x3fc999999995dd0c),
    f64::from_bits(0xbfc55555556745a7),
    f64::from_bits(0x3fc24924a344de30),
    f64::from_bits(0xbfbfffffa4423d65),
    f64::from_bits(0x3fbc7184282ad6ca),
    f64::from_bits(0xbfb999eb43b068ff),
    f64::from_bits(0x3fb78182f7afd085),
    f64::from_bits(0xbfb5521375d145cd),
];
/// The bits from which the table's subintervals are counted (0.6875).
const OFF: u64 = 0x3fe6000000000000;
/// The bits of 1 − 2⁻⁴, where glibc's range near 1 begins.
const NEAR_ONE_FROM: u64 = 0x3fee000000000000;
/// The width of that range in bits, up to 1 + 0x1.09p-4.
const NEAR_ONE_WIDTH: u64 = 0x0003090000000000;

/// `xs[i] ← ln xs[i]`, with the bits of the platform's `f64::ln` where it is
/// glibc's: with AVX2 and FMA, four to an instruction.
pub fn ln_in_place(xs: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has AVX2 and FMA.
        return unsafe { ln_in_place_avx2(xs) };
    }
    xs.iter_mut().for_each(|x| *x = x.ln());
}

/// [`ln_in_place`] four at a time; a quad with a value glibc computes
/// apart, and the last few values, one at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn ln_in_place_avx2(xs: &mut [f64]) {
    use std::arch::x86_64::*;
    let mut quads = xs.chunks_exact_mut(4);
    for q in &mut quads {
        let q: &mut [f64; 4] = q.try_into().expect("four values");
        // SAFETY: four values.
        let x = unsafe { _mm256_loadu_pd(q.as_ptr()) };
        match ln4(x) {
            // SAFETY: four values.
            Some(y) => unsafe { _mm256_storeu_pd(q.as_mut_ptr(), y) },
            None => q.iter_mut().for_each(|x| *x = x.ln()),
        }
    }
    quads.into_remainder().iter_mut().for_each(|x| *x = x.ln());
}

/// glibc's ln x in four lanes, near 1 and elsewhere; `None` where a lane
/// is one glibc computes apart (x not a positive normal number).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn ln4(x: std::arch::x86_64::__m256d) -> Option<std::arch::x86_64::__m256d> {
    use std::arch::x86_64::*;
    let ix = _mm256_castpd_si256(x);
    let int = |v: u64| _mm256_set1_epi64x(v as i64);
    // Positive normal numbers are the bits from 0x0010… to 0x7fef… read as
    // signed integers (a negative x is negative).
    let out = _mm256_or_si256(
        _mm256_cmpgt_epi64(int(0x0010000000000000), ix),
        _mm256_cmpgt_epi64(ix, int(0x7fefffffffffffff)),
    );
    if _mm256_testz_si256(out, out) == 0 {
        return None;
    }
    // The table entry i, the exponent k and z = x / 2^k.
    let tmp = _mm256_sub_epi64(ix, int(OFF));
    let at = _mm256_slli_epi64::<1>(_mm256_and_si256(_mm256_srli_epi64::<45>(tmp), int(0x7f)));
    let mut i = [0u64; 4];
    // SAFETY: four words.
    unsafe { _mm256_storeu_si256(i.as_mut_ptr().cast(), at) };
    // SAFETY: i ≤ 254, so words i and i + 1 are the table's.
    let pair = |j: usize| unsafe { _mm_loadu_si128(TAB.as_ptr().add(i[j] as usize).cast()) };
    let (a, b) = (_mm256_set_m128i(pair(2), pair(0)), _mm256_set_m128i(pair(3), pair(1)));
    let (invc, logc) = (
        _mm256_castsi256_pd(_mm256_unpacklo_epi64(a, b)),
        _mm256_castsi256_pd(_mm256_unpackhi_epi64(a, b)),
    );
    let z = _mm256_castsi256_pd(_mm256_sub_epi64(ix, _mm256_and_si256(tmp, int(0xfff << 52))));
    // k = tmp >> 52 as a signed 12-bit number: 2⁵² + (k + 2048) read as a
    // double, less 2⁵² + 2048, exactly.
    let biased = _mm256_xor_si256(_mm256_srli_epi64::<52>(tmp), int(0x800));
    let kd = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(biased, int(0x4330000000000000))),
        _mm256_set1_pd(f64::from_bits(0x4330000000000800)),
    );
    let c = |v: f64| _mm256_set1_pd(v);
    // r = z/c − 1; hi + lo = r + ln c + k·ln2.
    let r = _mm256_fmadd_pd(z, invc, c(-1.0));
    let w = _mm256_fmadd_pd(kd, c(LN2_HI), logc);
    let hi = _mm256_add_pd(r, w);
    let lo = _mm256_fmadd_pd(kd, c(LN2_LO), _mm256_add_pd(_mm256_sub_pd(w, hi), r));
    // ln x = lo + r²·A₀ + r³·(A₁ + r·A₂ + r²·(A₃ + r·A₄)) + hi.
    let r2 = _mm256_mul_pd(r, r);
    let p = _mm256_fmadd_pd(
        _mm256_fmadd_pd(r, c(A[4]), c(A[3])),
        r2,
        _mm256_fmadd_pd(r, c(A[2]), c(A[1])),
    );
    let y = _mm256_fmadd_pd(_mm256_mul_pd(r, r2), p, _mm256_fmadd_pd(r2, c(A[0]), lo));
    let common = _mm256_add_pd(y, hi);
    // Near 1: 0 ≤ ix − (1 − 2⁻⁴)'s bits < the range's width, as signed
    // integers (ix is below 2⁶³).
    let from = _mm256_sub_epi64(ix, int(NEAR_ONE_FROM));
    let near = _mm256_andnot_si256(
        _mm256_cmpgt_epi64(_mm256_setzero_si256(), from),
        _mm256_cmpgt_epi64(int(NEAR_ONE_WIDTH), from),
    );
    if _mm256_testz_si256(near, near) == 1 {
        return Some(common);
    }
    // glibc returns +0 for x = 1 before its polynomial.
    let at_one = _mm256_cmp_pd::<_CMP_EQ_OQ>(x, c(1.0));
    let close = _mm256_andnot_pd(at_one, near_one(_mm256_sub_pd(x, c(1.0))));
    Some(_mm256_blendv_pd(common, close, _mm256_castsi256_pd(near)))
}

/// glibc's ln(1 + r) near 1, r = x − 1, in four lanes: a polynomial r³·P(r)
/// beside r − r²/2 carried in two parts (r's high half exact in its square).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn near_one(r: std::arch::x86_64::__m256d) -> std::arch::x86_64::__m256d {
    use std::arch::x86_64::*;
    let c = |v: f64| _mm256_set1_pd(v);
    let fma = |a, b, c| _mm256_fmadd_pd(a, b, c);
    let r2 = _mm256_mul_pd(r, r);
    let r3 = _mm256_mul_pd(r, r2);
    let p1 = fma(r2, c(B[3]), fma(r, c(B[2]), c(B[1])));
    let p2 = fma(r2, c(B[6]), fma(r, c(B[5]), c(B[4])));
    let p3 = fma(r3, c(B[10]), fma(r2, c(B[9]), fma(r, c(B[8]), c(B[7]))));
    let p = fma(fma(p3, r3, p2), r3, p1);
    // rhi = r + w − w with w = r·2²⁷, as glibc's compiler fuses it.
    let scale = c(134_217_728.0);
    let rhi = _mm256_fnmadd_pd(scale, r, fma(r, scale, r));
    let rlo = _mm256_sub_pd(r, rhi);
    let rhi2 = _mm256_mul_pd(rhi, rhi);
    let hi = fma(rhi2, c(B[0]), r);
    let lo = fma(rhi2, c(B[0]), _mm256_sub_pd(r, hi));
    let lo = fma(_mm256_mul_pd(c(B[0]), rlo), _mm256_add_pd(r, rhi), lo);
    _mm256_add_pd(hi, fma(p, r3, lo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::trial_rng;
    use rand::RngExt;

    /// Values across the range: uniform in (0, 4) and around 1, log-uniform
    /// over the normal numbers, near the edges of glibc's range near 1,
    /// powers of two, and some glibc computes apart.
    fn arguments() -> Vec<f64> {
        let mut rng = trial_rng(7, 0);
        let mut xs: Vec<f64> = (0..400_000).map(|_| rng.random_range(0.0..4.0)).collect();
        xs.extend((0..200_000).map(|_| rng.random_range(0.8..1.2)));
        xs.extend((0..200_000).map(|_| 2f64.powf(rng.random_range(-1020.0..1020.0))));
        for edge in [NEAR_ONE_FROM, NEAR_ONE_FROM + NEAR_ONE_WIDTH] {
            xs.extend((0..8).map(|d| f64::from_bits(edge - 4 + d)));
        }
        for e in -1074..1024 {
            let p = 2f64.powi(e);
            xs.extend([p, p * (1.0 - f64::EPSILON), p * (1.0 + f64::EPSILON)]);
        }
        xs.extend([
            0.0,
            -0.0,
            -1.0,
            1.0,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
        ]);
        xs
    }

    /// Within an ulp of the platform's ln in every case: whatever the libm,
    /// a logarithm.
    #[test]
    fn ln_is_a_logarithm() {
        let xs = arguments();
        let mut ours = xs.clone();
        ln_in_place(&mut ours);
        for (&x, &y) in xs.iter().zip(&ours) {
            let theirs = x.ln();
            if theirs.is_nan() {
                assert!(y.is_nan(), "ln({x:e}) = {y:e}");
                continue;
            }
            let ulps = (y.to_bits() as i64 - theirs.to_bits() as i64).abs();
            assert!(ulps <= 1, "ln({x:e}) = {y:e}, the platform's {theirs:e}");
        }
    }

    /// Glibc's log on x86-64 with FMA, bit for bit, for every length (the
    /// quads and the rest).
    #[cfg(all(target_arch = "x86_64", target_env = "gnu"))]
    #[test]
    fn ln_is_glibcs() {
        if !std::arch::is_x86_feature_detected!("fma") {
            return;
        }
        let xs = arguments();
        for start in [0, 1, 2, 3] {
            let mut ours = xs[start..].to_vec();
            ln_in_place(&mut ours);
            for (&x, &y) in xs[start..].iter().zip(&ours) {
                assert_eq!(y.to_bits(), x.ln().to_bits(), "ln({x:e})");
            }
        }
    }
}
