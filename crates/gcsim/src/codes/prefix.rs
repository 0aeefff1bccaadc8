// Longer than 600 lines because its tests, over half of it, read the pass's
// private state (the basis, the spans, the certificate's inputs).

//! The shortest decodable prefix of an arrival order, in one pass.
//!
//! The master can decode once T lies in the row space of the rows that have
//! arrived. Rows are added one at a time to an orthonormal basis Q of their
//! span by Gram–Schmidt with reorthogonalisation (see [`Span::add`]), and
//! T's component outside the span, R = T − T·QᵀQ, is updated with each new
//! basis vector; ‖R‖_F / ‖T‖_F is the residual of projecting T onto the
//! span. A row whose component outside the span is below max(j, c)·ε of its
//! norm (j rows so far, c columns) is taken as dependent: the SVD's rank
//! rule cuts such a direction too, since it adds a singular value no larger
//! than that component.
//!
//! The pass gives a candidate length m, the first at which the residual is
//! below [`CANDIDATE`]; the verdict stays the SVD's ([`Code::decode`]): m is
//! returned only if the SVD decodes the first m rows and does not decode
//! the first m − 1, which then fixes the answer of the bisection
//! ([`bisect`], the search this one replaces) whenever decodability only
//! grows along the order (as it does in exact arithmetic).
//!
//! The pass also certifies prefixes that do not decode, in place of an
//! SVD: those where its residual is at least [`SURELY_NOT`] and every basis
//! row kept at least [`WELL_CONDITIONED`] of its norm. The SVD's residual is
//! at least T's distance from the row space, less rounding of order ε·κ,
//! and the pass measures that distance to a like error; for rows so
//! conditioned both stay far below 1e-3, so the SVD cannot decode T there
//! to 1e-9. The check at m − 1 is such a certificate nearly always. Where
//! the SVD disagrees with the candidate (it does not decode m rows, or it
//! decodes m − 1, or it decodes all rows where the pass found no
//! candidate), the answer is the bisection's, step by step as before, with
//! the certified prefixes answered without an SVD; an order whose full set
//! is certified costs no SVD at all.
//!
//! The candidate itself is certified to decode, in place of its SVD, where
//! the pass kept every row and a bound on the SVD's computed residual, from
//! the pass's triangular factor, is below [`TOLERANCE`] even with twice
//! the SVD's assumed backward error (see `surely.rs` for the bound and its
//! argument). Then m is the answer with no SVD at all when m − 1 is
//! certified not to decode.
//!
//! Cost: the pass, O(m²·c) (less for sparse rows), plus one SVD (two when
//! the check at m − 1 needs one; none when both checks are certified),
//! instead of about log₂(n) + 1 SVDs.

use super::{Code, TOLERANCE, surely};

/// The pass proposes a prefix once T's relative residual outside the span
/// falls below this: a thousand times [`TOLERANCE`], so that a prefix the
/// SVD decodes is not missed for rounding in the pass.
const CANDIDATE: f64 = 1e3 * TOLERANCE;

/// A residual of the pass at or above this is taken as "the SVD does not
/// decode here" without an SVD (given [`WELL_CONDITIONED`] rows).
const SURELY_NOT: f64 = 1e-3;

/// The smallest share of its norm that every basis row must have kept
/// outside the earlier span for the pass's residual to be trusted to
/// [`SURELY_NOT`] (condition numbers up to about 10⁸).
const WELL_CONDITIONED: f64 = 1e-8;

impl Code {
    /// The length of the shortest prefix of `order` (distinct workers in
    /// 0..n) whose rows decode T by [`Code::decode`]'s verdict, or `None`
    /// if even all of `order` does not decode. Equal to the bisection over
    /// prefix lengths whenever decodability grows with the prefix (see the
    /// module notes), at the cost of one Gram–Schmidt pass and usually one
    /// SVD.
    ///
    /// # Panics
    /// If an index is n or more.
    pub fn shortest_decodable_prefix(&self, order: &[usize]) -> Option<usize> {
        confirmed(self, order, &Span::new(self).first_within(order))
    }
}

