//! Real encodings of the coded matrix-multiplication codes, their decoding
//! by interpolation, and their checks.
//!
//! C = A·B with A in p × m blocks A_{j,l} (p row blocks, m inner) and B in
//! m × q blocks B_{l,k}. Worker i receives Ã_i = Σ a_i(j,l)·A_{j,l} and
//! B̃_i = Σ b_i(l,k)·B_{l,k} and returns Ã_i·B̃_i. With evaluation points
//! x_i, the entangled polynomial code (Yu, Maddah-Ali & Avestimehr 2020,
//! §IV, with their p for our m) takes
//!
//!   a_i(j,l) = x_i^(l + m·j),   b_i(l,k) = x_i^(m−1−l + pm·k),
//!
//! so Ã_i·B̃_i = Σ_e x_i^e·P_e, a polynomial of degree pmq + m − 2 whose
//! coefficient P_(m−1+mj+pmk) is C_{j,k} (the cross terms l ≠ l' land on
//! exponents that differ from these mod m). Any K = pmq + m − 1 distinct
//! points determine every coefficient; fewer never determine the C_{j,k}.
//! m = 1 is the polynomial code (Yu, Maddah-Ali & Avestimehr 2017: K = pq),
//! p = q = 1 MatDot (Dutta et al. 2019: K = 2m − 1, C the coefficient of
//! x^(m−1)).
//!
//! In the notation of [`super`]: the encoding matrix is E = [x_i^e] (n × K),
//! the target T selects the pq wanted coefficients (pq × K), and a set F of
//! finished workers decodes when T lies in the row space of E_F; decoding is
//! the least-squares solve of `super::decode`.
//!
//! Points: `vandermonde` (n equispaced nodes in [−1, 1], the papers' real
//! points), `chebyshev` (Chebyshev nodes), or, for the polynomial code only,
//! `gaussian`: a_i(j) and b_i(k) i.i.d. standard normal, so that row i of E
//! is the Khatri-Rao product a_i ⊗ b_i (Subramaniam, Heidarzadeh &
//! Narayanan 2019), any pq rows of which are independent with probability 1.

use faer::Mat;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::check::{Outcome, decode_all, median, random_subset};
use super::{Generator, MAX_CODE_N, TOLERANCE, decode};
use crate::encoding;
use crate::linalg::{mul, norm};
use crate::rng::trial_rng;
use crate::scheme::{Scheme, SchemeKind, Split};

/// The end-to-end product check passes when ‖Ĉ − C‖_F/‖C‖_F is below this.
pub(crate) const PRODUCT_TOLERANCE: f64 = 1e-6;

/// Random sets of k finished workers decoded end to end.
pub const PRODUCT_SETS: usize = 16;

/// Rows, inner size and columns of one block of A (rows × inner) and B
/// (inner × columns) in the end-to-end product.
const BLOCK: (usize, usize, usize) = (3, 2, 4);

/// Why a matmul code cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MatmulError {
    /// Not a matmul scheme.
    #[error("{0} is not a matrix-multiplication code (polynomial, matdot, entangled)")]
    NotMatmul(SchemeKind),
    /// Random Gaussian encoding for a code that needs the polynomial structure.
    #[error(
        "--generator gaussian applies only to polynomial (the random Khatri-Rao code); {0} needs evaluation points: --generator vandermonde or chebyshev"
    )]
    NoGaussian(SchemeKind),
    /// n above [`MAX_CODE_N`].
    #[error("--n {n} is too large to build a dense encoding matrix; accepted: 1..{max}", max = MAX_CODE_N)]
    TooLarge {
        /// The number of workers.
        n: usize,
    },
}

