//! Least-squares decoding through the singular value decomposition.
//!
//! The SVD is faer's, held to backward stability on the inputs that break
//! other SVDs: the block-diagonal frc matrices, made of all-ones blocks
//! (nalgebra 0.35's `SVD` gives an all-ones 5 × 5 matrix σ₁ = 5.73 instead
//! of 5: dimforge/nalgebra issue 1172), and their repeated rows, on which
//! faer's own divide and conquer goes wrong ([`svd`]). The products and
//! norms around it are `crate::linalg`'s, in a fixed order.

use std::cell::Cell;

use faer::{Mat, MatRef};

use super::{TOLERANCE, fast};
use crate::linalg::{Columns, mul, mul_into, norm, select_rows, view, view_mut};

/// The outcome of decoding from one set of finished workers.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoding {
    /// The decoding matrix A (t × |F|), column q for the q-th finished worker
    /// in the order given: the minimum-norm solution of A·B_F ≈ T.
    pub coefficients: Mat<f64>,
    /// ‖A·B_F − T‖_F / ‖T‖_F: 0 for an exact decoding, the approximation
    /// error of approximate gradient coding otherwise.
    pub residual: f64,
    /// σ_max / σ_r of B_F over its r numerically nonzero singular values (1
    /// for an empty set).
    pub condition: f64,
    /// The numerical rank r of B_F.
    pub rank: usize,
    /// Whether `residual` is below [`TOLERANCE`].
    pub decodable: bool,
}

/// Decodes T from the rows `finished` of `b`.
pub fn decode(b: &Mat<f64>, target: &Mat<f64>, finished: &[usize]) -> Decoding {
    let n = b.nrows();
    assert!(
        finished.iter().all(|&i| i < n),
        "finished workers are indices 0..{n}, got {finished:?}"
    );
    let t = target.nrows();
    if finished.is_empty() {
        return Decoding {
            coefficients: Mat::zeros(t, 0),
            residual: 1.0,
            condition: 1.0,
            rank: 0,
            decodable: false,
        };
    }
    let bf = select_rows(b, finished);
    if bf.nrows().min(bf.ncols()) >= fast::FAST_FROM
        && let Some(decoding) = fast::decode(bf.as_ref(), target)
    {
        return decoding;
    }
    solve(bf.as_ref(), target, &svd(bf.as_ref()))
}

/// A thin SVD M = U·diag(σ)·Vᵀ as (U, σ, V).
pub(super) type Factorisation = (Columns, Vec<f64>, Columns);

/// The rank rule: singular values of M at or below this are taken as zero
/// (σ_max·max(rows, columns)·ε, as LAPACK and NumPy).
pub(super) fn cutoff(m: MatRef<'_, f64>, sigma: &[f64]) -> f64 {
    let max = sigma.iter().copied().fold(0.0, f64::max);
    max * m.nrows().max(m.ncols()) as f64 * f64::EPSILON
}

thread_local! {
    /// [`solve`]'s intermediates (V_r·Σ_r⁻¹, U_rᵀ, T·V_r·Σ_r⁻¹ and
    /// A·B_F − T, by columns), kept on each thread from one decoding to the
    /// next, as large as its largest decoding's: buffers allocated afresh
    /// for every decoding came back from the allocator as fresh pages often
    /// enough that their page faults made `gcsim codes --n 300 --scheme crc
    /// --s 30` 1.13 times as slow.
    static SCRATCH: Cell<Vec<f64>> = const { Cell::new(Vec::new()) };
}