/// The pass's candidate if the SVD's verdicts confirm it (module notes),
/// else the bisection's answer; either way the SVD is not asked about a
/// prefix the pass certified undecodable, nor twice about one prefix.
fn confirmed(code: &Code, order: &[usize], pass: &Pass) -> Option<usize> {
    let asked: std::cell::RefCell<Vec<(usize, bool)>> = std::cell::RefCell::new(Vec::new());
    let decodes = |len: usize| {
        if pass.surely_not(len) {
            return false;
        }
        if pass.surely_decodes && pass.candidate == Some(len) {
            return true;
        }
        if let Some(&(_, verdict)) = asked.borrow().iter().find(|a| a.0 == len) {
            return verdict;
        }
        let verdict = code.is_decodable(&order[..len]);
        asked.borrow_mut().push((len, verdict));
        verdict
    };
    match pass.candidate {
        Some(m) if decodes(m) && (m == 1 || !decodes(m - 1)) => Some(m),
        _ => bisect(order.len(), decodes),
    }
}

/// The shortest of the prefix lengths 1..=n for which `decodes` holds, by
/// bisection over the length after asking about all n (`None` if all n do
/// not decode): with [`Code::is_decodable`], one SVD per step.
fn bisect(n: usize, decodes: impl Fn(usize) -> bool) -> Option<usize> {
    if !decodes(n) {
        return None;
    }
    let (mut lo, mut hi) = (1, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if decodes(mid) { hi = mid } else { lo = mid + 1 }
    }
    Some(lo)
}

/// What the pass found.
#[derive(Debug, Clone)]
struct Pass {
    /// The first prefix length whose span holds T to [`CANDIDATE`].
    candidate: Option<usize>,
    /// Whether the SVD surely decodes the candidate prefix
    /// ([`super::surely::decodes`]).
    surely_decodes: bool,
    /// The span of each prefix shorter than the candidate (of every prefix
    /// where there is none), from the empty one.
    spans: Vec<SpanOf>,
}

impl Pass {
    /// Whether the pass certified that the first `len` rows do not decode.
    fn surely_not(&self, len: usize) -> bool {
        self.spans.get(len).is_some_and(|s| s.surely_not())
    }
}

/// What the pass knew of the span of a prefix.
#[derive(Debug, Clone, Copy)]
struct SpanOf {
    /// T's relative residual outside the span.
    residual: f64,
    /// The smallest share of its norm a basis row kept outside the span
    /// before it.
    weakest: f64,
}

impl SpanOf {
    /// Whether these rows certainly do not decode (module notes).
    fn surely_not(self) -> bool {
        self.residual >= SURELY_NOT && self.weakest >= WELL_CONDITIONED
    }
}

/// An orthonormal basis of the span of the rows added so far, and T's
/// component outside it.
struct Span<'a> {
    code: &'a Code,
    /// Columns c.
    cols: usize,
    /// The basis rows, each of length c, one after another.
    basis: Vec<f64>,
    /// T − T·QᵀQ, T's rows one after another.
    outside: Vec<f64>,
    /// ‖T‖_F.
    target_norm: f64,
    /// The smallest share of its norm a basis row kept (1 when empty).
    weakest: f64,
    /// The row's coefficients on the basis rows, in one projection.
    coefficients: Vec<f64>,
    /// Whether every row added so far grew the basis.
    full: bool,
    /// While `full`: the triangular factor L of the rows added (row j =
    /// L_j·Q), its rows packed one after another (row j has j + 1 entries).
    factor: Vec<f64>,
    /// While `full`: T·Qᵀ, T's coordinates on each basis row in turn
    /// (`coordinates[k·t + r]` for T's row r and basis row k).
    coordinates: Vec<f64>,
}

impl<'a> Span<'a> {
    fn new(code: &'a Code) -> Self {
        let target = code.target();
        let cols = target.ncols();
        // At most this many rows grow the basis (the basis holds one more
        // while a row is added); reserved once, so that no buffer is copied
        // as it grows.
        let rank = code.encoding().nrows().min(cols);
        let mut outside = Vec::with_capacity(target.len());
        for r in 0..target.nrows() {
            outside.extend(target.row(r).iter());
        }
        Span {
            code,
            cols,
            basis: Vec::with_capacity((rank + 1) * cols),
            outside,
            target_norm: target.norm(),
            weakest: 1.0,
            coefficients: Vec::with_capacity(rank),
            full: true,
            factor: Vec::with_capacity(rank * (rank + 1) / 2),
            coordinates: Vec::with_capacity(rank * target.nrows()),
        }
    }