/// The real code of a matmul scheme.
#[derive(Debug, Clone)]
pub struct MatmulCode {
    scheme: Scheme,
    split: Split,
    generator: Generator,
    /// n × pm: worker i's coefficient of A_{j,l}, column j·m + l.
    a_coef: Mat<f64>,
    /// n × mq: worker i's coefficient of B_{l,k}, column l·q + k.
    b_coef: Mat<f64>,
    /// n × K: worker i's result is Σ_e E\[i, e\]·P_e.
    encoding: Mat<f64>,
    /// pq × K: row j·q + k selects the coefficient that is C_{j,k}.
    target: Mat<f64>,
}

impl MatmulCode {
    /// The code of `scheme` (polynomial, matdot or entangled) with
    /// `generator`'s points; `seed` fixes the Gaussian draws.
    pub fn new(scheme: &Scheme, generator: Generator, seed: u64) -> Result<Self, MatmulError> {
        let kind = scheme.kind();
        let split = scheme.split().ok_or(MatmulError::NotMatmul(kind))?;
        let n = scheme.n();
        if n > MAX_CODE_N {
            return Err(MatmulError::TooLarge { n });
        }
        let Split { p, q, m } = split;
        // The number of coefficients of Ã(x)·B̃(x), from the exponents
        // themselves (not from the scheme's threshold, which it checks):
        // the largest exponent of A's blocks plus B's, plus one.
        let k_total = (m - 1 + m * (p - 1)) + (m - 1 + p * m * (q - 1)) + 1;
        let wanted = |j: usize, k: usize| m - 1 + m * j + p * m * k;
        let mut target = Mat::zeros(p * q, k_total);
        for j in 0..p {
            for k in 0..q {
                target[(j * q + k, wanted(j, k))] = 1.0;
            }
        }
        let (a_coef, b_coef, encoding) = match generator {
            Generator::Gaussian => {
                if kind != SchemeKind::Polynomial {
                    return Err(MatmulError::NoGaussian(kind));
                }
                let mut rng = trial_rng(seed, 0);
                let mut draw = |rows, cols| Mat::from_fn(rows, cols, |_, _| StandardNormal.sample(&mut rng));
                let a: Mat<f64> = draw(n, p);
                let b: Mat<f64> = draw(n, q);
                // Coefficient e = j + p·k, as the polynomial code's exponent.
                let e = Mat::from_fn(n, p * q, |i, c| a[(i, c % p)] * b[(i, c / p)]);
                (a, b, e)
            }
            Generator::Vandermonde | Generator::Chebyshev => {
                let x = |i: usize| match generator {
                    Generator::Chebyshev => encoding::chebyshev_node(i, n),
                    _ => encoding::node(i, n),
                };
                let a = Mat::from_fn(n, p * m, |i, c| x(i).powi((c % m + m * (c / m)) as i32));
                let b = Mat::from_fn(n, m * q, |i, c| {
                    let (l, k) = (c / q, c % q);
                    x(i).powi((m - 1 - l + p * m * k) as i32)
                });
                let e = Mat::from_fn(n, k_total, |i, c| x(i).powi(c as i32));
                (a, b, e)
            }
        };
        Ok(Self {
            scheme: *scheme,
            split,
            generator,
            a_coef,
            b_coef,
            encoding,
            target,
        })
    }

    /// The scheme.
    pub fn scheme(&self) -> &Scheme {
        &self.scheme
    }

    /// The encoding matrix E (n × K).
    pub fn encoding(&self) -> &Mat<f64> {
        &self.encoding
    }

    /// Decodes from the finished workers `finished`: coefficients D
    /// (pq × |F|) with D·E_F ≈ T, the residual, condition number and verdict.
    ///
    /// Cost: one SVD of the |F| × K matrix E_F.
    pub fn decode(&self, finished: &[usize]) -> super::Decoding {
        decode::decode(&self.encoding, &self.target, finished)
    }