/// The decoding of T from B_F given B_F's thin SVD `(u, sigma, v)`.
pub(super) fn solve(bf: MatRef<'_, f64>, target: &Mat<f64>, (u, sigma, v): &Factorisation) -> Decoding {
    let norm_t = norm(target);
    let max = sigma.iter().copied().fold(0.0, f64::max);
    let cutoff = cutoff(bf, sigma);
    let kept: Vec<usize> = (0..sigma.len()).filter(|&q| sigma[q] > cutoff).collect();
    let min = kept.iter().map(|&q| sigma[q]).fold(f64::INFINITY, f64::min);
    // A = T·V_r·Σ_r⁻¹·U_rᵀ, as two matrix products (not r rank-one updates).
    let (t, c, r, f) = (target.nrows(), target.ncols(), kept.len(), bf.nrows());
    let mut scratch = SCRATCH.take();
    scratch.resize(scratch.len().max(c * r + r * f + t * r + t * c), 0.0);
    let (v_r, rest) = scratch.split_at_mut(c * r);
    let (u_r, rest) = rest.split_at_mut(r * f);
    let (tv, rest) = rest.split_at_mut(t * r);
    let miss = &mut rest[..t * c];
    for (col, &q) in v_r.chunks_exact_mut(c.max(1)).zip(&kept) {
        col.iter_mut().zip(v.col(q)).for_each(|(x, v)| *x = v / sigma[q]);
    }
    for (col, i) in u_r.chunks_exact_mut(r.max(1)).zip(0..f) {
        col.iter_mut().zip(&kept).for_each(|(x, &q)| *x = u[(i, q)]);
    }
    mul_into(target.as_ref(), view(v_r, c, r), view_mut(tv, t, r));
    let mut coefficients = Mat::zeros(t, f);
    mul_into(view(tv, t, r), view(u_r, r, f), coefficients.as_mut());
    // A·B_F − T, subtracting in place.
    mul_into(coefficients.as_ref(), bf, view_mut(miss, t, c));
    for (col, j) in miss.chunks_exact_mut(t.max(1)).zip(0..c) {
        col.iter_mut().zip(target.col_as_slice(j)).for_each(|(x, t)| *x -= t);
    }
    let residual = norm(view(miss, t, c)) / norm_t;
    SCRATCH.set(scratch);
    Decoding {
        coefficients,
        residual,
        condition: if kept.is_empty() { 1.0 } else { max / min },
        rank: kept.len(),
        decodable: residual < TOLERANCE,
    }
}

/// The thin SVD M = U·diag(σ)·Vᵀ, by faer.
///
/// faer's QR-iteration path is forced first (no divide and conquer, which
/// faer uses past 128 columns): on frc's matrices with many repeated rows,
/// faer 0.24's divide and conquer returns a spurious singular value near
/// 1e-4·σ₁ and a factorisation off by 2e-3 (n = 200, s = 19), while
/// bidiagonal QR iteration is backward stable. QR iteration can however stop
/// without converging on sparse 0/1 matrices with many zero columns (an
/// approx-regular code with d = 2 and a tenth of the workers missing: one
/// of 52 652 random sets at n = 40, 60 and 100); faer reports that instead
/// of a wrong result, and the factorisation is then redone by faer's
/// default path (divide and conquer past 128 columns, QR iteration below),
/// then by divide and conquer down to faer's smallest subproblems, which
/// converged where QR iteration did not (the regression test below); each
/// is kept only if it reproduces M to 1e-12 relative. Sequential, because
/// patterns are decoded in parallel already.
///
/// # Panics
/// If no method factorises M to 1e-12 relative (never observed).
pub(super) fn svd(m: MatRef<'_, f64>) -> Factorisation {
    let accurate = |(u, s, v): &Factorisation| {
        let sigma = Mat::from_fn(s.len(), s.len(), |i, j| if i == j { s[i] } else { 0.0 });
        let product = mul(mul(u.as_ref(), &sigma), v.as_ref().transpose().to_owned());
        norm(&(&product - m)) <= 1e-12 * norm(m).max(f64::MIN_POSITIVE)
    };
    if let Some(f) = faer_svd(m, Method::QrIteration) {
        return f;
    }
    [Method::Default, Method::DivideAndConquer]
        .into_iter()
        .find_map(|method| faer_svd(m, method).filter(accurate))
        .expect("an SVD of a finite matrix that reproduces it")
}

/// How faer computes the SVD of the bidiagonal matrix it reduces M to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    /// Bidiagonal QR iteration throughout.
    QrIteration,
    /// faer's choice: divide and conquer past 128 columns, QR iteration on
    /// the smaller problems.
    Default,
    /// Divide and conquer down to faer's smallest subproblems (fewer than
    /// four columns, by QR iteration).
    DivideAndConquer,
}

