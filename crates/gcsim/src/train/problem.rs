//! The objective trained on a set of N rows:
//! f(w) = (1/N)·Σ_i ℓ(x_iᵀw, y_i) + (λ/2)‖w‖²,
//! least squares ℓ(z, y) = ½(z − y)², logistic ℓ(z, y) = log(1 + e^z) − y·z
//! with y ∈ {0, 1}; ℓ'(z, y) = z − y and σ(z) − y respectively.
//!
//! A gradient code's worker sends (1/N)·Σ_{i∈P} ∇ℓ_i(w) for its partitions P
//! (Tandon et al. 2017); an MDS-coded worker sends rows of X_P·w and the
//! master forms (1/N)·X_Pᵀℓ'(X_P·w, y) (Lee et al. 2017). f is
//! L-smooth with L = c·λ_max(XᵀX/N) + λ, c = 1 (least squares) or 1/4
//! (logistic, since σ' ≤ 1/4), so gradient descent converges with step 1/L.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use thiserror::Error;

use super::data::{DataError, Dataset, dot, sigmoid};

/// Power-iteration steps at most in [`Objective::smoothness`].
const POWER_STEPS: usize = 1000;

/// Relative residual ‖Av − θv‖/θ at which the power iteration stops.
const POWER_TOLERANCE: f64 = 1e-10;

/// How much larger, relatively, the second start's λ_max must be to replace
/// the first's in [`Objective::smoothness`]: far above the rounding of two
/// converged power iterations, far below a missed eigenvalue.
const START_DISAGREEMENT: f64 = 1e-9;

/// Distinct target values listed in [`DataError::TargetValues`].
const VALUES_SHOWN: usize = 5;

/// The model trained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// Linear regression with squared loss.
    LeastSquares,
    /// Logistic regression on a 0/1 target.
    Logistic,
}

/// A `--problem` value that names no problem.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown problem `{0}`; accepted: least-squares, logistic")]
pub struct UnknownProblem(pub String);

impl Problem {
    /// Every problem, in `--help` order.
    pub const ALL: [Problem; 2] = [Problem::LeastSquares, Problem::Logistic];

    /// The name `FromStr` reads: `least-squares` or `logistic`.
    pub fn name(self) -> &'static str {
        match self {
            Problem::LeastSquares => "least-squares",
            Problem::Logistic => "logistic",
        }
    }

    /// Checks and maps the targets of a split in place. Least squares takes
    /// any finite targets. Logistic regression needs exactly two distinct
    /// values over the training and test rows together: the smaller becomes
    /// 0, the larger 1.
    pub(crate) fn prepare_targets(self, train: &mut Dataset, test: &mut Dataset) -> Result<(), DataError> {
        if self == Problem::LeastSquares {
            return Ok(());
        }
        let mut values: Vec<f64> = train.targets.iter().chain(&test.targets).copied().collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        if values.len() != 2 {
            let mut shown: Vec<String> = values.iter().take(VALUES_SHOWN).map(f64::to_string).collect();
            if values.len() > VALUES_SHOWN {
                shown.push("...".to_string());
            }
            return Err(DataError::TargetValues {
                count: values.len(),
                values: shown.join(", "),
            });
        }
        let high = values[1];
        for y in train.targets.iter_mut().chain(test.targets.iter_mut()) {
            *y = if *y == high { 1.0 } else { 0.0 };
        }
        Ok(())
    }

    /// ℓ(z, y).
    #[inline]
    fn loss(self, z: f64, y: f64) -> f64 {
        match self {
            Problem::LeastSquares => 0.5 * (z - y) * (z - y),
            // softplus(z) = max(z, 0) + log(1 + e^{−|z|}), exact for any z.
            Problem::Logistic => z.max(0.0) + (-z.abs()).exp().ln_1p() - y * z,
        }
    }

    /// ∂ℓ/∂z at (z, y).
    #[inline]
    fn derivative(self, z: f64, y: f64) -> f64 {
        match self {
            Problem::LeastSquares => z - y,
            Problem::Logistic => sigmoid(z) - y,
        }
    }

    /// The bound on ∂²ℓ/∂z² in the smoothness constant.
    fn curvature(self) -> f64 {
        match self {
            Problem::LeastSquares => 1.0,
            Problem::Logistic => 0.25,
        }
    }
}

impl FromStr for Problem {
    type Err = UnknownProblem;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Problem::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProblem(s.to_string()))
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// f(w) for one problem, L2 weight λ and a training set of N rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Objective {
    problem: Problem,
    l2: f64,
    n_rows: usize,
}