    /// The blocks of A (p·r × m·c) and B (m·c × q·t) for block sizes `BLOCK`.
    fn encode_inputs(&self, a: &Mat<f64>, b: &Mat<f64>) -> Vec<Mat<f64>> {
        let Split { p, q, m } = self.split;
        let (r, c, t) = BLOCK;
        (0..self.scheme.n())
            .map(|i| {
                let mut at = Mat::zeros(r, c);
                for j in 0..p {
                    for l in 0..m {
                        add_scaled(&mut at, a, (j * r, l * c), self.a_coef[(i, j * m + l)]);
                    }
                }
                let mut bt = Mat::zeros(c, t);
                for l in 0..m {
                    for k in 0..q {
                        add_scaled(&mut bt, b, (l * c, k * t), self.b_coef[(i, l * q + k)]);
                    }
                }
                mul(&at, &bt)
            })
            .collect()
    }

    /// Random A and B (standard normal, blocks of `BLOCK`) from stream 2 of
    /// `seed`, A·B computed directly, and every worker's real product
    /// Ã_i·B̃_i: what a set's decoded product is checked against.
    fn product_inputs(&self, seed: u64) -> (ProductInputs, rand_xoshiro::Xoshiro256PlusPlus) {
        let Split { p, q, m } = self.split;
        let (r, c, t) = BLOCK;
        let mut rng = trial_rng(seed, 2);
        let a = Mat::from_fn(p * r, m * c, |_, _| StandardNormal.sample(&mut rng));
        let b = Mat::from_fn(m * c, q * t, |_, _| StandardNormal.sample(&mut rng));
        let direct = mul(&a, &b);
        let results = self.encode_inputs(&a, &b);
        (ProductInputs { direct, results }, rng)
    }

    /// ‖Ĉ − C‖_F/‖C‖_F for the product Ĉ decoded from the workers `f` with
    /// `d`'s coefficients (infinite where it is not finite).
    fn set_error(&self, inputs: &ProductInputs, f: &[usize], d: &super::Decoding) -> f64 {
        let Split { p, q, .. } = self.split;
        let (r, _, t) = BLOCK;
        let mut decoded = Mat::zeros(p * r, q * t);
        for j in 0..p {
            for kk in 0..q {
                let mut block = Mat::zeros(r, t);
                for (col, &w) in f.iter().enumerate() {
                    add_scaled(
                        &mut block,
                        &inputs.results[w],
                        (0, 0),
                        d.coefficients[(j * q + kk, col)],
                    );
                }
                decoded.submatrix_mut(j * r, kk * t, r, t).copy_from(&block);
            }
        }
        let err = norm(&(&decoded - &inputs.direct)) / norm(&inputs.direct);
        if err.is_finite() { err } else { f64::INFINITY }
    }

    /// The decoding from the workers `f`, judged by its product: decodable
    /// where the product decoded with its coefficients from the real
    /// products of `inputs` is within [`PRODUCT_TOLERANCE`] of A·B (the
    /// tolerance the output prints); the residual stays a diagnostic.
    fn decode_product(&self, inputs: &ProductInputs, f: &[usize]) -> super::Decoding {
        let mut d = self.decode(f);
        d.decodable = self.set_error(inputs, f, &d) < PRODUCT_TOLERANCE;
        d
    }

    /// The end-to-end check: for `sets` random sets of k finished workers,
    /// the decoded Ĉ against A·B (see `product_inputs`). Returns the
    /// largest ‖Ĉ − C‖_F/‖C‖_F.
    pub fn product_error(&self, sets: usize, seed: u64) -> f64 {
        let (inputs, mut rng) = self.product_inputs(seed);
        let (n, k) = (self.scheme.n(), self.scheme.k());
        let mut worst = 0.0_f64;
        for _ in 0..sets {
            let f = random_subset(&mut rng, n, k);
            worst = worst.max(self.set_error(&inputs, &f, &self.decode(&f)));
        }
        worst
    }
}

/// A·B and every worker's real product, for random A and B.
struct ProductInputs {
    direct: Mat<f64>,
    results: Vec<Mat<f64>>,
}

