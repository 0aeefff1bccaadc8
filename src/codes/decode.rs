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
/// # Panics
/// If faer's iteration does not converge (it reports that instead of
/// returning a wrong result).
fn svd(m: &DMatrix<f64>) -> (DMatrix<f64>, Vec<f64>, DMatrix<f64>) {
    let f = faer::Mat::<f64>::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)]);
    let svd = f.thin_svd().expect("the SVD of a finite matrix converges");
    let (u, v) = (svd.U(), svd.V());
    let s = svd.S().column_vector();
    let sigma = (0..s.nrows()).map(|i| s[i]).collect();
    let u = DMatrix::from_fn(u.nrows(), u.ncols(), |i, j| u[(i, j)]);
    let v = DMatrix::from_fn(v.nrows(), v.ncols(), |i, j| v[(i, j)]);
    (u, sigma, v)
}