    /// T's relative residual outside the span.
    fn residual(&self) -> f64 {
        norm(&self.outside) / self.target_norm
    }

    /// The first prefix length of `order` at which the residual is below
    /// [`CANDIDATE`], and the spans of the shorter prefixes.
    fn first_within(mut self, order: &[usize]) -> Pass {
        let mut spans = Vec::with_capacity(order.len() + 1);
        for (j, &worker) in order.iter().enumerate() {
            spans.push(SpanOf {
                residual: self.residual(),
                weakest: self.weakest,
            });
            if self.add(worker, j + 1) && self.residual() < CANDIDATE {
                return Pass {
                    candidate: Some(j + 1),
                    surely_decodes: self.prefix(&order[..=j]).is_some_and(|p| surely::decodes(&p)),
                    spans,
                };
            }
        }
        spans.push(SpanOf {
            residual: self.residual(),
            weakest: self.weakest,
        });
        Pass {
            candidate: None,
            surely_decodes: false,
            spans,
        }
    }

    /// What the certificate needs of the rows added, `rows`, if every one
    /// of them grew the basis.
    fn prefix<'b>(&'b self, rows: &'b [usize]) -> Option<surely::Prefix<'b>> {
        self.full.then_some(surely::Prefix {
            encoding: self.code.rows(),
            target: self.code.target(),
            rows,
            factor: &self.factor,
            coordinates: &self.coordinates,
        })
    }

    /// Adds `worker`'s row as the `len`-th row; whether it was independent
    /// of the span and so grew the basis.
    ///
    /// Classical Gram–Schmidt, whose first projection reads only the row's
    /// nonzeros (a few for frc and crc), repeated when the first removed
    /// more than 1 − 1/√2 of the row's norm (the criterion of Daniel,
    /// Gragg, Kaufman & Stewart 1976): two projections then keep the basis
    /// orthonormal to working precision (Giraud, Langou & Rozložník 2005).
    fn add(&mut self, worker: usize, len: usize) -> bool {
        let c = self.cols;
        let Span {
            basis,
            coefficients,
            factor,
            coordinates,
            outside,
            full,
            ..
        } = self;
        // The row is worked on in place, as the basis row it may become.
        let start = basis.len();
        basis.extend_from_slice(self.code.rows().dense(worker));
        let (basis_rows, row) = basis.split_at_mut(start);
        let support = self.code.rows().nonzeros(worker);
        let length = norm(row);
        if length == 0.0 {
            basis.truncate(start);
            *full = false;
            return false;
        }
        coefficients.clear();
        coefficients.extend(
            basis_rows
                .chunks_exact(c)
                .map(|q| support.iter().map(|&(j, x)| q[j] * x).sum::<f64>()),
        );
        subtract(row, basis_rows, coefficients);
        // The row's entries of L: its coefficients over both projections.
        let first = factor.len();
        if *full {
            factor.extend_from_slice(coefficients);
        }
        let mut left = norm(row);
        if left < length * std::f64::consts::FRAC_1_SQRT_2 {
            coefficients.clear();
            project(basis_rows, row, coefficients);
            subtract(row, basis_rows, coefficients);
            left = norm(row);
            if *full {
                factor[first..]
                    .iter_mut()
                    .zip(coefficients.iter())
                    .for_each(|(l, d)| *l += d);
            }
        }
        if left <= len.max(c) as f64 * f64::EPSILON * length {
            factor.truncate(first);
            basis.truncate(start);
            *full = false;
            return false;
        }
        row.iter_mut().for_each(|x| *x /= left);
        self.weakest = self.weakest.min(left / length);
        for r in outside.chunks_exact_mut(c) {
            let d = dot(row, r);
            axpy(r, -d, row);
            if *full {
                coordinates.push(d);
            }
        }
        if *full {
            factor.push(left);
        }
        true
    }
}