impl Objective {
    /// The objective of `problem` with L2 weight `l2` on a training set of `rows` rows.
    ///
    /// # Panics
    /// If `l2` is negative or not finite, or `rows` is 0.
    pub fn new(problem: Problem, l2: f64, rows: usize) -> Self {
        assert!(l2.is_finite() && l2 >= 0.0, "l2 = {l2} is not a finite number >= 0");
        assert!(rows > 0, "an objective needs at least one training row");
        Objective {
            problem,
            l2,
            n_rows: rows,
        }
    }

    /// The problem.
    pub fn problem(&self) -> Problem {
        self.problem
    }

    /// The L2 weight λ.
    pub fn l2(&self) -> f64 {
        self.l2
    }

    /// N, the training rows the data terms are averaged over.
    pub fn rows(&self) -> usize {
        self.n_rows
    }

    /// Adds (1/N)·Σ_{i∈rows} ∇ℓ_i(w) into `grad`, without the L2 term: the
    /// partial gradient of one partition of the training rows. Costs
    /// 2·|rows|·d multiply-adds; allocates nothing.
    ///
    /// # Panics
    /// If `rows` runs past the data or `w`, `grad` are not of length d.
    pub fn add_partial_gradient(&self, data: &Dataset, rows: Range<usize>, w: &[f64], grad: &mut [f64]) {
        assert!(w.len() == data.d && grad.len() == data.d, "w and grad need d entries");
        let scale = 1.0 / self.n_rows as f64;
        for i in rows {
            let x = data.row(i);
            let g = scale * self.problem.derivative(dot(x, w), data.targets[i]);
            for (gj, xj) in grad.iter_mut().zip(x) {
                *gj += g * xj;
            }
        }
    }

    /// Adds (1/N)·X_Pᵀℓ'(z, y_P) into `grad` for the block P = `rows`, given
    /// its predictions z = X_P·w (the MDS path's decoded payload).
    ///
    /// # Panics
    /// If `z` is not of length |rows| or `grad` not of length d.
    pub(crate) fn add_gradient_from_predictions(
        &self,
        data: &Dataset,
        rows: Range<usize>,
        z: &[f64],
        grad: &mut [f64],
    ) {
        assert_eq!(z.len(), rows.len(), "one prediction per row");
        assert_eq!(grad.len(), data.d, "grad needs d entries");
        let scale = 1.0 / self.n_rows as f64;
        for (i, &zi) in rows.zip(z) {
            let g = scale * self.problem.derivative(zi, data.targets[i]);
            for (gj, xj) in grad.iter_mut().zip(data.row(i)) {
                *gj += g * xj;
            }
        }
    }

    /// Writes X_P·w for the block P = `rows` into `out`.
    ///
    /// # Panics
    /// If `out` is not of length |rows| or `w` not of length d.
    pub(crate) fn predictions(&self, data: &Dataset, rows: Range<usize>, w: &[f64], out: &mut [f64]) {
        assert_eq!(out.len(), rows.len(), "one prediction per row");
        assert_eq!(w.len(), data.d, "w needs d entries");
        for (o, i) in out.iter_mut().zip(rows) {
            *o = dot(data.row(i), w);
        }
    }

    /// f(w) on `data` with the data term averaged over `data`'s own rows
    /// (N when `data` is the training set) plus (λ/2)‖w‖². NaN without rows.
    pub fn loss(&self, data: &Dataset, w: &[f64]) -> f64 {
        assert_eq!(w.len(), data.d, "w needs d entries");
        let total: f64 = (0..data.rows())
            .map(|i| self.problem.loss(dot(data.row(i), w), data.targets[i]))
            .sum();
        total / data.rows() as f64 + 0.5 * self.l2 * dot(w, w)
    }

    /// Adds λw into `grad`.
    pub(crate) fn add_l2(&self, w: &[f64], grad: &mut [f64]) {
        for (g, wj) in grad.iter_mut().zip(w) {
            *g += self.l2 * wj;
        }
    }

    /// The smoothness constant L = c·λ_max(XᵀX/N) + λ of f on `data` (the
    /// training set; N = its rows), c = 1 for least squares and 1/4 for
    /// logistic. λ_max by power iteration from two starts (see
    /// `largest_eigenvalue`) on the smaller of the d×d matrix XᵀX/N and the
    /// N×N matrix XXᵀ/N, which have the same nonzero eigenvalues: costs
    /// N·min(N, d)·max(N, d) for the matrix and min(N, d)² a step, so 10
    /// rows of 20,000 features need a 10×10 matrix, not a 20,000×20,000 one.
    /// 0 only when X = 0 and λ = 0.
    pub fn smoothness(&self, data: &Dataset) -> f64 {
        let (n, d) = (data.rows(), data.d);
        if n == 0 || d == 0 {
            return self.l2;
        }
        let (gram, m) = if n < d {
            (row_gram(data), n)
        } else {
            (column_gram(data), d)
        };
        self.problem.curvature() * largest_eigenvalue(&gram, m) + self.l2
    }
}

