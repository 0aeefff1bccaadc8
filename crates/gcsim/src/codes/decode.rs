//! Least-squares decoding through the singular value decomposition.
//!
//! The SVD is faer's: nalgebra 0.35's `SVD` with singular vectors returns
//! wrong singular values on simple inputs (an all-ones 5 × 5 matrix gives
//! σ₁ = 5.73 instead of 5; dimforge/nalgebra issue 1172, open), and the
//! block-diagonal frc matrices are exactly such inputs.

use nalgebra::DMatrix;

use super::{TOLERANCE, fast};

/// The outcome of decoding from one set of finished workers.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoding {
    /// The decoding matrix A (t × |F|), column q for the q-th finished worker
    /// in the order given: the minimum-norm solution of A·B_F ≈ T.
    pub coefficients: DMatrix<f64>,
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
pub fn decode(b: &DMatrix<f64>, target: &DMatrix<f64>, finished: &[usize]) -> Decoding {
    let n = b.nrows();
    assert!(
        finished.iter().all(|&i| i < n),
        "finished workers are indices 0..{n}, got {finished:?}"
    );
    let t = target.nrows();
    if finished.is_empty() {
        return Decoding {
            coefficients: DMatrix::zeros(t, 0),
            residual: 1.0,
            condition: 1.0,
            rank: 0,
            decodable: false,
        };
    }
    let bf = b.select_rows(finished);
    if bf.nrows().min(bf.ncols()) >= fast::FAST_FROM
        && let Some(decoding) = fast::decode(&bf, target)
    {
        return decoding;
    }
    solve(&bf, target, &svd(&bf))
}

/// A thin SVD M = U·diag(σ)·Vᵀ as (U, σ, V).
pub(super) type Factorisation = (DMatrix<f64>, Vec<f64>, DMatrix<f64>);

/// The rank rule: singular values of M at or below this are taken as zero
/// (σ_max·max(rows, columns)·ε, as LAPACK and NumPy).
pub(super) fn cutoff(m: &DMatrix<f64>, sigma: &[f64]) -> f64 {
    let max = sigma.iter().copied().fold(0.0, f64::max);
    max * m.nrows().max(m.ncols()) as f64 * f64::EPSILON
}

/// The decoding of T from B_F given B_F's thin SVD `(u, sigma, v)`.
pub(super) fn solve(bf: &DMatrix<f64>, target: &DMatrix<f64>, (u, sigma, v): &Factorisation) -> Decoding {
    let norm_t = target.norm();
    let max = sigma.iter().copied().fold(0.0, f64::max);
    let cutoff = cutoff(bf, sigma);
    let kept: Vec<usize> = (0..sigma.len()).filter(|&q| sigma[q] > cutoff).collect();
    let min = kept.iter().map(|&q| sigma[q]).fold(f64::INFINITY, f64::min);
    // A = T·V_r·Σ_r⁻¹·U_rᵀ, as two matrix products (not r rank-one updates).
    let mut v_r = v.select_columns(&kept);
    for (j, &q) in kept.iter().enumerate() {
        v_r.column_mut(j).unscale_mut(sigma[q]);
    }
    let coefficients = (target * v_r) * u.select_columns(&kept).transpose();
    let residual = (&coefficients * bf - target).norm() / norm_t;
    Decoding {
        coefficients,
        residual,
        condition: if kept.is_empty() { 1.0 } else { max / min },
        rank: kept.len(),
        decodable: residual < TOLERANCE,
    }
}

/// The thin SVD M = U·diag(σ)·Vᵀ (faer), as nalgebra matrices.
///
/// faer's QR-iteration path is forced first (no divide and conquer, which
/// faer uses past 128 columns): on frc's matrices with many repeated rows,
/// faer 0.24's divide and conquer returns a spurious singular value near
/// 1e-4·σ₁ and a factorisation off by 2e-3 (n = 200, s = 19), while
/// bidiagonal QR iteration is backward stable. QR iteration can however stop
/// without converging on sparse 0/1 matrices with many zero columns (an
/// approx-regular code with d = 2 and some workers missing); faer reports
/// that instead of a wrong result, and the factorisation is then redone by
/// faer's default (divide and conquer) path, whose result is kept only if
/// it reproduces M to 1e-12 relative; failing that, by nalgebra's
/// Golub–Kahan SVD (`SVD::try_new`), with the same check. Sequential,
/// because patterns are decoded in parallel already.
///
/// # Panics
/// If no method factorises M to 1e-12 relative (never observed).
pub(super) fn svd(m: &DMatrix<f64>) -> Factorisation {
    let accurate = |(u, s, v): &Factorisation| {
        let sigma = DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(s));
        (u * sigma * v.transpose() - m).norm() <= 1e-12 * m.norm().max(f64::MIN_POSITIVE)
    };
    if let Some(f) = faer_svd(m, true) {
        return f;
    }
    if let Some(f) = faer_svd(m, false).filter(accurate) {
        return f;
    }
    nalgebra::linalg::SVD::try_new(m.clone(), true, true, f64::EPSILON, 10_000)
        .and_then(|f| Some((f.u?, f.singular_values.iter().copied().collect(), f.v_t?.transpose())))
        .filter(accurate)
        .expect("an SVD of a finite matrix that reproduces it")
}