/// `sum` += x·M\[top.., left..\], entry by entry, over `sum`'s shape.
fn add_scaled(sum: &mut Mat<f64>, m: &Mat<f64>, (top, left): (usize, usize), x: f64) {
    for j in 0..sum.ncols() {
        for i in 0..sum.nrows() {
            sum[(i, j)] += m[(top + i, left + j)] * x;
        }
    }
}

/// The checks of one matmul code, as one output row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatmulRow {
    /// Scheme name (`polynomial`, `matdot`, `entangled`).
    pub scheme: SchemeKind,
    /// Evaluation points: `vandermonde`, `chebyshev` or `gaussian` (random Khatri-Rao).
    pub generator: Generator,
    /// Number of workers.
    pub n: usize,
    /// Row blocks of A (1 for matdot).
    pub p: usize,
    /// Parts of the inner dimension (1 for polynomial).
    pub m: usize,
    /// Column blocks of B (1 for matdot).
    pub q: usize,
    /// Recovery threshold K = pmq + m − 1.
    pub k: usize,
    /// Sets of k finished workers, C(n, k) (a float: it can exceed 2⁶⁴).
    pub sets_total: f64,
    /// Sets of k workers decoded (and as many sets of k − 1).
    pub sets_checked: u64,
    /// Whether every k-set was decoded (else a uniform random sample).
    pub exhaustive: bool,
    /// Fraction of the k-sets whose decoded product is within
    /// `product_tolerance` of A·B (random A, B).
    pub decodable_fraction: f64,
    /// Fraction of the (k − 1)-sets that decode: below 1 when the threshold
    /// is not lower than claimed. Generic points give 0; points symmetric
    /// about 0 (vandermonde, chebyshev) let a few symmetric (k − 1)-sets
    /// decode matdot and entangled, whose target is not every coefficient
    /// (an even node polynomial has no odd coefficients).
    pub below_threshold_fraction: f64,
    /// Median condition number σ_max/σ_r of E_F over the k-sets.
    pub median_condition: f64,
    /// Largest condition number of E_F over the k-sets.
    pub max_condition: f64,
    /// The decoding residual's tolerance of the gradient codes, a
    /// diagnostic here: a matmul set is judged by its product's error.
    pub tolerance: f64,
    /// Random k-sets decoded end to end.
    pub product_sets: usize,
    /// Largest ‖Ĉ − A·B‖_F/‖A·B‖_F over those sets (random A, B).
    pub product_error: f64,
    /// Error below which the product check passes (relative).
    pub product_tolerance: f64,
    /// Every k-set decodable, some (k−1)-set not, product error below tolerance.
    pub pass: bool,
}

impl MatmulRow {
    /// Which checks the code failed, with the numbers (none when it passed).
    pub fn failure(&self) -> Option<String> {
        if self.pass {
            return None;
        }
        let mut failed = Vec::new();
        if self.decodable_fraction < 1.0 {
            let missed = ((1.0 - self.decodable_fraction) * self.sets_checked as f64).round();
            failed.push(format!(
                "{missed} of {} sets of k={} workers did not decode the product within {:e} (condition up to {:.3e})",
                self.sets_checked, self.k, self.product_tolerance, self.max_condition
            ));
        }
        if self.below_threshold_fraction >= 1.0 {
            failed.push(format!(
                "every set of k-1={} workers decoded too: the threshold is below k",
                self.k - 1
            ));
        }
        if self.product_error.is_nan() || self.product_error >= self.product_tolerance {
            failed.push(format!(
                "the decoded product missed A*B by {:.3e}, above {:e}",
                self.product_error, self.product_tolerance
            ));
        }
        Some(failed.join("; "))
    }
}

/// C(n, k) as a float.
fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (1..=k).fold(1.0, |c, j| c * (n + 1 - j) as f64 / j as f64)
}

