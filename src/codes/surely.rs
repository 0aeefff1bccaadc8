//! A certificate that the SVD decodes a prefix, from the Gram–Schmidt pass
//! alone.
//!
//! The question is whether [`super::decode::decode`]'s computed residual
//! r = ‖fl(A·B) − T‖_F / ‖T‖_F is below [`TOLERANCE`], for the rows B (m × c)
//! of a prefix and A computed as fl(fl(T·fl(V̂·Σ̂⁻¹))·Ûᵀ) from faer's SVD. The
//! pass kept every row of the prefix, so B has full row rank in exact
//! arithmetic, B ≈ L·Q with L (m × m) lower triangular and Q's rows
//! orthonormal, and T's coordinates t = T·Qᵀ. From these:
//!
//! - a = t·L⁻¹, a decoding (any t × m matrix would do for what follows), and
//!   ρ̂, the computed ‖T − a·B‖_F / ‖T‖_F. The distance δ of T from B's row
//!   space is at most ‖T − a·B‖/‖T‖ ≤ δ̄ = ρ̂·(1 + 0.01) + γ_{m+1}·(1 +
//!   ‖a‖‖B‖/‖T‖) (a sum of m + 1 terms per entry, Higham 2002 §3.1).
//! - κ̂ = ‖B‖_F·‖L⁻¹‖_F, computed. Gram–Schmidt with reorthogonalisation
//!   gives B = L·Q + F with ‖F‖/‖B‖ and the loss of orthogonality of Q of
//!   order c·m^{3/2}·ε (Giraud, Langou, Rozložník & van den Eshof 2005),
//!   taken here as (m + c)^{5/2}·ε; while that times κ̂ is at most 1/4,
//!   σ_min(B) ≥ (√(3/4) − 1/4)/‖L⁻¹‖ ≥ 1/(2‖L⁻¹‖_F), so κ(B) ≤ 2κ̂.
//! - The minimum-norm decoding A* = T·B⁺ (B·B⁺ = I) equals a + (T − a·B)·B⁺,
//!   so ‖A*‖ ≤ ā = ‖a‖ + 2·δ̄·‖T‖·‖L⁻¹‖_F; κ_A = ā·‖B‖/‖T‖ is the
//!   amplification that matters below (often well under κ(B)).
//!
//! Throughout, ‖B‖ without a subscript is min(‖B‖_F, √(‖B‖₁·‖B‖_∞)),
//! computed (times 1.01 for its rounding): both bound ‖B‖₂ and ‖|B|‖₂, which
//! are what the error terms need (Higham 2002, §6.3); the second is the
//! smaller on sparse rows such as crc's.
//!
//! The SVD is backward stable: Û, V̂ lie within η of orthonormal U, V with
//! U·Σ̂·Vᵀ = B + E, ‖E‖ ≤ η‖B‖ (LAPACK Users' Guide §4.9: η = p(m, c)·ε for
//! "a modestly growing function" p). This module takes η = 2(m + c)·ε
//! ([`svd_allowance`]; 190ε for crc at n = 50, s = 5), where faer's
//! bidiagonal QR iteration was measured at most 113ε (‖E‖_F/σ₁, the check's
//! own rounding included) and 95ε (‖ÛᵀÛ − I‖_F); a test holds it to that.
//! With κ(B)·η ≪ 1 the rank rule then keeps all m singular values, and to
//! first order in ε (the bound is multiplied by 1.01 for the rest):
//!
//! - exact products from the computed factors miss T by at most
//!   δ + 3η·κ_A + η. Write T = A*·B + R⊥ (‖R⊥‖ = δ‖T‖); A₀ = T·(B+E)⁺ gives
//!   A₀·B − T = −T(I − VVᵀ) − A₀E with T(I − VVᵀ) = R⊥(I − VVᵀ) −
//!   A*E(I − VVᵀ), and Û, V̂'s own errors add η·κ_A and η;
//! - the first product and the divisions by σ̂ add γ_{c+1}·√m (their error
//!   is multiplied by Σ̂⁻¹ and then by B ≈ U·Σ̂·Vᵀ, which cancel);
//! - the second product adds γ_m·√m·κ_A, the residual's product γ_m·κ_A, and
//!   the subtraction and the norms a relative O(c·ε) of r.
//!
//! So r ≤ 1.01·(δ̄ + κ_A·(3η + γ_m·(√m + 1)) + η + γ_{c+1}·√m), and the
//! certificate holds when that bound is at most [`TOLERANCE`]/[`SAFETY`]
//! and κ̂ ≤ [`MAX_CONDITION`]. It is only used below the fast routes'
//! sizes ([`super::fast::FAST_FROM`]), where the verdict is the reference
//! SVD's. The bound does not cover the fallbacks `decode` takes where
//! faer's QR iteration does not converge (factorisations held to 1e-12
//! only): the one such matrix seen (approx-regular with d = 2, the
//! regression test in `decode.rs`) has full row rank but misses T by 0.14,
//! so the pass proposes no candidate there and nothing is certified.
//!
//! On crc at n = 50 (s = 1..10) most candidates are certified, where κ(B)
//! is up to about 10⁴; the ill-conditioned ones (κ up to 10⁶, where the
//! SVD's residual reaches 5e-11) go to the SVD.

