//! Checking a code: every straggler pattern of size ≤ s (or a uniform random
//! sample of them when there are more than a limit), and an end-to-end
//! least-squares problem whose gradient is decoded from the workers' real
//! messages.
//!
//! The end-to-end problem: X (3 rows per partition, 4·m columns) and y with
//! i.i.d. standard normal entries, w likewise; the loss ½‖Xw − y‖², whose
//! gradient is Xᵀ(Xw − y) = Σ_j X_jᵀ(X_j w − y_j), one term per partition.
//! Workers send B·p (p_j the per-partition gradients, or their m coordinate
//! blocks for comm-efficient; the X_j·w for mds), the master applies the
//! decoding matrix of a random set of n − s finished workers, and the result
//! is compared with the gradient computed directly: the relative error
//! ‖ĝ − g‖ / ‖g‖ must be below [`E2E_TOLERANCE`].

use std::ops::Range;

use faer::Mat;
use rand::{Rng, RngExt};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Code, Generator, TOLERANCE};
use crate::encoding;
use crate::linalg::{mul, norm, select_rows};
use crate::rng::trial_rng;
use crate::scheme::SchemeKind;

/// The end-to-end check passes when the decoded gradient's relative error is
/// below this. Like [`TOLERANCE`] it leaves float64 rounding (about
/// 2.2e-16 × the condition number × the cancellation in Σ_j g_j) a margin of
/// a thousand or more for condition numbers up to 10⁴.
pub const E2E_TOLERANCE: f64 = 1e-9;

/// Random allowed sets decoded in the end-to-end check.
pub(crate) const E2E_SETS: usize = 16;

/// Patterns decoded per parallel batch (bounds memory, not the result).
const BATCH: usize = 1024;

/// The checks of one code, as one output row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodesRow {
    /// Scheme name.
    pub scheme: SchemeKind,
    /// Generator of comm-efficient and mds (`gaussian` or `vandermonde`); empty otherwise.
    pub generator: Option<Generator>,
    /// Number of workers.
    pub n: usize,
    /// Straggler tolerance s (n − k for mds).
    pub s: usize,
    /// Message split m (comm-efficient only; empty otherwise).
    pub m: Option<usize>,
    /// Guaranteed recovery threshold: finished workers that always suffice.
    pub k: usize,
    /// Whether the decoded gradient is meant to be exact (false for `ignore`).
    pub exact: bool,
    /// Straggler patterns of size ≤ s, Σ_{j≤s} C(n, j) (a float: it can exceed 2⁶⁴).
    pub patterns_total: f64,
    /// Patterns decoded.
    pub patterns_checked: u64,
    /// Whether every pattern was decoded (else a uniform random sample of them).
    pub exhaustive: bool,
    /// Fraction of the decoded patterns whose relative residual is below `tolerance`.
    pub decodable_fraction: f64,
    /// Largest relative residual ‖A·B_F − T‖_F / ‖T‖_F over the decoded patterns.
    pub max_residual: f64,
    /// Median condition number σ_max/σ_r of B_F over the decoded patterns.
    pub median_condition: f64,
    /// Largest condition number σ_max/σ_r of B_F over the decoded patterns.
    pub max_condition: f64,
    /// Residual below which a pattern counts as decodable (relative).
    pub tolerance: f64,
    /// Random sets of n − s finished workers decoded end to end.
    pub e2e_sets: usize,
    /// Largest relative error ‖ĝ − g‖/‖g‖ of the decoded least-squares gradient over those sets.
    pub e2e_error: f64,
    /// Error below which the end-to-end check passes (relative).
    pub e2e_tolerance: f64,
    /// Every decoded pattern decodable and the end-to-end error below `e2e_tolerance`.
    pub pass: bool,
}

impl CodesRow {
    /// Which checks an exact code failed, with the numbers (none when it
    /// passed or is inexact).
    pub fn failure(&self) -> Option<String> {
        if self.pass || !self.exact {
            return None;
        }
        let mut failed = Vec::new();
        if self.decodable_fraction < 1.0 {
            let missed = ((1.0 - self.decodable_fraction) * self.patterns_checked as f64).round();
            let rounding = f64::EPSILON * self.max_condition;
            let random = matches!(self.scheme, SchemeKind::Crc | SchemeKind::ApproxRegular)
                || self.generator == Some(Generator::Gaussian);
            let why = match (self.max_residual <= 100.0 * rounding, random) {
                (true, true) => format!(
                    ": float64 rounding at that condition, eps*cond = {rounding:.1e}, in this draw of the random matrix; another --seed draws another"
                ),
                (true, false) => format!(": float64 rounding at that condition, eps*cond = {rounding:.1e}"),
                (false, _) => String::new(),
            };
            failed.push(format!(
                "{missed} of {} straggler patterns decoded with a residual above {:e} (largest {:.3e}, condition up to {:.3e}{why})",
                self.patterns_checked, self.tolerance, self.max_residual, self.max_condition
            ));
        }
        if self.e2e_error.is_nan() || self.e2e_error >= self.e2e_tolerance {
            failed.push(format!(
                "the end-to-end gradient missed by {:.3e}, above {:e}",
                self.e2e_error, self.e2e_tolerance
            ));
        }
        Some(failed.join("; "))
    }
}

