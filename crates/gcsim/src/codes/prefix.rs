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
//! instead of about log₂(n) + 1 SVDs. The set of all n workers, the last
//! prefix of every order, is decided once per code (`full.rs`): its
//! verdict, and for an order whose last worker the code cannot do without,
//! the answer n with no pass at all.

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
        let n = self.encoding().nrows();
        if order.len() == n && n > 0 && self.full.needs_all(self, order[n - 1]) {
            return Some(n);
        }
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
        // All the workers: the verdict taken once for the code, where it
        // stands for every order of them (`full.rs`).
        if len == code.encoding().nrows()
            && let (verdict, true) = code.full.verdict(code)
        {
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
        let mut outside = Vec::with_capacity(target.nrows() * cols);
        for r in 0..target.nrows() {
            outside.extend((0..cols).map(|j| target[(r, j)]));
        }
        Span {
            code,
            cols,
            basis: Vec::with_capacity((rank + 1) * cols),
            outside,
            target_norm: crate::linalg::norm(target),
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
mod tests;
