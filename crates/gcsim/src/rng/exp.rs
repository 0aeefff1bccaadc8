//! e^x as glibc's `exp` computes it on a processor with FMA (glibc 2.28
//! on, Arm's optimized-routines algorithm): x = k·ln2/128 + r with |r| ≤
//! ln2/256, e^x = 2^(k/128)·(1 + tmp), 2^(k/128) from a 128-entry table
//! and tmp a degree-5 polynomial in r, with glibc's operations and fused
//! multiply-adds in glibc's order, so the same bits.
//!
//! Why: through libm's `exp`, each log-normal draw e^(μ + σz) costs a
//! call and its errno wrapper, a large share of the hybrid-parallel
//! log-normal path (`bench/hybrid.sh`). [`exp_affine`] computes four draws
//! to an instruction with AVX2; [`exp`] is the same arithmetic one value at a time, so that
//! a draw through [`crate::dist::Dist::sample`] and the same draw in a
//! buffer agree to the bit.
//!
//! Where the processor lacks FMA, and for the arguments glibc handles
//! apart (|x| < 2⁻⁵⁴, |x| ≥ 512, NaN: never a draw of a usable law), both
//! call the platform's `f64::exp`.

use super::exp_data::TAB;

const INV_LN2_N: f64 = f64::from_bits(0x4067_1547_652b_82fe);
const NEG_LN2_HI_N: f64 = f64::from_bits(0xbf76_2e42_fefa_0000);
const NEG_LN2_LO_N: f64 = f64::from_bits(0xbd0c_f79a_bc9e_3b3a);
const SHIFT: f64 = f64::from_bits(0x4338_0000_0000_0000);
const C2: f64 = f64::from_bits(0x3fdf_ffff_ffff_fdbd);
const C3: f64 = f64::from_bits(0x3fc5_5555_5555_543c);
const C4: f64 = f64::from_bits(0x3fa5_5555_cf17_2b91);
const C5: f64 = f64::from_bits(0x3f81_1111_67a4_d017);

/// |x|'s bits from which glibc takes its special case (2⁹ = 512).
const TOO_LARGE: u64 = 0x4080_0000_0000_0000;
/// |x|'s bits below which glibc takes its special case (2⁻⁵⁴).
const TOO_SMALL: u64 = 0x3c90_0000_0000_0000;

/// Whether glibc computes e^x apart (see the module notes).
#[inline(always)]
fn apart(x: f64) -> bool {
    let a = x.to_bits() & !(1 << 63);
    !(TOO_SMALL..TOO_LARGE).contains(&a)
}

/// e^x (see the module notes).
#[inline]
pub fn exp(x: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") && !apart(x) {
        // SAFETY: the processor has FMA.
        return unsafe { exp_fma(x) };
    }
    x.exp()
}

/// glibc's common case of e^x, with FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn exp_fma(x: f64) -> f64 {
    let kd = x.mul_add(INV_LN2_N, SHIFT);
    let ki = kd.to_bits();
    let kd = kd - SHIFT;
    let r = kd.mul_add(NEG_LN2_LO_N, kd.mul_add(NEG_LN2_HI_N, x));
    let i = 2 * (ki & 0x7f) as usize;
    let tail = f64::from_bits(TAB[i]);
    let scale = f64::from_bits(TAB[i + 1].wrapping_add(ki << 45));
    let r2 = r * r;
    let low = r.mul_add(C3, C2).mul_add(r2, r + tail);
    let tmp = (r2 * r2).mul_add(r.mul_add(C5, C4), low);
    scale.mul_add(tmp, scale)
}

/// `xs[i] ← exp(mu + sigma·xs[i])`, [`exp`] of the product then sum as
/// Rust rounds them (no fused multiply-add): with AVX2 and FMA, four to
/// an instruction.
pub fn exp_affine(xs: &mut [f64], mu: f64, sigma: f64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has AVX2 and FMA.
        return unsafe { exp_affine_avx2(xs, mu, sigma) };
    }
    xs.iter_mut().for_each(|z| *z = exp(mu + sigma * *z));
}

/// [`exp_affine`] four at a time; a quad with an argument glibc computes
/// apart, and the last few values, one at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn exp_affine_avx2(xs: &mut [f64], mu: f64, sigma: f64) {
    use std::arch::x86_64::*;
    let (m, s) = (_mm256_set1_pd(mu), _mm256_set1_pd(sigma));
    let mut quads = xs.chunks_exact_mut(4);
    for q in &mut quads {
        // SAFETY: four values.
        let x = _mm256_add_pd(m, _mm256_mul_pd(s, unsafe { _mm256_loadu_pd(q.as_ptr()) }));
        if any_apart4(x) {
            q.iter_mut().for_each(|z| *z = exp(mu + sigma * *z));
            continue;
        }
        let y = exp4(x);
        // SAFETY: four values.
        unsafe { _mm256_storeu_pd(q.as_mut_ptr(), y) };
    }
    quads
        .into_remainder()
        .iter_mut()
        .for_each(|z| *z = exp(mu + sigma * *z));
}

/// Whether glibc computes any of the four values' exponentials apart
/// ([`apart`] in each lane).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn any_apart4(x: std::arch::x86_64::__m256d) -> bool {
    use std::arch::x86_64::*;
    let a = _mm256_and_si256(_mm256_castpd_si256(x), _mm256_set1_epi64x(i64::MAX));
    let out = _mm256_or_si256(
        _mm256_cmpgt_epi64(_mm256_set1_epi64x(TOO_SMALL as i64), a),
        _mm256_cmpgt_epi64(a, _mm256_set1_epi64x(TOO_LARGE as i64 - 1)),
    );
    _mm256_testz_si256(out, out) == 0
}