/// The number of subsets of size ≤ s of n, as a float.
pub fn patterns_total(n: usize, s: usize) -> f64 {
    let mut c = 1.0_f64;
    let mut total = 1.0;
    for j in 1..=s.min(n) {
        c = c * (n + 1 - j) as f64 / j as f64;
        total += c;
    }
    total
}

/// The workers not in `stragglers` (sorted), in increasing order.
fn complement(n: usize, stragglers: &[usize]) -> Vec<usize> {
    let mut it = stragglers.iter().peekable();
    (0..n)
        .filter(|&i| {
            if it.peek() == Some(&&i) {
                it.next();
                false
            } else {
                true
            }
        })
        .collect()
}

/// Advances `idx` (a sorted j-subset of 0..n) to the next in lexicographic
/// order; false after the last.
fn next_combination(idx: &mut [usize], n: usize) -> bool {
    let j = idx.len();
    for q in (0..j).rev() {
        if idx[q] < n - j + q {
            idx[q] += 1;
            for r in q + 1..j {
                idx[r] = idx[r - 1] + 1;
            }
            return true;
        }
    }
    false
}

/// Every straggler pattern of size ≤ s, smallest first, each in lexicographic
/// order.
fn exhaustive(n: usize, s: usize) -> impl Iterator<Item = Vec<usize>> {
    (0..=s.min(n)).flat_map(move |j| {
        let mut idx: Option<Vec<usize>> = Some((0..j).collect());
        std::iter::from_fn(move || {
            let cur = idx.take()?;
            let mut next = cur.clone();
            if next_combination(&mut next, n) {
                idx = Some(next);
            }
            Some(cur)
        })
    })
}

/// A uniform random j-subset of 0..n, sorted (partial Fisher–Yates).
pub(super) fn random_subset(rng: &mut impl Rng, n: usize, j: usize) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..n).collect();
    for q in 0..j {
        let r = rng.random_range(q..n);
        perm.swap(q, r);
    }
    let mut set = perm[..j].to_vec();
    set.sort_unstable();
    set
}

/// A uniform random straggler pattern among those of size ≤ s: its size j
/// with probability C(n, j)/Σ, then a uniform j-subset.
fn random_pattern(rng: &mut impl Rng, n: usize, s: usize, total: f64) -> Vec<usize> {
    let mut u = rng.random::<f64>() * total;
    let mut c = 1.0_f64;
    let mut j = 0;
    while j < s && u >= c {
        u -= c;
        j += 1;
        c = c * (n + 1 - j) as f64 / j as f64;
    }
    random_subset(rng, n, j)
}

/// One decoded set of finished workers: what a check keeps of its decoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Whether the relative residual is below [`TOLERANCE`].
    pub decodable: bool,
    /// The relative residual ‖A·B_F − T‖_F / ‖T‖_F.
    pub residual: f64,
    /// The condition number σ_max/σ_r of B_F.
    pub condition: f64,
}

impl Outcome {
    /// What a check keeps of the decoding from `finished`.
    pub(super) fn of(decoding: &super::Decoding) -> Self {
        Self {
            decodable: decoding.decodable,
            residual: decoding.residual,
            condition: decoding.condition,
        }
    }
}

/// Decodes `sets` in parallel, in order; `done` is called after each.
pub(super) fn decode_all(
    sets: &[Vec<usize>],
    decode: &(dyn Fn(&[usize]) -> super::Decoding + Sync),
    done: &(dyn Fn() + Sync),
) -> Vec<Outcome> {
    sets.par_iter()
        .map(|f| {
            let d = Outcome::of(&decode(f));
            done();
            d
        })
        .collect()
}

pub(super) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let len = values.len();
    match len {
        0 => f64::NAN,
        _ if len % 2 == 1 => values[len / 2],
        _ => 0.5 * (values[len / 2 - 1] + values[len / 2]),
    }
}