/// row ← row − Σ_k coefficients\[k\]·basis row k, in k's order (skipping
/// zero coefficients: rows of disjoint support, as frc's groups, have many).
/// Four basis rows at a time where none of their coefficients is zero, in
/// one sweep over the row: each entry gets the same four operations in the
/// same order as four sweeps would give it, for a quarter of the row's loads
/// and stores.
fn subtract(row: &mut [f64], basis: &[f64], coefficients: &[f64]) {
    let c = row.len();
    let blocks = basis.chunks_exact(4 * c).zip(coefficients.chunks_exact(4));
    let done = blocks.len() * 4;
    for (q, d) in blocks {
        if d.contains(&0.0) {
            for (q, &d) in q.chunks_exact(c).zip(d) {
                if d != 0.0 {
                    axpy(row, -d, q);
                }
            }
            continue;
        }
        let (q0, q1, q2, q3) = (&q[..c], &q[c..2 * c], &q[2 * c..3 * c], &q[3 * c..]);
        let (a0, a1, a2, a3) = (-d[0], -d[1], -d[2], -d[3]);
        for ((((y, x0), x1), x2), x3) in row.iter_mut().zip(q0).zip(q1).zip(q2).zip(q3) {
            *y = (((*y + a0 * x0) + a1 * x1) + a2 * x2) + a3 * x3;
        }
    }
    for (q, &d) in basis[done * c..].chunks_exact(c).zip(&coefficients[done..]) {
        if d != 0.0 {
            axpy(row, -d, q);
        }
    }
}

/// Each basis row's dot product with `row`, appended to `out` in order,
/// each the value [`dot`] gives; four basis rows at a time, in one sweep
/// over the row.
fn project(basis: &[f64], row: &[f64], out: &mut Vec<f64>) {
    let c = row.len();
    let blocks = basis.chunks_exact(4 * c);
    let rest = blocks.remainder();
    let split = c / 4 * 4;
    let (body, tail) = row.split_at(split);
    for q in blocks {
        let qs = [&q[..c], &q[c..2 * c], &q[2 * c..3 * c], &q[3 * c..]];
        let mut acc = [[0.0; 4]; 4];
        for (i, x) in body.chunks_exact(4).enumerate() {
            for (a, q) in acc.iter_mut().zip(&qs) {
                let y = &q[4 * i..4 * i + 4];
                for l in 0..4 {
                    a[l] += y[l] * x[l];
                }
            }
        }
        for (a, q) in acc.iter().zip(&qs) {
            let t: f64 = q[split..].iter().zip(tail).map(|(y, x)| y * x).sum();
            out.push((a[0] + a[1]) + (a[2] + a[3]) + t);
        }
    }
    out.extend(rest.chunks_exact(c).map(|q| dot(q, row)));
}

