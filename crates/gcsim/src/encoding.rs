//! The encoding matrices of the gradient codes: each scheme's
//! [`crate::scheme::Def::encoding`] builds its own from these
//! constructions (the references are in [`crate::codes`]).

use faer::Mat;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::linalg::{lu_solve, mul, select_columns};

/// How the random-free part of an MDS-style generator is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Generator {
    /// I.i.d. standard normal entries (Kadhe et al. 2020): well conditioned.
    Gaussian,
    /// Powers of the nodes x_i = −1 + (2i+1)/n: the classic polynomial code,
    /// ill conditioned as n grows.
    Vandermonde,
    /// Powers of the Chebyshev nodes x_i = cos((2i+1)π/(2n)): the same
    /// monomial code at nodes clustered towards ±1, whose condition number
    /// grows more slowly with n (still exponentially).
    Chebyshev,
}

crate::comm::named!(Generator, "generator", [Gaussian => "gaussian", Vandermonde => "vandermonde", Chebyshev => "chebyshev"]);

/// What a scheme's construction gives for its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Encoding {
    /// The encoding matrix B (workers × partitions) and the decoding target
    /// (the combinations of the partitions' gradients the master recovers:
    /// their sum, or their blocks).
    Built {
        /// B.
        b: Mat<f64>,
        /// The target.
        target: Mat<f64>,
    },
    /// A random construction that came out singular for this seed.
    Singular,
    /// A user's matrix, read from a file rather than built.
    FromFile,
    /// Not a gradient code: a strategy or a matrix-multiplication code.
    NotACode,
}

impl Encoding {
    /// B with the target of a code that recovers the sum of the n
    /// partitions' gradients.
    pub(crate) fn of_sum(b: Mat<f64>) -> Self {
        let target = Mat::full(1, b.ncols(), 1.0);
        Encoding::Built { b, target }
    }
}

/// A matrix of i.i.d. standard normal entries drawn in column-major order
/// from the Xoshiro256++ stream of `seed`.
pub fn gaussian(rows: usize, cols: usize, seed: u64) -> Mat<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    Mat::from_fn(rows, cols, |_, _| StandardNormal.sample(&mut rng))
}

/// The Vandermonde nodes: midpoints of n equal cells of [−1, 1].
pub(crate) fn node(i: usize, n: usize) -> f64 {
    -1.0 + (2 * i + 1) as f64 / n as f64
}

/// The Chebyshev nodes of the first kind: cos((2i+1)π/(2n)), i < n.
pub(crate) fn chebyshev_node(i: usize, n: usize) -> f64 {
    ((2 * i + 1) as f64 * std::f64::consts::PI / (2 * n) as f64).cos()
}

/// Fractional repetition: worker i sums the partitions of its group i / (s+1).
pub fn frc(n: usize, s: usize) -> Mat<f64> {
    Mat::from_fn(n, n, |i, j| if i / (s + 1) == j / (s + 1) { 1.0 } else { 0.0 })
}

/// Cyclic repetition (Tandon et al. 2017, Algorithm 2); `None` if a drawn
/// s × s system is singular.
pub fn crc(n: usize, s: usize, seed: u64) -> Option<Mat<f64>> {
    let mut h = gaussian(s, n, seed);
    for t in 0..s {
        let rest: f64 = (0..n - 1).map(|j| h[(t, j)]).sum();
        h[(t, n - 1)] = -rest;
    }
    let mut b = Mat::zeros(n, n);
    for i in 0..n {
        b[(i, i)] = 1.0;
        if s == 0 {
            continue;
        }
        let cols: Vec<usize> = (1..=s).map(|d| (i + d) % n).collect();
        let a = select_columns(&h, &cols);
        let rhs = Mat::from_fn(s, 1, |t, _| -h[(t, i)]);
        let x = lu_solve(&a, rhs)?;
        if !x.col_as_slice(0).iter().all(|v| v.is_finite()) {
            return None;
        }
        for (d, &j) in cols.iter().enumerate() {
            b[(i, j)] = x[(d, 0)];
        }
    }
    Some(equilibrate(b))
}

/// An r × n generator, column i for worker i.
fn generator(r: usize, n: usize, generator: Generator, seed: u64) -> Mat<f64> {
    match generator {
        Generator::Gaussian => gaussian(r, n, seed),
        Generator::Vandermonde => Mat::from_fn(r, n, |t, i| node(i, n).powi(t as i32)),
        Generator::Chebyshev => Mat::from_fn(r, n, |t, i| chebyshev_node(i, n).powi(t as i32)),
    }
}