/// The straggler patterns [`check`] decodes: every pattern of size ≤ s if
/// there are at most `limit`, else `limit` uniform random ones.
pub fn patterns(code: &Code, limit: u64) -> u64 {
    let total = patterns_total(code.scheme().n(), code.scheme().s());
    // Rounded: the float sum of binomials is an integer up to rounding.
    if total <= limit as f64 {
        total.round() as u64
    } else {
        limit
    }
}

/// The decodings [`check`] makes: every pattern or `limit` of them, and the
/// end-to-end sets.
pub fn decodings(code: &Code, limit: u64) -> u64 {
    patterns(code, limit) + E2E_SETS as u64
}

/// The patterns numbered `range` of the [`patterns`] that [`check`] decodes
/// (the random ones drawn in order from stream 1 of `seed`, so that any
/// range holds the same patterns as the whole run).
fn pattern_range(code: &Code, limit: u64, seed: u64, range: Range<u64>) -> Box<dyn Iterator<Item = Vec<usize>>> {
    let (n, s) = (code.scheme().n(), code.scheme().s());
    let total = patterns_total(n, s);
    let len = (range.end - range.start) as usize;
    if total <= limit as f64 {
        return Box::new(exhaustive(n, s).skip(range.start as usize).take(len));
    }
    let mut rng = trial_rng(seed, 1);
    for _ in 0..range.start {
        random_pattern(&mut rng, n, s, total);
    }
    Box::new((0..len).map(move |_| random_pattern(&mut rng, n, s, total)))
}

/// Decodes the patterns numbered `range` of the [`patterns`] that [`check`]
/// decodes, in batches, in parallel (the result does not depend on the
/// thread count); `done` is called after each.
pub fn outcomes(code: &Code, limit: u64, seed: u64, range: Range<u64>, done: &(dyn Fn() + Sync)) -> Vec<Outcome> {
    let n = code.scheme().n();
    let mut out = Vec::with_capacity((range.end - range.start) as usize);
    let mut batch = Vec::with_capacity(BATCH);
    let decode = |finished: &[usize]| code.decode(finished);
    for p in pattern_range(code, limit, seed, range) {
        batch.push(complement(n, &p));
        if batch.len() == BATCH {
            out.extend(decode_all(&batch, &decode, done));
            batch.clear();
        }
    }
    out.extend(decode_all(&batch, &decode, done));
    out
}

impl CodesRow {
    /// The row of `code` checked with `limit`, before any pattern is
    /// decoded: what the code and the limit determine, the results zero.
    pub fn head(code: &Code, limit: u64) -> Self {
        let scheme = code.scheme();
        let (n, s) = (scheme.n(), scheme.s());
        let total = patterns_total(n, s);
        CodesRow {
            scheme: scheme.kind(),
            generator: code.generator(),
            n,
            s,
            m: scheme.m(),
            k: scheme.k(),
            // A custom code with s is checked for what s claims: decoding exactly
            // from any n − s workers.
            exact: scheme.exact_gradient() || scheme.kind() == SchemeKind::Custom,
            patterns_total: total,
            patterns_checked: 0,
            exhaustive: total <= limit as f64,
            decodable_fraction: 0.0,
            max_residual: 0.0,
            median_condition: 0.0,
            max_condition: 0.0,
            tolerance: TOLERANCE,
            e2e_sets: E2E_SETS,
            e2e_error: 0.0,
            e2e_tolerance: E2E_TOLERANCE,
            pass: false,
        }
    }

    /// This head with the results of every pattern decoded (in order) and
    /// the end-to-end error.
    pub fn finish(self, outcomes: &[Outcome], e2e_error: f64) -> Self {
        let decodable = outcomes.iter().filter(|o| o.decodable).count();
        let mut conditions: Vec<f64> = outcomes.iter().map(|o| o.condition).collect();
        let checked = outcomes.len();
        CodesRow {
            patterns_checked: checked as u64,
            decodable_fraction: decodable as f64 / checked as f64,
            max_residual: outcomes.iter().map(|o| o.residual).fold(0.0, f64::max),
            max_condition: conditions.iter().copied().fold(f64::NAN, f64::max),
            median_condition: median(&mut conditions),
            e2e_error,
            pass: decodable == checked && e2e_error < E2E_TOLERANCE,
            ..self
        }
    }
}