/// [`exp_fma`] in four lanes: [`exp`]'s bits where [`any_apart4`] is false.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn exp4(x: std::arch::x86_64::__m256d) -> std::arch::x86_64::__m256d {
    use std::arch::x86_64::*;
    let shift = _mm256_set1_pd(SHIFT);
    let kd = _mm256_fmadd_pd(x, _mm256_set1_pd(INV_LN2_N), shift);
    let ki = _mm256_castpd_si256(kd);
    let kd = _mm256_sub_pd(kd, shift);
    let r = _mm256_fmadd_pd(kd, _mm256_set1_pd(NEG_LN2_HI_N), x);
    let r = _mm256_fmadd_pd(kd, _mm256_set1_pd(NEG_LN2_LO_N), r);
    // Each lane's pair of words (tail, scale's bits) in one 16-byte load,
    // the four pairs shuffled into the two vectors: four loads where two
    // gathers cost several times as much.
    let mut i = [0u64; 4];
    let at = _mm256_slli_epi64::<1>(_mm256_and_si256(ki, _mm256_set1_epi64x(0x7f)));
    // SAFETY: four words.
    unsafe { _mm256_storeu_si256(i.as_mut_ptr().cast(), at) };
    // SAFETY: i ≤ 254, so words i and i + 1 are the table's.
    let pair = |j: usize| unsafe { _mm_loadu_si128(TAB.as_ptr().add(i[j] as usize).cast()) };
    let (a, b) = (_mm256_set_m128i(pair(2), pair(0)), _mm256_set_m128i(pair(3), pair(1)));
    let (tail, sbits) = (
        _mm256_castsi256_pd(_mm256_unpacklo_epi64(a, b)),
        _mm256_unpackhi_epi64(a, b),
    );
    let scale = _mm256_castsi256_pd(_mm256_add_epi64(sbits, _mm256_slli_epi64::<45>(ki)));
    let r2 = _mm256_mul_pd(r, r);
    let c = |v: f64| _mm256_set1_pd(v);
    let low = _mm256_fmadd_pd(_mm256_fmadd_pd(r, c(C3), c(C2)), r2, _mm256_add_pd(r, tail));
    let tmp = _mm256_fmadd_pd(_mm256_mul_pd(r2, r2), _mm256_fmadd_pd(r, c(C5), c(C4)), low);
    _mm256_fmadd_pd(scale, tmp, scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::trial_rng;
    use rand::RngExt;

    /// Arguments across the common range (uniform in ±40, normal draws
    /// scaled as a log-normal's, near the special range's edges, powers
    /// of two) and some in the special range.
    fn arguments() -> Vec<f64> {
        let mut rng = trial_rng(5, 0);
        let mut xs: Vec<f64> = (0..400_000).map(|_| rng.random_range(-40.0..40.0)).collect();
        xs.extend((0..400_000).map(|_| rng.random_range(-3.0..3.0) * rng.random::<f64>()));
        for e in -60..10 {
            let p = 2f64.powi(e);
            xs.extend([p, -p, p * (1.0 - f64::EPSILON), -p * (1.0 + f64::EPSILON)]);
        }
        xs.extend([
            0.0,
            -0.0,
            511.9,
            709.7,
            710.0,
            -745.0,
            -746.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]);
        xs
    }

    /// Within half an ulp and a bit of e^x in every case, at most an ulp
    /// from the platform's: whatever the libm, an exponential.
    #[test]
    fn exp_is_an_exponential() {
        for x in arguments() {
            let (ours, theirs) = (exp(x), x.exp());
            let ulps = (ours.to_bits() as i64 - theirs.to_bits() as i64).abs();
            assert!(ulps <= 1, "exp({x:e}) = {ours:e}, the platform's {theirs:e}");
        }
        assert!(exp(f64::NAN).is_nan());
    }

    /// Glibc's exp on x86-64 with FMA, bit for bit.
    #[cfg(all(target_arch = "x86_64", target_env = "gnu"))]
    #[test]
    fn exp_is_glibcs() {
        if !std::arch::is_x86_feature_detected!("fma") {
            return;
        }
        for x in arguments() {
            assert_eq!(exp(x).to_bits(), x.exp().to_bits(), "exp({x:e})");
        }
    }

    /// The buffer's draws are [`exp`]'s one at a time, bit for bit, for
    /// every length (the quads and the rest) and with arguments glibc
    /// computes apart in a quad.
    #[test]
    fn exp_affine_is_exp_of_each() {
        let xs = arguments();
        for (mu, sigma) in [(0.0, 1.0), (0.3, 0.5), (-1.0, 2.5), (400.0, 100.0)] {
            for len in [0, 1, 3, 4, 5, 7, 8, 9, 64, 1001] {
                for start in [0, 17, xs.len() - 1001] {
                    let src = &xs[start..start + len];
                    let mut ours = src.to_vec();
                    exp_affine(&mut ours, mu, sigma);
                    for (i, (&a, &z)) in ours.iter().zip(src).enumerate() {
                        let b = exp(mu + sigma * z);
                        assert_eq!(
                            a.to_bits(),
                            b.to_bits(),
                            "mu {mu}, sigma {sigma}, value {i} of {len}: z = {z:e}"
                        );
                    }
                }
            }
        }
    }
}
