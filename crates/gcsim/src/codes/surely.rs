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
//!   space is at most ‖T − a·B‖/‖T‖ ≤ δ̄ = ρ̂·(1 + 0.01) + γ_{k+1}·(1 +
//!   ‖a‖‖B‖/‖T‖), where k is the most rows of B with a nonzero in one
//!   column: an entry is a sum of at most k + 1 nonzero terms, and adding
//!   an exact zero does not round (Higham 2002 §3.1; k = s + 1 or less for
//!   crc and frc).
//! - κ̂ = ‖B‖_F·‖L⁻¹‖_F, computed. Gram–Schmidt with reorthogonalisation
//!   gives B = L·Q + F with ‖F‖/‖B‖ and the loss of orthogonality of Q of
//!   order c·m^{3/2}·ε (Giraud, Langou, Rozložník & van den Eshof 2005),
//!   taken here as (m + c)^{5/2}·ε; while that times κ̂ is at most 1/4,
//!   σ_min(B) ≥ (√(3/4) − 1/4)/‖L⁻¹‖ ≥ 1/(2‖L⁻¹‖_F), so κ(B) ≤ 2κ̂.
//! - The minimum-norm decoding A* = T·B⁺ (B·B⁺ = I) equals a + (T − a·B)·B⁺,
//!   so ‖A*‖ ≤ ‖a‖ + 2·δ̄·‖T‖·‖L⁻¹‖_F, and ā = ‖a‖ + 4·δ̄·‖T‖·‖L⁻¹‖_F
//!   bounds it and, to first order, ‖A₀‖ below (A₀ = A* + R⊥(B+E)⁺ plus
//!   a term of order η·κ(B)·‖A*‖); κ_A = ā·‖B‖/‖T‖ is the amplification
//!   that matters below (often well under κ(B)).
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
//!   δ + 2η·κ_A + η. Write T = A*·B + R⊥ (R⊥·Bᵀ = 0, ‖R⊥‖ = δ‖T‖) and
//!   P = VVᵀ. As (B+E)·(B+E)⁺ = I, A₀ = T·(B+E)⁺ = A* − A*E(B+E)⁺ +
//!   R⊥(B+E)⁺, and A₀·B − T = −T(I − P) − A₀E = −A*EP − R⊥(I − P) +
//!   (A*E − R⊥)(B+E)⁺E: at most (δ + η·κ_A)·(1 + θ), θ = ‖E‖/σ_min(B+E)
//!   ≤ 2η·κ(B). (The parts of A*E inside and outside B's row space make
//!   one η·κ_A together, not two.) Û, V̂'s own errors add η·κ_A (through
//!   T·V·Σ̂⁻¹, whose norm is ‖A₀‖) and η;
//! - the first product and the divisions by σ̂ add γ_{c+1}·√m (their error
//!   is multiplied by Σ̂⁻¹ and then by B ≈ U·Σ̂·Vᵀ, which cancel);
//! - the second product adds γ_m·√m·κ_A; the residual's product γ_k·κ_A
//!   (its sums have k nonzero terms, as above, in whatever order the
//!   product adds them); the subtraction and the norms a relative O(c·ε)
//!   of r.
//!
//! So r ≤ 1.01·(δ̄ + κ_A·(2η + γ_m·√m + γ_k) + η + γ_{c+1}·√m). The
//! certificate holds when that bound, with η taken [`SAFETY`] times the
//! assumed backward error, is below [`TOLERANCE`] (as the decoder's
//! residual must be), and κ̂ ≤ [`MAX_CONDITION`]. The margin is on η, the
//! assumption that could be wrong by a factor; the Gram–Schmidt constant is
//! taken generously, second-order terms sit inside the factor 1.01, and
//! the γ terms bound rounding rigorously. It is only used below the fast
//! routes' sizes ([`super::fast::FAST_FROM`]), where the verdict is the
//! reference SVD's. The bound does not cover the fallbacks `decode` takes
//! where faer's QR iteration does not converge (factorisations held to
//! 1e-12 only): the one such matrix seen (approx-regular with d = 2, the
//! regression test in `decode.rs`) has full row rank but misses T by 0.14,
//! so the pass proposes no candidate there and nothing is certified.
//!
//! On crc at n = 50 (s = 0..10) 90% of candidates are certified (3978 of
//! 4400 over 400 random orders per s), up to κ_A of about 4000; the
//! ill-conditioned ones (κ up to 10⁶, where the SVD's residual reaches
//! 5e-11) go to the SVD.

