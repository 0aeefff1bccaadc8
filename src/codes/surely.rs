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
//! Throughout, ‖B‖ without a subscript is min(‖B‖_F, √g), computed (times
//! 1.01 for its rounding), where g = max_i Σ_k |b_ik|·Σ_j |b_jk| is the
//! largest row sum of |B|·|B|ᵀ: both bound ‖B‖₂ and ‖|B|‖₂, which are what
//! the error terms need (Higham 2002, §6.3), since ‖B‖₂² = ‖B·Bᵀ‖₂ and
//! ‖|B|‖₂² = ‖|B|·|B|ᵀ‖₂ are at most ‖|B|·|B|ᵀ‖_∞ = g (|B·Bᵀ| ≤ |B|·|B|ᵀ
//! entrywise). g is at most ‖B‖₁·‖B‖_∞ and, on sparse rows such as crc's,
//! well under ‖B‖_F².
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

use super::fast::FAST_FROM;
use super::prefix::dot;
use super::{Rows, TOLERANCE};

/// The bound must be below [`TOLERANCE`] by this factor: room for a
/// backward error of the SVD twice the one assumed.
const SAFETY: f64 = 2.0;

/// Above this κ̂ no certificate: the first-order terms dropped would no
/// longer be negligible.
const MAX_CONDITION: f64 = 1e8;

/// What the pass knows of a prefix all of whose rows grew its basis.
pub(super) struct Prefix<'a> {
    /// The code's B (n × c), by rows.
    pub(super) encoding: &'a Rows,
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
    let b_norm = p
        .rows
        .iter()
        .map(|&w| {
            let row = p.encoding.dense(w);
            dot(row, row)
        })
        .sum::<f64>()
        .sqrt();
    let t_norm = p.target.norm();
    let inverse_rows = lower_inverse(p.factor, m);
    let inverse_sq = dot(&inverse_rows, &inverse_rows);
    let inverse = inverse_sq.sqrt();
    let kappa = b_norm * inverse;
    let (m_f, c_f) = (m as f64, c as f64);
    if !(kappa <= MAX_CONDITION && (m_f + c_f).powf(2.5) * f64::EPSILON * kappa <= 0.25) {
        return None;
    }
    // a = t·L⁻¹ row by row, and T − a·B.
    let mut a = vec![0.0; m];
    let (mut a_sq, mut miss_sq) = (0.0, 0.0);
    let mut miss = vec![0.0; c];
    for r in 0..t {
        a.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..m {
            let ti = p.coordinates[i * t + r];
            let x = &inverse_rows[i * (i + 1) / 2..=i * (i + 1) / 2 + i];
            a[..=i].iter_mut().zip(x).for_each(|(y, x)| *y += ti * x);
        }
        a_sq += dot(&a, &a);
        miss.iter_mut().zip(p.target.row(r).iter()).for_each(|(x, y)| *x = *y);
        for (&aj, &w) in a.iter().zip(p.rows) {
            miss.iter_mut().zip(p.encoding.dense(w)).for_each(|(x, b)| *x -= aj * b);
        }
        miss_sq += dot(&miss, &miss);
    }
    let a_norm = a_sq.sqrt();
    let rho = miss_sq.sqrt() / t_norm;
    let b_two = b_norm.min(gershgorin(p.encoding, p.rows, c).sqrt() * 1.01);
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

/// X = L⁻¹ for L (m × m, lower triangular) packed by rows (row i has i + 1
/// entries), packed the same way: row by row, X_i = (e_i − Σ_{j<i}
/// L_ij·X_j)/L_ii, as sweeps over the earlier rows' entries.
fn lower_inverse(factor: &[f64], m: usize) -> Vec<f64> {
    let mut inverse = vec![0.0; m * (m + 1) / 2];
    for i in 0..m {
        let (earlier, row) = inverse.split_at_mut(i * (i + 1) / 2);
        let row = &mut row[..=i];
        let l = &factor[i * (i + 1) / 2..=i * (i + 1) / 2 + i];
        for j in 0..i {
            let x = &earlier[j * (j + 1) / 2..=j * (j + 1) / 2 + j];
            let lij = l[j];
            row[..=j].iter_mut().zip(x).for_each(|(y, x)| *y -= lij * x);
        }
        row[i] += 1.0;
        let d = l[i];
        row.iter_mut().for_each(|y| *y /= d);
    }
    inverse
}