use nalgebra::DMatrix;

use super::TOLERANCE;
use super::fast::FAST_FROM;
use super::prefix::dot;

/// The bound must be below [`TOLERANCE`] by this factor: room for a
/// backward error of the SVD twice the one assumed.
const SAFETY: f64 = 2.0;

/// Above this κ̂ no certificate: the first-order terms dropped would no
/// longer be negligible.
const MAX_CONDITION: f64 = 1e8;

/// What the pass knows of a prefix all of whose rows grew its basis.
pub(super) struct Prefix<'a> {
    /// The code's B (n × c).
    pub(super) encoding: &'a DMatrix<f64>,
    /// The code's T (t × c).
    pub(super) target: &'a DMatrix<f64>,
    /// The prefix's workers, in order: B's rows.
    pub(super) rows: &'a [usize],
    /// L, row j (j + 1 entries) after row j − 1.
    pub(super) factor: &'a [f64],
    /// T·Qᵀ: `coordinates[k·t + r]` for T's row r and basis row k.
    pub(super) coordinates: &'a [f64],
}

/// η: the backward error and the loss of orthogonality assumed of the SVD
/// of an m × c matrix, relative to its norm (module notes).
fn svd_allowance(m: usize, c: usize) -> f64 {
    2.0 * (m + c) as f64 * f64::EPSILON
}

/// γ_k = k·ε/(1 − k·ε) (Higham 2002, Lemma 3.1).
fn gamma(k: usize) -> f64 {
    let ku = k as f64 * f64::EPSILON;
    ku / (1.0 - ku)
}

/// Whether the SVD surely decodes T from the prefix's rows (module notes);
/// `false` when that cannot be shown.
///
/// Cost: O(m³/6 + m·c·t), against the SVD's O(m²·c) with a larger constant.
pub(super) fn decodes(p: &Prefix) -> bool {
    bound(p).is_some_and(|b| b <= TOLERANCE / SAFETY)
}