/// XᵀX/N (d×d, row-major) of `data`'s N rows.
fn column_gram(data: &Dataset) -> Vec<f64> {
    let (n, d) = (data.rows(), data.d);
    let mut gram = vec![0.0; d * d];
    for i in 0..n {
        let x = data.row(i);
        for (j, &xj) in x.iter().enumerate() {
            let row = &mut gram[j * d..j * d + j + 1];
            for (g, &xk) in row.iter_mut().zip(x) {
                *g += xj * xk;
            }
        }
    }
    symmetrize(&mut gram, d, n);
    gram
}

/// XXᵀ/N (N×N, row-major): the rows' inner products.
fn row_gram(data: &Dataset) -> Vec<f64> {
    let n = data.rows();
    let mut gram = vec![0.0; n * n];
    for j in 0..n {
        for k in 0..=j {
            gram[j * n + k] = dot(data.row(j), data.row(k));
        }
    }
    symmetrize(&mut gram, n, n);
    gram
}

/// Divides the lower triangle of the m×m `gram` by `rows` and mirrors it.
fn symmetrize(gram: &mut [f64], m: usize, rows: usize) {
    for j in 0..m {
        for k in 0..=j {
            gram[j * m + k] /= rows as f64;
            gram[k * m + j] = gram[j * m + k];
        }
    }
}

/// The largest eigenvalue of the symmetric positive semi-definite m×m
/// `gram`: the larger of two power iterations, from the all-ones vector and
/// from a fixed pseudo-random one. One start is not enough: a start
/// orthogonal to the top eigenvector converges to a smaller eigenvalue, and
/// the all-ones vector is such a start whenever there are fewer rows than
/// features, since the standardised features are centred and so
/// XXᵀ/N·1 = 1 (the intercept's eigenvalue), whatever λ_max is. The
/// pseudo-random start's value is taken only when it is larger by more than
/// [`START_DISAGREEMENT`] relative, a gap the rounding of two converged
/// iterations does not open, so the value from the all-ones start, and every
/// step derived from it, is unchanged wherever that start was not unlucky.
/// Both are Rayleigh quotients, so neither exceeds λ_max.
fn largest_eigenvalue(gram: &[f64], m: usize) -> f64 {
    let ones = power_iteration(gram, m, vec![1.0; m]);
    let spread = power_iteration(gram, m, (0..m as u64).map(pseudo_random).collect());
    if spread > ones * (1.0 + START_DISAGREEMENT) {
        spread
    } else {
        ones
    }
}

/// The Rayleigh quotient θ of the m×m `gram` after power iteration from
/// `start` (not zero), until the residual ‖Av − θv‖ is below 10⁻¹⁰·θ or
/// after 1000 steps.
fn power_iteration(gram: &[f64], m: usize, start: Vec<f64>) -> f64 {
    let length = dot(&start, &start).sqrt();
    let mut v: Vec<f64> = start.iter().map(|x| x / length).collect();
    let mut av = vec![0.0; m];
    let mut theta = 0.0;
    for _ in 0..POWER_STEPS {
        for (j, a) in av.iter_mut().enumerate() {
            *a = dot(&gram[j * m..(j + 1) * m], &v);
        }
        theta = dot(&v, &av);
        let norm = dot(&av, &av).sqrt();
        if norm == 0.0 {
            break;
        }
        let residual: f64 = av.iter().zip(&v).map(|(a, x)| (a - theta * x).powi(2)).sum();
        for (x, a) in v.iter_mut().zip(&av) {
            *x = a / norm;
        }
        if residual.sqrt() <= POWER_TOLERANCE * theta {
            break;
        }
    }
    theta
}

/// Entry `j` of the second power-iteration start: SplitMix64 of j mapped to
/// [−1, 1), integer arithmetic so every platform starts from the same vector.
fn pseudo_random(j: u64) -> f64 {
    let mut z = j.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The test metric: the mean of (xᵀw − y)² for least squares, the share of
/// rows with (xᵀw > 0) == (y == 1) for logistic. NaN without rows.
pub fn metric(problem: Problem, data: &Dataset, w: &[f64]) -> f64 {
    assert_eq!(w.len(), data.d, "w needs d entries");
    let total: f64 = (0..data.rows())
        .map(|i| {
            let (z, y) = (dot(data.row(i), w), data.targets[i]);
            match problem {
                Problem::LeastSquares => (z - y) * (z - y),
                Problem::Logistic => f64::from(u8::from((z > 0.0) == (y == 1.0))),
            }
        })
        .sum();
    total / data.rows() as f64
}

/// The metric's column name: `test_mse` or `test_accuracy`.
pub(crate) fn metric_name(problem: Problem) -> &'static str {
    match problem {
        Problem::LeastSquares => "test_mse",
        Problem::Logistic => "test_accuracy",
    }
}

#[cfg(test)]
mod tests;