/// Decodes every straggler pattern of size ≤ s if there are at most `limit`,
/// else `limit` uniform random ones (seeded by `seed`), and runs the
/// end-to-end check. Parallel over patterns (rayon); the result does not
/// depend on the thread count.
///
/// Cost: one SVD per pattern and per end-to-end set (see [`Code::decode`]),
/// [`decodings`] in all; `done` is called after each.
pub fn check(code: &Code, limit: u64, seed: u64, done: &(dyn Fn() + Sync)) -> CodesRow {
    let outcomes = outcomes(code, limit, seed, 0..patterns(code, limit), done);
    let e2e_error = end_to_end(code, E2E_SETS, seed, done);
    CodesRow::head(code, limit).finish(&outcomes, e2e_error)
}

/// The largest relative error of the least-squares gradient decoded from
/// `sets` random sets of n − s finished workers (the problem in the module
/// docs; seeded by `seed`). The sets are drawn in order and decoded in
/// parallel; `done` is called after each.
pub(crate) fn end_to_end(code: &Code, sets: usize, seed: u64, done: &(dyn Fn() + Sync)) -> f64 {
    let (n, s) = (code.scheme().n(), code.scheme().s());
    let mut rng = trial_rng(seed, 2);
    let is_mds = code.scheme().kind() == SchemeKind::Mds;
    let m = if is_mds { 1 } else { code.target().nrows() };
    // Partitions of the data: the k row blocks for mds, the columns of B
    // per block otherwise (n, or a custom code's P).
    let parts = if is_mds {
        code.target().nrows()
    } else {
        code.encoding().ncols() / m
    };
    let (rows, cols) = (3, 4 * m);
    let x = encoding::gaussian(rows * parts, cols, rng.next_u64());
    let y = encoding::gaussian(rows * parts, 1, rng.next_u64());
    let w = encoding::gaussian(cols, 1, rng.next_u64());
    let xw = mul(&x, &w);
    let x_t = x.transpose().to_owned();
    let gradient = mul(&x_t, &(&xw - &y));
    let norm_g = norm(&gradient);
    // The payload p: one row per column of B.
    let payload = if is_mds {
        Mat::from_fn(parts, rows, |j, q| xw[(j * rows + q, 0)])
    } else {
        let width = cols / m;
        let mut p = Mat::zeros(parts * m, width);
        for j in 0..parts {
            let xj = x.subrows(j * rows, rows).to_owned();
            let yj = y.subrows(j * rows, rows).to_owned();
            let gj = mul(xj.transpose().to_owned(), &(&mul(&xj, &w) - &yj));
            for u in 0..m {
                for q in 0..width {
                    p[(j * m + u, q)] = gj[(u * width + q, 0)];
                }
            }
        }
        p
    };
    let messages = mul(code.encoding(), &payload);
    let finished_sets: Vec<Vec<usize>> = (0..sets)
        .map(|_| complement(n, &random_subset(&mut rng, n, s)))
        .collect();
    let error = |finished: &Vec<usize>| {
        let a = code.decode(finished).coefficients;
        let decoded = mul(&a, select_rows(&messages, finished));
        let estimate = if is_mds {
            let xw_hat = Mat::from_fn(xw.nrows(), 1, |i, _| decoded[(i / rows, i % rows)]);
            mul(&x_t, &(&xw_hat - &y))
        } else {
            let width = cols / m;
            Mat::from_fn(cols, 1, |c, _| decoded[(c / width, c % width)])
        };
        done();
        norm(&(&estimate - &gradient)) / norm_g
    };
    finished_sets.par_iter().map(error).reduce(|| 0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerates_every_pattern_once() {
        let all: Vec<Vec<usize>> = exhaustive(6, 2).collect();
        assert_eq!(all.len() as f64, patterns_total(6, 2));
        assert_eq!(all.len(), 1 + 6 + 15);
        let mut dedup = all.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), all.len());
        assert!(
            all.iter()
                .all(|p| p.windows(2).all(|w| w[0] < w[1]) && p.iter().all(|&i| i < 6))
        );
        assert_eq!(complement(5, &[1, 3]), vec![0, 2, 4]);
    }

    #[test]
    fn sampled_pattern_sizes_follow_the_binomial_weights() {
        // n=8, s=2: sizes 0, 1, 2 with weights 1, 8, 28 of 37. 37 000 draws:
        // the counts' standard deviations are under 100; allow 5 of them.
        let mut rng = trial_rng(3, 0);
        let total = patterns_total(8, 2);
        let mut counts = [0_u32; 3];
        for _ in 0..37_000 {
            let p = random_pattern(&mut rng, 8, 2, total);
            counts[p.len()] += 1;
        }
        for (c, expected) in counts.iter().zip([1000.0, 8000.0, 28000.0]) {
            assert!((*c as f64 - expected).abs() < 500.0, "{counts:?}");
        }
    }
}