/// The bound on the SVD's residual (module notes), or `None` outside the
/// sizes and conditioning where it is shown.
pub(super) fn bound(p: &Prefix) -> Option<f64> {
    let m = p.rows.len();
    let (t, c) = (p.target.nrows(), p.target.ncols());
    if m == 0 || m >= FAST_FROM || c >= FAST_FROM {
        return None;
    }
    let at = |i: usize, j: usize| p.factor[i * (i + 1) / 2 + j];
    let b_norm = p
        .rows
        .iter()
        .map(|&w| p.encoding.row(w).norm_squared())
        .sum::<f64>()
        .sqrt();
    let t_norm = p.target.norm();
    // ‖L⁻¹‖_F, column by column of L⁻¹ by forward substitution.
    let mut column = vec![0.0; m];
    let mut inverse_sq = 0.0;
    for k in 0..m {
        column[k] = 1.0 / at(k, k);
        for i in k + 1..m {
            let row = &p.factor[i * (i + 1) / 2..];
            column[i] = -dot(&row[k..i], &column[k..i]) / row[i];
        }
        inverse_sq += dot(&column[k..], &column[k..]);
    }
    let inverse = inverse_sq.sqrt();
    let kappa = b_norm * inverse;
    let (m_f, c_f) = (m as f64, c as f64);
    if !(kappa <= MAX_CONDITION && (m_f + c_f).powf(2.5) * f64::EPSILON * kappa <= 0.25) {
        return None;
    }
    // a = t·L⁻¹ row by row (a·L = t, by back substitution), and T − a·B.
    let mut a = vec![0.0; m];
    let (mut a_sq, mut miss_sq) = (0.0, 0.0);
    let mut miss = vec![0.0; c];
    for r in 0..t {
        for j in (0..m).rev() {
            let s: f64 = (j + 1..m).map(|i| a[i] * at(i, j)).sum();
            a[j] = (p.coordinates[j * t + r] - s) / at(j, j);
        }
        a_sq += a.iter().map(|x| x * x).sum::<f64>();
        miss.iter_mut().zip(p.target.row(r).iter()).for_each(|(x, y)| *x = *y);
        for (&aj, &w) in a.iter().zip(p.rows) {
            miss.iter_mut()
                .zip(p.encoding.row(w).iter())
                .for_each(|(x, b)| *x -= aj * b);
        }
        miss_sq += miss.iter().map(|x| x * x).sum::<f64>();
    }
    let a_norm = a_sq.sqrt();
    let rho = miss_sq.sqrt() / t_norm;
    // ‖B‖₂ and ‖|B|‖₂ are at most ‖B‖_F and √(‖B‖₁·‖B‖_∞) (the same for |B|).
    let mut column_sums = vec![0.0; c];
    let mut row_max = 0.0f64;
    for &w in p.rows {
        let row = p.encoding.row(w);
        row_max = row_max.max(row.iter().map(|x| x.abs()).sum());
        column_sums.iter_mut().zip(row.iter()).for_each(|(s, x)| *s += x.abs());
    }
    let column_max = column_sums.iter().copied().fold(0.0, f64::max);
    let b_two = b_norm.min((column_max * row_max).sqrt() * 1.01);
    let distance = rho * 1.01 + gamma(m + 1) * (1.0 + a_norm * b_two / t_norm);
    let amplification = (a_norm + 2.0 * distance * t_norm * inverse) * b_two / t_norm;
    let eta = svd_allowance(m, c);
    Some(
        1.01 * (distance
            + amplification * (3.0 * eta + gamma(m) * (m_f.sqrt() + 1.0))
            + eta
            + gamma(c + 1) * m_f.sqrt()),
    )
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;
    use rand::seq::SliceRandom;

    use super::*;
    use crate::codes::Code;
    use crate::scheme::{Params, Scheme, SchemeKind};

    /// The SVD's accuracy the bound assumes holds on the matrices it is
    /// used for: prefixes of crc at n = 50 of n − s rows (Frobenius norms,
    /// which bound the 2-norms; the check's own rounding included).
    #[test]
    fn the_svd_is_as_accurate_as_assumed() {
        for s in [1, 3, 5, 8, 10] {
            let params = Params {
                s: Some(s),
                ..Params::default()
            };
            let code = Code::new(&Scheme::new(SchemeKind::Crc, 50, params).unwrap(), 0).unwrap();
            let mut rng = crate::rng::trial_rng(3, s as u64);
            for _ in 0..40 {
                let mut order: Vec<usize> = (0..50).collect();
                order.shuffle(&mut rng);
                let b = code.encoding().select_rows(&order[..50 - s]);
                let (u, sigma, v) = super::super::decode::svd(&b);
                let eta = svd_allowance(b.nrows(), b.ncols());
                let e = &u * DMatrix::from_diagonal(&sigma.clone().into()) * v.transpose() - &b;
                assert!(
                    e.norm() <= eta * sigma[0],
                    "{s}: {}",
                    e.norm() / sigma[0] / f64::EPSILON
                );
                for q in [&u, &v] {
                    let loss = (q.transpose() * q - DMatrix::identity(q.ncols(), q.ncols())).norm();
                    assert!(loss <= eta, "{s}: {}", loss / f64::EPSILON);
                }
            }
        }
    }
}