/// Communication-efficient gradient code (Ye & Abbe 2018; Kadhe et al. 2020):
/// n × nm, column j·m+u for block u of partition j; `None` if some
/// (r−m) × (r−m) system is singular.
pub fn comm_efficient(n: usize, s: usize, m: usize, kind: Generator, seed: u64) -> Option<Mat<f64>> {
    let r = n - s;
    let g = generator(r, n, kind, seed);
    let mut b = Mat::zeros(n, n * m);
    let g_t = g.transpose().to_owned();
    for j in 0..n {
        // Worker i holds i, …, i+s+m−1, so partition j is held by j−(s+m−1), …, j.
        let held = |i: usize| (j + n - i) % n < s + m;
        let without: Vec<usize> = (0..n).filter(|&i| !held(i)).collect();
        let mut mj = Mat::zeros(r, m);
        for u in 0..m {
            mj[(r - m + u, u)] = 1.0;
        }
        if !without.is_empty() {
            let gn = select_columns(&g, &without);
            // G[:r−m, N_j]ᵀ·Z = −G[r−m:, N_j]ᵀ.
            let low = Mat::from_fn(without.len(), r - m, |i, t| gn[(t, i)]);
            let high = Mat::from_fn(without.len(), m, |i, u| -gn[(r - m + u, i)]);
            let z = lu_solve(&low, high)?;
            if !(0..m).all(|u| z.col_as_slice(u).iter().all(|v| v.is_finite())) {
                return None;
            }
            mj.subrows_mut(0, r - m).copy_from(&z);
        }
        let coeffs = mul(&g_t, &mj);
        for i in 0..n {
            for u in 0..m {
                b[(i, j * m + u)] = if held(i) { coeffs[(i, u)] } else { 0.0 };
            }
        }
    }
    Some(equilibrate(b))
}

/// The comm-efficient target: row u sums block u over the partitions.
pub(crate) fn block_sums(n: usize, m: usize) -> Mat<f64> {
    Mat::from_fn(m, n * m, |u, c| if c % m == u { 1.0 } else { 0.0 })
}

/// An n × k MDS generator for coded matrix–vector multiplication.
pub fn mds(n: usize, k: usize, kind: Generator, seed: u64) -> Mat<f64> {
    generator(k, n, kind, seed).transpose().to_owned()
}

/// Scales every row to unit 2-norm (its squares summed in column order).
pub(crate) fn equilibrate(mut b: Mat<f64>) -> Mat<f64> {
    for i in 0..b.nrows() {
        let norm = (0..b.ncols()).fold(0.0, |sum, j| sum + b[(i, j)] * b[(i, j)]).sqrt();
        if norm > 0.0 {
            (0..b.ncols()).for_each(|j| b[(i, j)] /= norm);
        }
    }
    b
}

/// Key of the approx-regular graph's stream (XORed with the seed).
const GRAPH_STREAM: u64 = 0x6_7A9F_D3E6_1B2C;

/// The 0/1 adjacency matrix (workers × partitions) of a random d-regular
/// bipartite graph on n + n vertices, in the permutation model: the union of
/// d uniformly random perfect matchings, each repaired to avoid the edges of
/// the previous ones by swapping partners with random workers (Charles,
/// Papailiopoulos & Ellenberg 2017 draw their graphs from this family). For
/// d > n/2 the complement of an (n−d)-regular graph is drawn instead, so a
/// matching always has at least n/2 free partners per worker to swap with.
///
/// # Panics
/// If d is 0 or above n.
pub(crate) fn regular_graph(n: usize, d: usize, seed: u64) -> Mat<f64> {
    use rand::RngExt;
    use rand::seq::SliceRandom;
    assert!(d >= 1 && d <= n, "1 <= d <= n");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ GRAPH_STREAM);
    let (degree, complement) = if 2 * d > n { (n - d, true) } else { (d, false) };
    let mut edge = vec![false; n * n];
    let mut perm: Vec<usize> = (0..n).collect();
    for _ in 0..degree {
        'matching: loop {
            perm.shuffle(&mut rng);
            for i in 0..n {
                if !edge[i * n + perm[i]] {
                    continue;
                }
                let swapped = (0..8 * n).find_map(|_| {
                    let j = rng.random_range(0..n);
                    (!edge[i * n + perm[j]] && !edge[j * n + perm[i]]).then_some(j)
                });
                match swapped {
                    Some(j) => perm.swap(i, j),
                    None => continue 'matching,
                }
            }
            break;
        }
        for (i, &j) in perm.iter().enumerate() {
            edge[i * n + j] = true;
        }
    }
    Mat::from_fn(n, n, |i, j| if edge[i * n + j] != complement { 1.0 } else { 0.0 })
}
