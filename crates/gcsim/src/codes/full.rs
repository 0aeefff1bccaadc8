//! What is decided once per code about the set of all its workers: whether
//! it decodes, and which workers it cannot do without.
//!
//! Every trial of a simulation asks for the shortest decodable prefix of an
//! order of all n workers, and its full prefix is always the same set. Its
//! verdict is taken once ([`FullSet::verdict`]), by the decoder on the rows
//! in index order, and stands for every order of them where the residual is
//! at most 1/[`ROBUST`] of [`TOLERANCE`]: another order of the same rows
//! changes only the rounding of the factorisation, of order ε·κ, not the
//! residual by a factor of a thousand.
//!
//! A worker is *essential* when T is far from the span of the other n − 1
//! rows: at least [`DISTANT`] times ‖T‖ away, a thousand times
//! [`TOLERANCE`]. Where the worker arriving last is essential, the n − 1
//! before it do not decode, nor does any shorter prefix (the distance only
//! grows as rows are taken away), so the shortest decodable prefix is all
//! n, with no Gram–Schmidt pass and no SVD
//! ([`super::Code::shortest_decodable_prefix`]). Whatever decoding A the
//! decoder computes for such rows B_F, ‖A·B_F − T‖ is at least their
//! distance, and its computed value misses that by the rounding of the
//! product, of order k·ε·‖A‖·‖B‖ ≤ k·ε·κ(B)·‖T‖ (k the most nonzeros in
//! a column; σ_min(B_F) ≥ σ_min(B) for rows of a matrix of full row rank),
//! inside the allowance below; so the decoder's residual there stays far
//! above [`TOLERANCE`], as does the pass's, and the search answers n
//! however the pass and the SVD go.
//!
//! The distances come from one QR factorisation Bᵀ = Q·R (B of full row
//! rank, n ≤ c): row i of B⁺ᵀ is row i of R⁻¹ times Qᵀ, so b_i's distance
//! from the other rows is 1/‖R⁻¹\[i, :\]‖; T = Y·B with Yᵀ = R⁻¹·R⁻ᵀ·B·Tᵀ,
//! and T's distance from the other rows is ‖Y\[:, i\]‖/‖R⁻¹\[i, :\]‖. Both
//! are computed to an error of order n·ε·κ(B)·‖T‖ (QR backward stable, the
//! triangular solves accurate row by row to n·ε·κ); a worker is essential
//! where the computed distance, less [`ERROR_FACTOR`]·(n + c)·ε·κ̂·‖T‖ with
//! κ̂ = ‖B‖_F·‖R⁻¹‖_F ≥ κ(B), is still at least [`DISTANT`]·‖T‖. Cost:
//! O(n²·c), once, against a Gram–Schmidt pass and an SVD of the n × c
//! matrix per trial.

use std::sync::{Arc, OnceLock};

use faer::linalg::triangular_solve::{solve_lower_triangular_in_place, solve_upper_triangular_in_place};
use faer::{Mat, Par};

use super::{Code, TOLERANCE};

/// A verdict on all workers stands for every order of them when its
/// residual is this many times below [`TOLERANCE`] (module notes).
const ROBUST: f64 = 1e3;

/// T at least this far from the span of the other rows, relative to ‖T‖,
/// makes a worker essential: a thousand times [`TOLERANCE`], where the
/// Gram–Schmidt pass proposes a prefix.
const DISTANT: f64 = 1e3 * TOLERANCE;

/// The computed distances are trusted to this many times (n + c)·ε·κ̂·‖T‖.
const ERROR_FACTOR: f64 = 4.0;

/// The facts of a code's set of all workers, each computed at most once and
/// shared by the code's copies (and by the codes built from one
/// [`super::custom::CustomMatrix`]).
#[derive(Debug, Default)]
pub(crate) struct FullSet {
    /// The decoder's verdict on all rows in index order, and whether it
    /// stands for every order of them.
    verdict: OnceLock<(bool, bool)>,
    /// Which workers are essential, where any is.
    essential: OnceLock<Option<Vec<bool>>>,
}

/// A [`FullSet`] to share.
pub(crate) type Shared = Arc<FullSet>;

impl FullSet {
    /// Whether the decoder decodes from every worker (rows in index order)
    /// and whether that verdict holds for any order of them.
    pub(crate) fn verdict(&self, code: &Code) -> (bool, bool) {
        *self.verdict.get_or_init(|| {
            let all: Vec<usize> = (0..code.encoding().nrows()).collect();
            let d = code.decode(&all);
            (d.decodable, d.residual <= TOLERANCE / ROBUST)
        })
    }

    /// Whether the shortest decodable prefix of an order of all workers
    /// whose last is `last` is all of them, known without decoding
    /// (module notes).
    pub(crate) fn needs_all(&self, code: &Code, last: usize) -> bool {
        let essential = self.essential.get_or_init(|| {
            let (decodable, robust) = self.verdict(code);
            (decodable && robust).then(|| essential(code)).flatten()
        });
        essential.as_ref().is_some_and(|e| e[last])
    }
}

/// Which workers are essential (module notes), or `None` where B has more
/// rows than columns or no worker is shown essential.
fn essential(code: &Code) -> Option<Vec<bool>> {
    let (b, target) = (code.encoding(), code.target());
    let (n, c) = (b.nrows(), b.ncols());
    if n > c {
        return None;
    }
    let qr = b.transpose().to_owned().qr();
    let r = qr.thin_R();
    // X = R⁻¹, whose row i is row i of B⁺ᵀ in Q's coordinates.
    let mut x = Mat::<f64>::identity(n, n);
    solve_upper_triangular_in_place(r, x.as_mut(), Par::Seq);
    // Yᵀ = R⁻¹·(R⁻ᵀ·B·Tᵀ).
    let mut z = b * target.transpose();
    solve_lower_triangular_in_place(r.transpose(), z.as_mut(), Par::Seq);
    let y = &x * &z;
    let t_norm = target.norm_l2();
    let kappa = b.norm_l2() * x.norm_l2();
    let error = ERROR_FACTOR * (n + c) as f64 * f64::EPSILON * kappa * t_norm;
    let row_norm = |m: &Mat<f64>, i: usize| m.row(i).iter().map(|v| v * v).sum::<f64>().sqrt();
    let essential: Vec<bool> = (0..n)
        .map(|i| row_norm(&y, i) / row_norm(&x, i) - error >= DISTANT * t_norm)
        .collect();
    essential.contains(&true).then_some(essential)
}