/// g = max_i Σ_k |b_ik|·Σ_j |b_jk| over the rows `rows` of B (c columns):
/// the largest row sum of |B|·|B|ᵀ, which bounds ‖B‖₂² and ‖|B|‖₂² (module
/// notes).
fn gershgorin(encoding: &Rows, rows: &[usize], c: usize) -> f64 {
    let mut column_sums = vec![0.0; c];
    for &w in rows {
        column_sums
            .iter_mut()
            .zip(encoding.dense(w))
            .for_each(|(s, x)| *s += x.abs());
    }
    rows.iter()
        .map(|&w| {
            encoding
                .dense(w)
                .iter()
                .zip(&column_sums)
                .map(|(x, s)| x.abs() * s)
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;
    use rand::seq::SliceRandom;

    use super::*;
    use crate::codes::Code;
    use crate::scheme::{Params, Scheme, SchemeKind};

    /// crc's code at n = 50 and `count` random prefixes of n − s rows (the
    /// rows of the first n − s workers of a random order; seeded).
    fn crc_prefixes(s: usize, seed: u64, count: usize) -> (Code, Vec<Vec<usize>>) {
        let params = Params {
            s: Some(s),
            ..Params::default()
        };
        let code = Code::new(&Scheme::new(SchemeKind::Crc, 50, params).unwrap(), 0).unwrap();
        let mut rng = crate::rng::trial_rng(seed, s as u64);
        let prefixes = (0..count)
            .map(|_| {
                let mut order: Vec<usize> = (0..50).collect();
                order.shuffle(&mut rng);
                order.truncate(50 - s);
                order
            })
            .collect();
        (code, prefixes)
    }

    /// The SVD's accuracy the bound assumes holds on the matrices it is
    /// used for: prefixes of crc at n = 50 of n − s rows (Frobenius norms,
    /// which bound the 2-norms; the check's own rounding included).
    #[test]
    fn the_svd_is_as_accurate_as_assumed() {
        for s in [1, 3, 5, 8, 10] {
            let (code, prefixes) = crc_prefixes(s, 3, 40);
            for rows in &prefixes {
                let b = code.encoding().select_rows(rows);
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

    /// √g bounds ‖B‖₂ and ‖|B|‖₂ (the largest singular values of B and of
    /// |B|) on crc's prefixes at n = 50, and on them is well under ‖B‖_F,
    /// the bound it improves on.
    #[test]
    fn gershgorin_bounds_the_two_norms() {
        for s in [1, 4, 6, 10] {
            let (code, prefixes) = crc_prefixes(s, 4, 20);
            for rows in &prefixes {
                let b = code.encoding().select_rows(rows);
                let g = gershgorin(code.rows(), rows, 50).sqrt();
                let sigma = |m: &DMatrix<f64>| super::super::decode::svd(m).1[0];
                let (two, abs_two) = (sigma(&b), sigma(&b.abs()));
                assert!(two <= g && abs_two <= g, "{s}: {two} {abs_two} > {g}");
                assert!(
                    abs_two > 0.9 * g && g < 0.5 * b.norm(),
                    "{s}: {abs_two} {g} {}",
                    b.norm()
                );
            }
        }
    }

    /// The packed inverse is L⁻¹: L·X = I to rounding, on a random lower
    /// triangular L whose diagonal keeps it well conditioned.
    #[test]
    fn lower_inverse_inverts() {
        let m = 23;
        let mut rng = crate::rng::trial_rng(8, 0);
        let l = DMatrix::from_fn(m, m, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => 1.0 + rand::RngExt::random::<f64>(&mut rng),
            std::cmp::Ordering::Greater => rand::RngExt::random::<f64>(&mut rng) - 0.5,
        });
        let packed: Vec<f64> = (0..m)
            .flat_map(|i| (0..=i).map(move |j| (i, j)))
            .map(|(i, j)| l[(i, j)])
            .collect();
        let x = lower_inverse(&packed, m);
        let x = DMatrix::from_fn(m, m, |i, j| if j <= i { x[i * (i + 1) / 2 + j] } else { 0.0 });
        let error = (&l * &x - DMatrix::identity(m, m)).norm();
        assert!(error < 1e-13, "{error}");
    }
}
