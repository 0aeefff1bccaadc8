//! Least-squares decoding through the singular value decomposition.
//!
//! The SVD is faer's: nalgebra 0.35's `SVD` with singular vectors returns
//! wrong singular values on simple inputs (an all-ones 5 × 5 matrix gives
//! σ₁ = 5.73 instead of 5; dimforge/nalgebra issue 1172, open), and the
//! block-diagonal frc matrices are exactly such inputs.

use nalgebra::DMatrix;

use super::TOLERANCE;

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
    let norm_t = target.norm();
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
    let (u, sigma, v) = svd(&bf);
    let max = sigma.iter().copied().fold(0.0, f64::max);
    let cutoff = max * bf.nrows().max(bf.ncols()) as f64 * f64::EPSILON;
    let kept: Vec<usize> = (0..sigma.len()).filter(|&q| sigma[q] > cutoff).collect();
    let min = kept.iter().map(|&q| sigma[q]).fold(f64::INFINITY, f64::min);
    // A = T·V_r·Σ_r⁻¹·U_rᵀ.
    let mut coefficients = DMatrix::zeros(t, finished.len());
    for &q in &kept {
        let proj = target * v.column(q) / sigma[q];
        coefficients += proj * u.column(q).transpose();
    }
    let residual = (&coefficients * &bf - target).norm() / norm_t;
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
/// faer's QR-iteration path is forced (no divide and conquer, which faer
/// uses past 128 columns): on frc's matrices with many repeated rows, faer
/// 0.24's divide and conquer returns a spurious singular value near 1e-4·σ₁
/// and a factorisation off by 2e-3 (n = 200, s = 19), while bidiagonal QR
/// iteration is backward stable. Sequential, because patterns are decoded in
/// parallel already.
///
/// # Panics
/// If faer's iteration does not converge (it reports that instead of
/// returning a wrong result).
fn svd(m: &DMatrix<f64>) -> (DMatrix<f64>, Vec<f64>, DMatrix<f64>) {
    use faer::diag::Diag;
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::svd::{self, ComputeSvdVectors, SvdParams};
    use faer::{Auto, Mat, Par, Spec};
    let a = Mat::<f64>::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)]);
    let size = m.nrows().min(m.ncols());
    let mut params = <SvdParams as Auto<f64>>::auto();
    params.recursion_threshold = usize::MAX;
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
    .expect("the SVD of a finite matrix converges");
    let s = s.column_vector();
    let sigma = (0..size).map(|i| s[i]).collect();
    let u = DMatrix::from_fn(u.nrows(), u.ncols(), |i, j| u[(i, j)]);
    let v = DMatrix::from_fn(v.nrows(), v.ncols(), |i, j| v[(i, j)]);
    (u, sigma, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Backward stability on the inputs that break nalgebra 0.35 (all ones)
    /// and faer's divide and conquer (frc, n = 200, s = 19, 181 rows):
    /// ‖M − UΣVᵀ‖ ≤ 1e-12·‖M‖ and the exact singular values to 1e-12.
    #[test]
    fn svd_is_accurate_on_repeated_rows() {
        let ones = DMatrix::from_element(5, 5, 1.0);
        let (u, s, v) = svd(&ones);
        assert!((s[0] - 5.0).abs() < 1e-12 && s[1..].iter().all(|&x| x < 1e-12), "{s:?}");
        assert!((&u * DMatrix::from_diagonal(&s.clone().into()) * v.transpose() - &ones).norm() < 1e-12);
        let frc = super::super::build::frc(200, 19);
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
