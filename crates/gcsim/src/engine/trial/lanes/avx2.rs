//! [`super::Lanes`]'s step, four lanes to an AVX2 instruction: the
//! arithmetic of `super::step` lane by lane, in its order and without a
//! fused multiply-add, so the same bits. Written out because the
//! compiler, left to vectorise that loop, splits 16 lanes into three
//! vectors of four, one of two and two single lanes.

use std::arch::x86_64::*;

/// One op in every lane (a multiple of four) as `super::step` does it,
/// `kind` its (link, backward, chunked).
///
/// Inlined, as the intrinsics are, into [`super::Lanes::run_avx2`]: as a
/// function of its own with the `avx2` feature it is a call per step.
///
/// # Safety
/// The processor has AVX2.
#[inline(always)]
pub(super) unsafe fn step<const BUSY: bool>(
    kind: (bool, bool, bool),
    x: &[f64],
    ready: &[f64],
    out: &mut [f64],
    free: &mut [f64],
    busy: &mut [f64],
    at: (f64, f64, f64),
) {
    // SAFETY: the processor has AVX2 (the caller's promise).
    unsafe {
        match kind {
            (false, false, false) => quads::<false, false, false, BUSY>(x, ready, out, free, busy, at),
            (false, true, false) => quads::<false, true, false, BUSY>(x, ready, out, free, busy, at),
            (true, false, false) => quads::<true, false, false, BUSY>(x, ready, out, free, busy, at),
            (true, true, false) => quads::<true, true, false, BUSY>(x, ready, out, free, busy, at),
            (false, false, true) => quads::<false, false, true, BUSY>(x, ready, out, free, busy, at),
            (false, true, true) => quads::<false, true, true, BUSY>(x, ready, out, free, busy, at),
            (true, false, true) => quads::<true, false, true, BUSY>(x, ready, out, free, busy, at),
            (true, true, true) => quads::<true, true, true, BUSY>(x, ready, out, free, busy, at),
        }
    }
}

/// [`step`] of one kind.
///
/// # Safety
/// The processor has AVX2.
#[inline(always)]
unsafe fn quads<const LINK: bool, const BACKWARD: bool, const CHUNKED: bool, const BUSY: bool>(
    x: &[f64],
    ready: &[f64],
    out: &mut [f64],
    free: &mut [f64],
    busy: &mut [f64],
    (forward_share, p2p, chunks): (f64, f64, f64),
) {
    let n = out.len();
    assert!(n.is_multiple_of(4) && x.len() >= n && ready.len() >= n && free.len() >= n && busy.len() >= n);
    // SAFETY: the processor has AVX2 (the caller's promise).
    let (share, p2p, chunks) = unsafe {
        (
            _mm256_set1_pd(forward_share),
            _mm256_set1_pd(p2p),
            _mm256_set1_pd(chunks),
        )
    };
    for k in (0..n).step_by(4) {
        // SAFETY: as above, and k + 4 ≤ n, within each slice (asserted).
        unsafe {
            let x = _mm256_loadu_pd(x.as_ptr().add(k));
            let forward = _mm256_mul_pd(x, share);
            let part = if BACKWARD { _mm256_sub_pd(x, forward) } else { forward };
            let duration = if CHUNKED { _mm256_div_pd(part, chunks) } else { part };
            let ready = _mm256_loadu_pd(ready.as_ptr().add(k));
            let input = if LINK { _mm256_add_pd(ready, p2p) } else { ready };
            // MAXPD(a, b) is a > b ? a : b, as `super::step` selects.
            let start = _mm256_max_pd(input, _mm256_loadu_pd(free.as_ptr().add(k)));
            let end = _mm256_add_pd(start, duration);
            _mm256_storeu_pd(free.as_mut_ptr().add(k), end);
            if BUSY {
                let sum = _mm256_add_pd(_mm256_loadu_pd(busy.as_ptr().add(k)), duration);
                _mm256_storeu_pd(busy.as_mut_ptr().add(k), sum);
            }
            _mm256_storeu_pd(out.as_mut_ptr().add(k), end);
        }
    }
}