/// Every k-subset of 0..n in lexicographic order.
fn all_subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        out.push(idx.clone());
        let mut q = k;
        loop {
            if q == 0 {
                return out;
            }
            q -= 1;
            if idx[q] < n - k + q {
                idx[q] += 1;
                for r in q + 1..k {
                    idx[r] = idx[r - 1] + 1;
                }
                break;
            }
        }
    }
}

/// The sets of size `size` checked: all of them if at most `limit`, else
/// `limit` uniform random ones from stream `stream` of `seed`.
fn sets(n: usize, size: usize, limit: u64, seed: u64, stream: u64) -> (Vec<Vec<usize>>, bool) {
    if binomial(n, size) <= limit as f64 {
        (all_subsets(n, size), true)
    } else {
        let mut rng = trial_rng(seed, stream);
        ((0..limit).map(|_| random_subset(&mut rng, n, size)).collect(), false)
    }
}

/// The sets [`check`] decodes, in order: every set of k finished workers
/// (or `limit` random ones), then as many sets of k − 1 (all of them if
/// there are no more).
fn checked_sets(code: &MatmulCode, limit: u64, seed: u64) -> Vec<Vec<usize>> {
    let (n, k) = (code.scheme.n(), code.scheme.k());
    let (mut all, _) = sets(n, k, limit, seed, 1);
    if k >= 1 {
        let (below, _) = sets(n, k - 1, limit.min(all.len() as u64), seed, 3);
        all.extend(below);
    }
    all
}

/// Decodes the sets numbered `range` of the [`decodings`] that [`check`]
/// makes (the k-sets, then the (k − 1)-sets), in parallel; `done` is called
/// after each.
pub fn outcomes(
    code: &MatmulCode,
    limit: u64,
    seed: u64,
    range: std::ops::Range<u64>,
    done: &(dyn Fn() + Sync),
) -> Vec<Outcome> {
    let sets = checked_sets(code, limit, seed);
    let (inputs, _) = code.product_inputs(seed);
    decode_all(
        &sets[range.start as usize..range.end as usize],
        &|f| code.decode_product(&inputs, f),
        done,
    )
}

impl MatmulRow {
    /// The row of `code` checked with `limit`, before any set is decoded:
    /// what the code and the limit determine, the results zero.
    pub fn head(code: &MatmulCode, limit: u64) -> Self {
        let (n, k) = (code.scheme.n(), code.scheme.k());
        let Split { p, q, m } = code.split;
        let sets_total = binomial(n, k);
        MatmulRow {
            scheme: code.scheme.kind(),
            generator: code.generator,
            n,
            p,
            m,
            q,
            k,
            sets_total,
            sets_checked: sets_total.min(limit as f64).round() as u64,
            exhaustive: sets_total <= limit as f64,
            decodable_fraction: 0.0,
            below_threshold_fraction: 0.0,
            median_condition: 0.0,
            max_condition: 0.0,
            tolerance: TOLERANCE,
            product_sets: PRODUCT_SETS,
            product_error: 0.0,
            product_tolerance: PRODUCT_TOLERANCE,
            pass: false,
        }
    }

    /// This head with the results of every set decoded (the `sets_checked`
    /// k-sets, then the (k − 1)-sets, in order) and the product error.
    pub fn finish(self, outcomes: &[Outcome], product_error: f64) -> Self {
        let at_k = (self.sets_checked as usize).min(outcomes.len());
        let (results, below) = outcomes.split_at(at_k);
        let decodable = results.iter().filter(|r| r.decodable).count();
        let mut conditions: Vec<f64> = results.iter().map(|r| r.condition).collect();
        let max_condition = conditions.iter().copied().fold(f64::NAN, f64::max);
        let below_fraction = if below.is_empty() {
            0.0
        } else {
            below.iter().filter(|b| b.decodable).count() as f64 / below.len() as f64
        };
        MatmulRow {
            decodable_fraction: decodable as f64 / results.len() as f64,
            below_threshold_fraction: below_fraction,
            median_condition: median(&mut conditions),
            max_condition,
            product_error,
            pass: decodable == results.len() && below_fraction < 1.0 && product_error < PRODUCT_TOLERANCE,
            ..self
        }
    }
}