/// Σ a_i·b_i, in four interleaved partial sums (which the compiler can
/// keep in vector registers; one running sum would serialise the adds).
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (a4, b4) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = a4.remainder().iter().zip(b4.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a4.zip(b4) {
        for q in 0..4 {
            acc[q] += x[q] * y[q];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// y ← y + a·x.
fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    y.iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

#[cfg(test)]
mod tests {
    use rand::seq::SliceRandom;

    use super::*;
    use crate::codes::Generator;
    use crate::rng::trial_rng;
    use crate::scheme::{CustomShape, Params, Scheme, SchemeKind};

    fn code(kind: SchemeKind, n: usize, params: Params) -> Code {
        Code::new(&Scheme::new(kind, n, params).unwrap(), 0).unwrap()
    }

    fn s(s: usize) -> Params {
        Params {
            s: Some(s),
            ..Params::default()
        }
    }

    /// `count` random orders of 0..n (seeded).
    fn orders(n: usize, count: usize) -> Vec<Vec<usize>> {
        let mut rng = trial_rng(11, n as u64);
        (0..count)
            .map(|_| {
                let mut o: Vec<usize> = (0..n).collect();
                o.shuffle(&mut rng);
                o
            })
            .collect()
    }

    /// A user's code that never decodes: n workers, P = 4 partitions, and
    /// no worker holds the last partition.
    fn never_decodes(n: usize) -> Code {
        let b = nalgebra::DMatrix::from_fn(n, 4, |i, j| if j < 3 && (i + j) % 2 == 0 { 1.0 } else { 0.0 });
        let shape = CustomShape {
            n,
            partitions: 4,
            max_support: 2,
        };
        Code::custom(&Scheme::custom(shape, None).unwrap(), b)
    }

    fn codes() -> Vec<(Code, usize)> {
        let mds = |n, k, generator| {
            let sch = Scheme::new(
                SchemeKind::Mds,
                n,
                Params {
                    k: Some(k),
                    ..Params::default()
                },
            )
            .unwrap();
            Code::with_generator(&sch, generator, 0).unwrap()
        };
        let ce = Params { m: Some(2), ..s(3) };
        let regular = Params { d: Some(3), ..s(2) };
        vec![
            (code(SchemeKind::Frc, 12, s(2)), 40),
            (code(SchemeKind::Frc, 60, s(5)), 40),
            (code(SchemeKind::Frc, 200, s(19)), 4),
            (code(SchemeKind::Crc, 11, s(3)), 40),
            (code(SchemeKind::Crc, 50, s(5)), 40),
            (code(SchemeKind::Crc, 100, s(10)), 10),
            (code(SchemeKind::CommEfficient, 20, ce), 30),
            (mds(30, 25, Generator::Gaussian), 30),
            (mds(20, 15, Generator::Vandermonde), 30),
            // Here the pass finds a span the SVD cannot decode from.
            (mds(28, 24, Generator::Vandermonde), 20),
            (mds(50, 45, Generator::Vandermonde), 5),
            (code(SchemeKind::ApproxRegular, 30, regular), 30),
            (code(SchemeKind::Ignore, 10, s(2)), 10),
            (never_decodes(9), 10),
        ]
    }

    /// The bisection with an SVD at every step: the search before this one.
    fn by_svd(code: &Code, order: &[usize]) -> Option<usize> {
        bisect(order.len(), |len| code.is_decodable(&order[..len]))
    }

    /// The one-pass search returns what the bisection of SVD verdicts
    /// returns, on random arrival orders of exact, approximate, ill
    /// conditioned (where the pass and the SVD disagree) and never-decoding
    /// codes.
    #[test]
    fn shortest_prefix_is_the_bisections() {
        for (code, count) in codes() {
            let n = code.scheme().n();
            for order in orders(n, count) {
                assert_eq!(
                    code.shortest_decodable_prefix(&order),
                    by_svd(&code, &order),
                    "{}: {order:?}",
                    code.scheme()
                );
            }
        }
    }

    /// Every prefix the pass certifies undecodable is undecodable by the
    /// SVD, and certificates are common: every prefix shorter than the
    /// answer of frc, crc and the identity has one.
    #[test]
    fn certificates_are_the_svds_verdicts() {
        for (code, count) in codes() {
            let (n, kind) = (code.scheme().n(), code.scheme().kind());
            if n > 60 {
                continue;
            }
            for order in orders(n, count.min(10)) {
                let pass = Span::new(&code).first_within(&order);
                for len in 0..pass.spans.len() {
                    if pass.surely_not(len) {
                        assert!(!code.is_decodable(&order[..len]), "{}: {order:?} {len}", code.scheme());
                    } else if matches!(kind, SchemeKind::Frc | SchemeKind::Crc | SchemeKind::Ignore) {
                        assert!(len + 1 >= pass.spans.len(), "{}: {order:?} {len}", code.scheme());
                    }
                }
            }
        }
    }

    /// The pass alone finds the bisection's answer on well-conditioned
    /// codes, and on frc it also certifies the prefix one shorter, so that
    /// the search costs one SVD there; the never-decoding codes get no
    /// candidate.
    #[test]
    fn the_pass_alone_finds_the_prefix_of_well_conditioned_codes() {
        for (code, count) in codes() {
            let (n, kind) = (code.scheme().n(), code.scheme().kind());
            let well = matches!(kind, SchemeKind::Frc | SchemeKind::Ignore | SchemeKind::Custom)
                || (kind == SchemeKind::Mds && code.generator() == Some(Generator::Gaussian))
                || (kind == SchemeKind::Crc && n <= 50);
            if !well {
                continue;
            }
            for order in orders(n, count) {
                let pass = Span::new(&code).first_within(&order);
                assert_eq!(pass.candidate, by_svd(&code, &order), "{}: {order:?}", code.scheme());
                if let (SchemeKind::Frc, Some(m)) = (kind, pass.candidate) {
                    assert!(m == 1 || pass.surely_not(m - 1), "{}: {pass:?}", code.scheme());
                }
            }
        }
    }

    /// A pass with a forged `candidate` and the same `spans` everywhere.
    fn forged(candidate: Option<usize>, n: usize, span: SpanOf) -> Pass {
        Pass {
            candidate,
            surely_decodes: false,
            spans: vec![span; n + 1],
        }
    }

    /// Wrong candidates do not reach the answer: one too late (the SVD
    /// decodes one row earlier), one too early (the SVD does not decode
    /// there) and none where all rows decode each end at the bisection's
    /// answer; a late candidate is caught by the SVD at m − 1 unless the
    /// pass certified that prefix, and a certified order never decodes.
    #[test]
    fn wrong_candidates_fall_back_to_the_bisection() {
        let crc = code(SchemeKind::Crc, 30, s(4));
        let weak = SpanOf {
            residual: 0.5,
            weakest: 1e-10,
        };
        let sure = SpanOf {
            residual: 0.5,
            weakest: 0.1,
        };
        for order in orders(30, 10) {
            let m = by_svd(&crc, &order).unwrap();
            assert!(m > 1 && m < 30);
            for candidate in [Some(m), Some(m + 1), Some(m - 1), None] {
                assert_eq!(confirmed(&crc, &order, &forged(candidate, 30, weak)), Some(m));
            }
            // A certified prefix is trusted: the cost of the one SVD saved.
            let mut late = forged(Some(m + 1), 30, weak);
            late.spans[m] = sure;
            assert_eq!(confirmed(&crc, &order, &late), Some(m + 1));
            assert_eq!(confirmed(&crc, &order, &forged(None, 30, sure)), None);
        }
    }

    /// The first prefix of `order` with a candidate's residual, and the
    /// certificate's bound there (as [`Span::first_within`] finds them).
    fn bound_at_candidate(code: &Code, order: &[usize]) -> Option<(usize, Option<f64>)> {
        let mut span = Span::new(code);
        for (j, &w) in order.iter().enumerate() {
            if span.add(w, j + 1) && span.residual() < CANDIDATE {
                return Some((j + 1, span.prefix(&order[..=j]).and_then(|p| surely::bound(&p))));
            }
        }
        None
    }

    /// The certificate's bound holds: wherever it is computed, the SVD's
    /// residual is below it (on exact, approximate and ill-conditioned
    /// codes, and on crc at n = 50, whose κ reaches 10⁶), and a certified
    /// prefix decodes; and it is neither idle nor everywhere: over 81% of
    /// crc's candidates at n = 50 are certified (231 of 280; 223 if the
    /// SVD's backward error were charged twice in κ_A, as `surely.rs` once
    /// did), some at every s, but not all.
    #[test]
    fn the_certificate_bounds_the_svds_residual() {
        let mut cases: Vec<(Code, usize)> = codes();
        for s in [1, 3, 6, 8] {
            cases.push((code(SchemeKind::Crc, 50, self::s(s)), 60));
        }
        let mut crc50 = (0, 0);
        for (code, count) in cases {
            let n = code.scheme().n();
            let (mut certified, mut candidates, mut ratio) = (0, 0, 0.0f64);
            for order in orders(n, count) {
                let Some((m, bound)) = bound_at_candidate(&code, &order) else {
                    continue;
                };
                candidates += 1;
                let Some(bound) = bound else { continue };
                let decoding = code.decode(&order[..m]);
                ratio = ratio.max(decoding.residual / bound);
                assert!(
                    decoding.residual <= bound,
                    "{}: {} > {bound}",
                    code.scheme(),
                    decoding.residual
                );
                if bound < TOLERANCE {
                    assert!(decoding.decodable, "{}: {order:?}", code.scheme());
                    certified += 1;
                }
            }
            // The bound is loose (by a factor of 100 or more here), but
            // not everywhere above the tolerance.
            assert!(ratio < 0.1, "{}: {ratio}", code.scheme());
            if code.scheme().kind() == SchemeKind::Crc && n == 50 {
                assert!(0 < certified, "{}: {certified} of {candidates}", code.scheme());
                crc50 = (crc50.0 + certified, crc50.1 + candidates);
            }
        }
        assert!(100 * crc50.0 > 81 * crc50.1 && crc50.0 < crc50.1, "{crc50:?}");
    }

    /// A custom code whose rows span T only to `distance` (relative): rows
    /// e₁, e₂ and e₃ + (1 − h)·e₄, with T = 1ᵀ at h/(2√2) from their span.
    fn near_miss(distance: f64) -> Code {
        let h = distance * 2.0 * std::f64::consts::SQRT_2;
        let b =
            nalgebra::DMatrix::from_row_slice(3, 4, &[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0 - h]);
        let shape = CustomShape {
            n: 3,
            partitions: 4,
            max_support: 2,
        };
        Code::custom(&Scheme::custom(shape, None).unwrap(), b)
    }

    /// Near the tolerance the certificate stays silent and the SVD decides:
    /// a span 9.93e-10 from T decodes (by the SVD) and one 2e-9 away does
    /// not, both well conditioned, with a candidate from the pass, and
    /// neither is certified (the bound adds about 2% to the distance for
    /// its own rounding); one 7e-10 away is; and an ill-conditioned code
    /// (Vandermonde, κ far past 10⁸) is not.
    #[test]
    fn the_certificate_is_silent_near_the_tolerance() {
        for (distance, decodes) in [(9.93e-10, true), (2e-9, false), (7e-10, true), (1e-11, true)] {
            let code = near_miss(distance);
            for order in orders(3, 6) {
                let pass = Span::new(&code).first_within(&order);
                assert_eq!(pass.candidate, Some(3), "{distance}");
                assert_eq!(code.is_decodable(&order), decodes, "{distance}");
                assert_eq!(pass.surely_decodes, distance < 9e-10, "{distance}");
                assert_eq!(
                    code.shortest_decodable_prefix(&order),
                    decodes.then_some(3),
                    "{distance}"
                );
            }
        }
        let vandermonde = codes().swap_remove(10).0;
        assert_eq!(vandermonde.scheme().n(), 50);
        for order in orders(50, 5) {
            assert!(!Span::new(&vandermonde).first_within(&order).surely_decodes);
        }
    }

    /// The two projections keep the basis orthonormal to working precision
    /// on ill-conditioned rows (a Vandermonde generator, whose later rows
    /// keep under 1e-4 of their norm outside the span): every |q_a·q_b −
    /// δ_ab| below 1e-13. One projection loses about ε·κ² of it.
    #[test]
    fn the_basis_stays_orthonormal() {
        let sch = Scheme::new(
            SchemeKind::Mds,
            20,
            Params {
                k: Some(16),
                ..Params::default()
            },
        )
        .unwrap();
        let code = Code::with_generator(&sch, Generator::Vandermonde, 0).unwrap();
        let mut span = Span::new(&code);
        for (j, worker) in orders(20, 1)[0].iter().enumerate() {
            span.add(*worker, j + 1);
        }
        assert!(span.weakest < 1e-4, "{}", span.weakest);
        let q: Vec<&[f64]> = span.basis.chunks_exact(span.cols).collect();
        assert_eq!(q.len(), 16);
        for a in 0..q.len() {
            for b in 0..q.len() {
                let want = if a == b { 1.0 } else { 0.0 };
                assert!((dot(q[a], q[b]) - want).abs() < 1e-13, "{a} {b}: {}", dot(q[a], q[b]));
            }
        }
    }

    /// The sweeps four basis rows at a time give each value bit for bit as
    /// one basis row at a time does (row lengths with a tail, block counts
    /// with a remainder, zero coefficients among nonzero ones).
    #[test]
    fn blocked_sweeps_are_row_by_row() {
        let mut rng = trial_rng(12, 0);
        let mut draw = || rand::RngExt::random::<f64>(&mut rng) - 0.5;
        for c in [3, 7, 50] {
            for rows in 0..=11 {
                let basis: Vec<f64> = (0..rows * c).map(|_| draw()).collect();
                let row: Vec<f64> = (0..c).map(|_| draw()).collect();
                let mut coefficients: Vec<f64> = (0..rows).map(|_| draw()).collect();
                if rows > 5 {
                    coefficients[5] = 0.0;
                }
                let mut want = row.clone();
                for (q, &d) in basis.chunks_exact(c).zip(&coefficients) {
                    if d != 0.0 {
                        axpy(&mut want, -d, q);
                    }
                }
                let mut got = row.clone();
                subtract(&mut got, &basis, &coefficients);
                assert_eq!(got, want, "{c} {rows}");
                let mut dots = vec![1.0];
                project(&basis, &row, &mut dots);
                let want: Vec<f64> = std::iter::once(1.0)
                    .chain(basis.chunks_exact(c).map(|q| dot(q, &row)))
                    .collect();
                assert_eq!(dots, want, "{c} {rows}");
            }
        }
    }
}