/// faer's thin SVD by `method`; `None` if it did not converge.
pub(super) fn faer_svd(m: MatRef<'_, f64>, method: Method) -> Option<Factorisation> {
    use faer::diag::Diag;
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::svd::{self, ComputeSvdVectors, SvdParams};
    use faer::{Auto, Par, Spec};
    let size = m.nrows().min(m.ncols());
    let mut params = <SvdParams as Auto<f64>>::auto();
    params.recursion_threshold = match method {
        Method::QrIteration => usize::MAX,
        Method::Default => params.recursion_threshold,
        Method::DivideAndConquer => 0,
    };
    let params: Spec<SvdParams, f64> = params.into();
    let mut s = Diag::<f64>::zeros(size);
    let mut u = Columns::zeros(m.nrows(), size);
    let mut v = Columns::zeros(m.ncols(), size);
    let scratch = svd::svd_scratch::<f64>(
        m.nrows(),
        m.ncols(),
        ComputeSvdVectors::Thin,
        ComputeSvdVectors::Thin,
        Par::Seq,
        params,
    );
    svd::svd(
        m,
        s.as_mut(),
        Some(u.as_mut()),
        Some(v.as_mut()),
        Par::Seq,
        MemStack::new(&mut MemBuffer::new(scratch)),
        params,
    )
    .ok()?;
    let s = s.column_vector();
    Some((u, (0..size).map(|i| s[i]).collect(), v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ‖U·diag(σ)·Vᵀ − M‖_F.
    fn error(m: MatRef<'_, f64>, (u, s, v): &Factorisation) -> f64 {
        let sigma = Mat::from_fn(s.len(), s.len(), |i, j| if i == j { s[i] } else { 0.0 });
        norm(&(&mul(mul(u.as_ref(), &sigma), v.as_ref().transpose().to_owned()) - m))
    }

    /// Regression: faer's QR iteration stops without converging on some
    /// rows of an approx-regular code (n = 60, d = 2, 6 workers missing: the
    /// 54 × 60 matrix of the 2652nd random set below), which panicked a
    /// sweep; the fallback factorises it, accurately.
    #[test]
    fn svd_falls_back_where_qr_iteration_does_not_converge() {
        let graph = crate::encoding::regular_graph(60, 2, 0);
        let b = Mat::from_fn(60, 60, |i, j| graph[(i, j)] / 2.0);
        let mut rng = crate::rng::trial_rng(5, 0);
        let mut rows: Vec<usize> = Vec::new();
        for _ in 0..=2651 {
            rows = (0..60).collect();
            for _ in 0..6 {
                rows.remove(rand::RngExt::random_range(&mut rng, 0..rows.len()));
            }
        }
        let m = select_rows(&b, &rows);
        let m = m.as_ref();
        assert!(
            faer_svd(m, Method::QrIteration).is_none(),
            "faer 0.24's QR iteration fails on this one"
        );
        let f = svd(m);
        assert!(error(m, &f) < 1e-12 * norm(m));
    }

    /// Backward stability on an all-ones matrix and on the inputs that
    /// break faer's divide and conquer (frc, n = 200, s = 19, 181 rows):
    /// ‖M − UΣVᵀ‖ ≤ 1e-12·‖M‖ and the exact singular values to 1e-12.
    #[test]
    fn svd_is_accurate_on_repeated_rows() {
        let ones = Mat::full(5, 5, 1.0);
        let f = svd(ones.as_ref());
        let s = &f.1;
        assert!((s[0] - 5.0).abs() < 1e-12 && s[1..].iter().all(|&x| x < 1e-12), "{s:?}");
        assert!(error(ones.as_ref(), &f) < 1e-12);
        let frc = crate::encoding::frc(200, 19);
        let mut rng = crate::rng::trial_rng(1, 0);
        for _ in 0..20 {
            let mut rows: Vec<usize> = (0..200).collect();
            for _ in 0..19 {
                rows.remove(rand::RngExt::random_range(&mut rng, 0..rows.len()));
            }
            let m = select_rows(&frc, &rows);
            let m = m.as_ref();
            let f = svd(m);
            let err = error(m, &f);
            assert!(err < 1e-12 * norm(m), "{err}");
            // Every group keeps a row: exactly 10 nonzero singular values √(20·c_g).
            let s = &f.1;
            let nonzero = s.iter().filter(|&&x| x > 1e-10 * s[0]).count();
            assert_eq!(nonzero, 10, "{:?}", &s[..12]);
        }
    }
}