/// Decodes every set of k finished workers (or `limit` random ones) and as
/// many of k − 1 (the threshold is k when every k-set decodes and some
/// (k − 1)-set does not), and runs the end-to-end product check. Parallel over sets;
/// the result does not depend on the thread count.
///
/// Cost: about 2·min(C(n, k), limit) + [`PRODUCT_SETS`] SVDs of at most
/// k × k matrices; `done` is called after each.
pub fn check(code: &MatmulCode, limit: u64, seed: u64, done: &(dyn Fn() + Sync)) -> MatmulRow {
    let outcomes = outcomes(code, limit, seed, 0..decodings(code, limit), done);
    let product_error = code.product_error(PRODUCT_SETS, seed);
    MatmulRow::head(code, limit).finish(&outcomes, product_error)
}

/// The decodings [`check`] makes, for a progress bar.
pub fn decodings(code: &MatmulCode, limit: u64) -> u64 {
    let (n, k) = (code.scheme.n(), code.scheme.k());
    let at_k = binomial(n, k).min(limit as f64).round() as u64;
    let below = if k >= 1 {
        binomial(n, k - 1).min(at_k as f64).round() as u64
    } else {
        0
    };
    at_k + below
}

/// `gcsim codes` output for a matmul code: the configuration and its row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatmulReport {
    /// The run's configuration.
    pub config: super::export::CodesConfig,
    /// One row.
    pub rows: Vec<MatmulRow>,
}

/// What the condition numbers and errors of [`MatmulRow`] are.
pub const MATMUL_DEFINITIONS: &str = "E = [x_i^e] (n x K, or the Khatri-Rao rows for gaussian); a set F decodes when the product it decodes with the least-squares D of D*E_F ~ T (T selecting the pq coefficients that are the blocks of C) is within product_tolerance of A*B; condition = sigma_max/sigma_r of E_F; product_error = |C_decoded - A*B|_F / |A*B|_F for random normal A, B";

impl crate::export::Export for MatmulReport {
    type Row = MatmulRow;

    fn rows(&self) -> &[MatmulRow] {
        &self.rows
    }

    fn write_table(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let sci = |x: f64| if x == 0.0 { "0".into() } else { format!("{x:.3e}") };
        let header = [
            "scheme",
            "points",
            "n",
            "p",
            "m",
            "q",
            "k",
            "sets",
            "checked",
            "decodable",
            "below_k",
            "median_cond",
            "max_cond",
            "product_error",
            "result",
        ];
        let c = &self.config;
        writeln!(out, "# gcsim codes  limit={}  seed={}", c.limit, c.seed)?;
        writeln!(out, "# {}", c.definitions)?;
        if let Some(r) = self.rows.first() {
            writeln!(
                out,
                "# decodable: the set's decoded product within relative error {:e} of A*B; product_error: the largest over {} random sets of k workers",
                r.product_tolerance, r.product_sets
            )?;
        }
        let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
        for r in &self.rows {
            rows.push(vec![
                r.scheme.name().into(),
                r.generator.name().into(),
                r.n.to_string(),
                r.p.to_string(),
                r.m.to_string(),
                r.q.to_string(),
                r.k.to_string(),
                if r.sets_total < 1e6 {
                    format!("{}", r.sets_total)
                } else {
                    format!("{:.3e}", r.sets_total)
                },
                format!("{}{}", r.sets_checked, if r.exhaustive { "" } else { " (sample)" }),
                super::export::fraction(r.decodable_fraction),
                super::export::fraction(r.below_threshold_fraction),
                sci(r.median_condition),
                sci(r.max_condition),
                sci(r.product_error),
                if r.pass { "ok" } else { "FAIL" }.into(),
            ]);
        }
        crate::export::write_aligned(&rows, 2, out)
    }
}

#[cfg(test)]
mod tests;