/// faer's thin SVD, by QR iteration (`qr_iteration`) or faer's default
/// choice; `None` if it did not converge.
pub(super) fn faer_svd(m: &DMatrix<f64>, qr_iteration: bool) -> Option<Factorisation> {
    use faer::diag::Diag;
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::svd::{self, ComputeSvdVectors, SvdParams};
    use faer::{Auto, Mat, Par, Spec};
    let a = Mat::<f64>::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)]);
    let size = m.nrows().min(m.ncols());
    let mut params = <SvdParams as Auto<f64>>::auto();
    if qr_iteration {
        params.recursion_threshold = usize::MAX;
    }
    let params: Spec<SvdParams, f64> = params.into();
    let mut s = Diag::<f64>::zeros(size);
    let mut u = Mat::<f64>::zeros(m.nrows(), size);
    let mut v = Mat::<f64>::zeros(m.ncols(), size);
    let scratch = svd::svd_scratch::<f64>(
        m.nrows(),
        m.ncols(),
        ComputeSvdVectors::Thin,
        ComputeSvdVectors::Thin,
        Par::Seq,
        params,
    );
    svd::svd(
        a.as_ref(),
        s.as_mut(),
        Some(u.as_mut()),
        Some(v.as_mut()),
        Par::Seq,
        MemStack::new(&mut MemBuffer::new(scratch)),
        params,
    )
    .ok()?;
    let s = s.column_vector();
    let sigma = (0..size).map(|i| s[i]).collect();
    let u = DMatrix::from_fn(u.nrows(), u.ncols(), |i, j| u[(i, j)]);
    let v = DMatrix::from_fn(v.nrows(), v.ncols(), |i, j| v[(i, j)]);
    Some((u, sigma, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: faer's QR iteration stops without converging on some
    /// rows of an approx-regular code (n = 60, d = 2, 6 workers missing: the
    /// 54 × 60 matrix of the 2652nd random set below), which panicked a
    /// sweep; the fallback factorises it, accurately.
    #[test]
    fn svd_falls_back_where_qr_iteration_does_not_converge() {
        let b = crate::encoding::regular_graph(60, 2, 0) / 2.0;
        let mut rng = crate::rng::trial_rng(5, 0);
        let mut rows: Vec<usize> = Vec::new();
        for _ in 0..=2651 {
            rows = (0..60).collect();
            for _ in 0..6 {
                rows.remove(rand::RngExt::random_range(&mut rng, 0..rows.len()));
            }
        }
        let m = b.select_rows(&rows);
        assert!(
            faer_svd(&m, true).is_none(),
            "faer 0.24's QR iteration fails on this one"
        );
        let (u, s, v) = svd(&m);
        let sigma = DMatrix::from_diagonal(&s.clone().into());
        assert!((&u * sigma * v.transpose() - &m).norm() < 1e-12 * m.norm());
    }

    /// Backward stability on the inputs that break nalgebra 0.35 (all ones)
    /// and faer's divide and conquer (frc, n = 200, s = 19, 181 rows):
    /// ‖M − UΣVᵀ‖ ≤ 1e-12·‖M‖ and the exact singular values to 1e-12.
    #[test]
    fn svd_is_accurate_on_repeated_rows() {
        let ones = DMatrix::from_element(5, 5, 1.0);
        let (u, s, v) = svd(&ones);
        assert!((s[0] - 5.0).abs() < 1e-12 && s[1..].iter().all(|&x| x < 1e-12), "{s:?}");
        assert!((&u * DMatrix::from_diagonal(&s.clone().into()) * v.transpose() - &ones).norm() < 1e-12);
        let frc = crate::encoding::frc(200, 19);
        let mut rng = crate::rng::trial_rng(1, 0);
        for _ in 0..20 {
            let mut rows: Vec<usize> = (0..200).collect();
            for _ in 0..19 {
                rows.remove(rand::RngExt::random_range(&mut rng, 0..rows.len()));
            }
            let m = frc.select_rows(&rows);
            let (u, s, v) = svd(&m);
            let err = (&u * DMatrix::from_diagonal(&s.clone().into()) * v.transpose() - &m).norm();
            assert!(err < 1e-12 * m.norm(), "{err}");
            // Every group keeps a row: exactly 10 nonzero singular values √(20·c_g).
            let nonzero = s.iter().filter(|&&x| x > 1e-10 * s[0]).count();
            assert_eq!(nonzero, 10, "{:?}", &s[..12]);
        }
    }
}