use faer::Mat;

use super::fast::FAST_FROM;
use super::prefix::dot;
use super::{Rows, TOLERANCE};
use crate::linalg::norm;

/// The bound takes the SVD's backward error this many times the one
/// assumed ([`svd_allowance`]): room for an SVD twice as inaccurate as
/// assumed. It also covers the measurement behind the assumption, taken
/// against Û and V̂: referred to the orthonormal U and V of the argument,
/// E can grow by their loss of orthogonality, to 113ε + 95ε at most on
/// the prefixes measured, above 2(m + c)·ε = 190ε but well within twice
/// it.
const SAFETY: f64 = 2.0;

/// Above this κ̂ no certificate: the first-order terms dropped would no
/// longer be negligible.
const MAX_CONDITION: f64 = 1e8;

/// What the pass knows of a prefix all of whose rows grew its basis.
pub(super) struct Prefix<'a> {
    /// The code's B (n × c), by rows.
    pub(super) encoding: &'a Rows,
    /// The code's T (t × c).
    pub(super) target: &'a Mat<f64>,
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
    bound(p).is_some_and(|b| b < TOLERANCE)
}

/// The bound on the SVD's residual (module notes), with room for a backward
/// error of the SVD [`SAFETY`] times the one assumed, or `None` outside the
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
        .map(|&w| p.encoding.nonzeros(w).iter().map(|(_, x)| x * x).sum::<f64>())
        .sum::<f64>()
        .sqrt();
    let t_norm = norm(p.target);
    let inverse_rows = lower_inverse(p.factor, m);
    let inverse_sq = dot(&inverse_rows, &inverse_rows);
    let inverse = inverse_sq.sqrt();
    let kappa = b_norm * inverse;
    let (m_f, c_f) = (m as f64, c as f64);
    if !(kappa <= MAX_CONDITION && (m_f + c_f).powf(2.5) * f64::EPSILON * kappa <= 0.25) {
        return None;
    }
    // a = t·L⁻¹ row by row, and T − a·B (B's zeros change nothing).
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
        miss.iter_mut().enumerate().for_each(|(j, x)| *x = p.target[(r, j)]);
        for (&aj, &w) in a.iter().zip(p.rows) {
            for &(j, b) in p.encoding.nonzeros(w) {
                miss[j] -= aj * b;
            }
        }
        miss_sq += dot(&miss, &miss);
    }
    let a_norm = a_sq.sqrt();
    let rho = miss_sq.sqrt() / t_norm;
    let columns = Columns::of(p.encoding, p.rows, c);
    let b_two = b_norm.min(columns.gershgorin.sqrt() * 1.01);
    let k = columns.most;
    let distance = rho * 1.01 + gamma(k + 1) * (1.0 + a_norm * b_two / t_norm);
    let amplification = (a_norm + 4.0 * distance * t_norm * inverse) * b_two / t_norm;
    let eta = SAFETY * svd_allowance(m, c);
    Some(
        1.01 * (distance
            + amplification * (2.0 * eta + gamma(m) * m_f.sqrt() + gamma(k))
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

/// What the bound needs of B's columns, over the rows `rows` of B (c
/// columns).
struct Columns {
    /// g = max_i Σ_k |b_ik|·Σ_j |b_jk|: the largest row sum of |B|·|B|ᵀ,
    /// which bounds ‖B‖₂² and ‖|B|‖₂² (module notes).
    gershgorin: f64,
    /// k: the most rows with a nonzero in one column, the nonzero terms of
    /// a column's sum in A·B.
    most: usize,
}

impl Columns {
    fn of(encoding: &Rows, rows: &[usize], c: usize) -> Self {
        let mut sums = vec![0.0; c];
        let mut counts = vec![0; c];
        for &w in rows {
            for &(j, x) in encoding.nonzeros(w) {
                sums[j] += x.abs();
                counts[j] += 1;
            }
        }
        let gershgorin = rows
            .iter()
            .map(|&w| {
                encoding
                    .nonzeros(w)
                    .iter()
                    .map(|&(j, x)| x.abs() * sums[j])
                    .sum::<f64>()
            })
            .fold(0.0, f64::max);
        Columns {
            gershgorin,
            most: counts.into_iter().max().unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::seq::SliceRandom;

    use super::*;
    use crate::codes::Code;
    use crate::linalg::{Dense, mul, select_rows};
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

    fn transpose(m: impl Dense) -> Mat<f64> {
        m.as_mat_ref().transpose().to_owned()
    }

    /// The diagonal matrix of `s`.
    fn diagonal(s: &[f64]) -> Mat<f64> {
        Mat::from_fn(s.len(), s.len(), |i, j| if i == j { s[i] } else { 0.0 })
    }

    /// x·M, entry by entry.
    fn scaled(m: &Mat<f64>, x: f64) -> Mat<f64> {
        Mat::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)] * x)
    }

    /// M / ‖M‖_F.
    fn normalize(m: impl Dense) -> Mat<f64> {
        let m = m.as_mat_ref();
        let n = norm(m);
        Mat::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)] / n)
    }

    /// The SVD's accuracy the bound assumes holds on the matrices it is
    /// used for: prefixes of crc at n = 50 of n − s rows (Frobenius norms,
    /// which bound the 2-norms; the check's own rounding included).
    #[test]
    fn the_svd_is_as_accurate_as_assumed() {
        for s in [1, 3, 5, 8, 10] {
            let (code, prefixes) = crc_prefixes(s, 3, 40);
            for rows in &prefixes {
                let b = select_rows(code.encoding(), rows).as_ref().to_owned();
                let (u, sigma, v) = super::super::decode::svd(b.as_ref());
                let (u, v) = (u.as_ref(), v.as_ref());
                let eta = svd_allowance(b.nrows(), b.ncols());
                let e = norm(&(&mul(mul(u, diagonal(&sigma)), transpose(v)) - &b));
                assert!(e <= eta * sigma[0], "{s}: {}", e / sigma[0] / f64::EPSILON);
                for q in [u, v] {
                    let loss = norm(&(&mul(transpose(q), q) - &Mat::<f64>::identity(q.ncols(), q.ncols())));
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
                let b = select_rows(code.encoding(), rows).as_ref().to_owned();
                let g = Columns::of(code.rows(), rows, 50).gershgorin.sqrt();
                let sigma = |m: &Mat<f64>| super::super::decode::svd(m.as_ref()).1[0];
                let abs = Mat::from_fn(b.nrows(), b.ncols(), |i, j| b[(i, j)].abs());
                let (two, abs_two) = (sigma(&b), sigma(&abs));
                assert!(two <= g && abs_two <= g, "{s}: {two} {abs_two} > {g}");
                assert!(
                    abs_two > 0.9 * g && g < 0.5 * norm(&b),
                    "{s}: {abs_two} {g} {}",
                    norm(&b)
                );
            }
        }
    }

    /// k counts the rows with a nonzero in the most crowded column, as a
    /// dense count over the prefix's rows gives it (crc at n = 50: s + 1 on
    /// every full set, fewer on some prefixes).
    #[test]
    fn columns_count_the_crowded_column() {
        for s in [1, 4, 9] {
            let (code, prefixes) = crc_prefixes(s, 5, 10);
            let full: Vec<usize> = (0..50).collect();
            for rows in prefixes.iter().chain([&full]) {
                let b = select_rows(code.encoding(), rows).as_ref().to_owned();
                let dense = (0..50)
                    .map(|j| b.col_as_slice(j).iter().filter(|x| **x != 0.0).count())
                    .max()
                    .unwrap();
                assert_eq!(Columns::of(code.rows(), rows, 50).most, dense, "{s}");
            }
            assert_eq!(Columns::of(code.rows(), &full, 50).most, s + 1);
        }
    }

    /// The SVD's backward error E enters the residual once, not twice: with
    /// B + E factorised, A₀ = T·(B + E)⁺ misses T by at most (δ‖T‖ +
    /// ‖A*‖‖E‖)·(1 + θ) (module notes), for T in B's row space (the
    /// all-ones row) and for T with a part R⊥ outside it as large as
    /// ‖A*‖‖E‖. An E along A* and inside B's row space comes within 1% of
    /// that; one along A* but outside the row space, which a cruder count
    /// charges twice, adds under 10⁻³ of ‖A*‖‖E‖ to δ‖T‖; a random E stays
    /// below the bound. ‖E‖ = 1e-9‖B‖, far above the rounding of the check
    /// itself, on crc's prefixes.
    #[test]
    fn the_backward_error_counts_once() {
        let svd = super::super::decode::svd;
        let pinv = |m: &Mat<f64>| {
            let (u, sigma, v) = svd(m.as_ref());
            let inverse: Vec<f64> = sigma.iter().map(|x| 1.0 / x).collect();
            mul(mul(v.as_ref(), diagonal(&inverse)), transpose(u.as_ref()))
        };
        let (code, prefixes) = crc_prefixes(6, 7, 6);
        let mut rng = crate::rng::trial_rng(9, 0);
        let mut uniform = |r: usize, c: usize| Mat::from_fn(r, c, |_, _| rand::RngExt::random::<f64>(&mut rng) - 0.5);
        for rows in &prefixes {
            let b = select_rows(code.encoding(), rows).as_ref().to_owned();
            let (m, c) = (b.nrows(), b.ncols());
            let b_pinv = pinv(&b);
            let outside_of = |x: Mat<f64>| normalize(&(&x - &mul(mul(&x, &b_pinv), &b)));
            let ones = Mat::full(1, c, 1.0);
            // A* = T·B⁺ is the same for both targets: R⊥·B⁺ = 0.
            let optimal = mul(&ones, &b_pinv);
            let size = 1e-9 * svd(b.as_ref()).1[0];
            let once = norm(&optimal) * size;
            // B's row 0 lies in the row space; a random direction's part
            // outside it is orthogonal to it.
            let inside = normalize(select_rows(&b, &[0]));
            let outside = outside_of(uniform(1, c));
            let along = normalize(transpose(&optimal));
            let gaussian = uniform(m, c);
            let cases = [
                ("inside", scaled(&mul(&along, &inside), size)),
                ("outside", scaled(&mul(&along, &outside), size)),
                ("random", scaled(&gaussian, size / norm(&gaussian))),
            ];
            for target in [ones.clone(), &ones + &scaled(&outside_of(uniform(1, c)), once)] {
                let distance = norm(&(&target - &mul(&optimal, &b)));
                for (name, e) in &cases {
                    let perturbed = &b + e;
                    let a0 = mul(&target, pinv(&perturbed));
                    let miss = norm(&(&mul(&a0, &b) - &target));
                    let theta = norm(e) / svd(perturbed.as_ref()).1[m - 1];
                    let bound = (distance + once) * (1.0 + theta) * 1.01;
                    assert!(miss <= bound, "{name}: {miss:e} > {bound:e}");
                    match *name {
                        "inside" => assert!(miss >= 0.99 * once.max(distance), "{miss:e} < {once:e}"),
                        "outside" => assert!(
                            miss <= distance * (1.0 + theta) * 1.01 + 1e-3 * once,
                            "{miss:e} against {distance:e} + {once:e}"
                        ),
                        _ => {}
                    }
                }
            }
        }
    }

    /// The packed inverse is L⁻¹: L·X = I to rounding, on a random lower
    /// triangular L whose diagonal keeps it well conditioned.
    #[test]
    fn lower_inverse_inverts() {
        let m = 23;
        let mut rng = crate::rng::trial_rng(8, 0);
        let l = Mat::from_fn(m, m, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => 1.0 + rand::RngExt::random::<f64>(&mut rng),
            std::cmp::Ordering::Greater => rand::RngExt::random::<f64>(&mut rng) - 0.5,
        });
        let packed: Vec<f64> = (0..m)
            .flat_map(|i| (0..=i).map(move |j| (i, j)))
            .map(|(i, j)| l[(i, j)])
            .collect();
        let x = lower_inverse(&packed, m);
        let x = Mat::from_fn(m, m, |i, j| if j <= i { x[i * (i + 1) / 2 + j] } else { 0.0 });
        let error = norm(&(&mul(&l, &x) - &Mat::<f64>::identity(m, m)));
        assert!(error < 1e-13, "{error}");
    }
}
