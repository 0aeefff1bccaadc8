//! Real encoding matrices and least-squares decoders for the coded schemes.
//!
//! Every scheme is written as an encoding matrix B (n workers × c columns)
//! and a target matrix T (t × c): worker i sends Σ_j B\[i, j\]·p_j, where the
//! p_j are the per-column payloads, and the master, from the messages of a
//! set F of finished workers, needs T·p. It succeeds exactly when T lies in
//! the row space of B_F (the rows of B in F): then A·B_F = T for a decoding
//! matrix A (t × |F|) and A·(B_F·p) = T·p.
//!
//! | scheme | B | T | construction |
//! |---|---|---|---|
//! | `uncoded`, `ignore` | I_n | 1ᵀ (1 × n) | none: worker i sends its own partial gradient |
//! | `frc` | n × n, block diagonal with (s+1) × (s+1) blocks of ones | 1ᵀ | Tandon et al. 2017, §4.1 |
//! | `crc` | n × n, row i supported on the partitions i, …, i+s (mod n) | 1ᵀ | Tandon et al. 2017, §4.2, Algorithm 2, rows scaled |
//! | `comm-efficient` | n × nm, column j·m+u for block u of partition j | m × nm, T\[u, j·m+u\] = 1 | Ye & Abbe 2018; Kadhe et al. 2020 |
//! | `mds` | n × k generator | I_k | Lee et al. 2017 (coded matrix–vector) |
//! | `approx-regular` | n × n, a random d-regular bipartite graph's adjacency / d | 1ᵀ | Charles, Papailiopoulos & Ellenberg 2017 |
//! | `custom` | the user's n × P matrix | 1ᵀ (1 × P) | `--code FILE` |
//!
//! **crc** (Tandon et al. 2017, Algorithm 2). Draw H ∈ ℝ^{s×n} with i.i.d.
//! standard normal entries, then replace its last column by minus the sum of
//! the others, so that H·1 = 0. Row i of B has B\[i, i\] = 1 and, on the s
//! partitions J = {i+1, …, i+s} (mod n), the solution x of H\[:, J\]·x =
//! −H\[:, i\]; so H·B\[i, :\]ᵀ = 0 and every row lies in the (n−s)-dimensional
//! null space of H, which contains 1. With probability one any n−s rows are
//! independent, hence span that null space and so 1ᵀ.
//!
//! **comm-efficient** (Ye & Abbe 2018, §3; in the general-generator form of
//! Kadhe et al. 2020, §III). Each partial gradient g_j is cut into m
//! coordinate blocks g_j^(1), …, g_j^(m); worker i holds the s+m partitions
//! i, …, i+s+m−1 (mod n) and sends one block-sized vector. Let r = n−s and G
//! an r × n generator whose every r × r column-submatrix is invertible (an MDS
//! generator: i.i.d. standard normal entries, as Kadhe et al. propose for its
//! conditioning, or the Vandermonde G\[t, i\] = x_i^t of Ye & Abbe's
//! polynomial code). Worker i sends f_i = Σ_t G\[t, i\]·c_t for virtual
//! symbols c = Σ_j M_j·(g_j^(1), …, g_j^(m)), where M_j (r × m) has its last
//! m rows equal to I_m and its first r−m rows Z_j chosen so that M_jᵀ·G\[:, N_j\]
//! = 0, N_j being the r−m workers that do not hold partition j:
//! Z_j = −(G\[:r−m, N_j\]ᵀ)⁻¹·G\[r−m:, N_j\]ᵀ. Partition j then contributes
//! nothing to the workers without it, and the last m virtual symbols are the
//! m blocks of the full gradient. Hence B\[i, j·m+u\] = (G\[:, i\]ᵀ·M_j)\[u\].
//! Any r workers give G_F invertible and recover every c_t.
//!
//! **Row scaling.** The crc and comm-efficient rows are then scaled to unit
//! norm. A worker scaling its message changes nothing in what can be decoded,
//! and row equilibration brings κ(B_F) within a factor √|F| of its best over
//! all row scalings (van der Sluis 1969); for crc at n = 50, s = 5 it lowers
//! the median κ(B_F) about eighty-fold.
//!
//! **mds** (Lee et al. 2017). The data matrix is cut into k row blocks X_j;
//! worker i computes (Σ_j G\[i, j\]·X_j)·w for an n × k generator G (i.i.d.
//! standard normal, or the Vandermonde G\[i, j\] = x_i^j); any k workers
//! recover every X_j·w (T = I_k).
//!
//! Vandermonde nodes are the cell midpoints x_i = −1 + (2i+1)/n of [−1, 1]:
//! distinct, bounded by one so no power overflows, and the classic real
//! choice whose conditioning grows exponentially with the dimension (Gautschi
//! 1975 shows no real nodes avoid that).
//!
//! **Decoding.** A = T·B_F⁺, the minimum-norm least-squares solution, from the
//! singular value decomposition of B_F with singular values below
//! σ_max·max(|F|, c)·ε treated as zero (the LAPACK / NumPy rank rule). The
//! residual is ‖A·B_F − T‖_F / ‖T‖_F, computed from A as float64 decoding
//! would use it. The condition number is σ_max/σ_r over the r singular values
//! above that threshold: the amplification of message errors by the decoder
//! on the row space of B_F; it equals the usual 2-norm condition number when
//! B_F has full rank (frc, or crc with more than n−s workers, have repeated
//! or dependent rows, whose usual condition number is infinite although
//! decoding is exact). See [`TOLERANCE`] for when a set is decodable.

pub mod check;
pub mod custom;
mod decode;
pub mod export;
mod fast;
mod full;
pub mod matmul;
mod prefix;
mod surely;

use faer::Mat;
use thiserror::Error;

use crate::encoding::Encoding;
use crate::param::{Described, Naming, Param, keys};
use crate::scheme::{Construction, Scheme, SchemeKind};

pub use decode::Decoding;

/// A finished set is decodable when its relative residual
/// ‖A·B_F − T‖_F / ‖T‖_F is below this.
///
/// Why 1e-9: a set that cannot decode misses T by a structural amount (frc
/// missing a group: at least √((s+1)/n); `ignore`: √(stragglers/n)), far above
/// it; a set that can decode reaches about ε·κ(B_F) ≈ 2.2e-16·κ in float64.
/// So the verdict is unambiguous while κ(B_F) stays below about 10⁶, and a
/// relative error of 1e-9 in a gradient is far below the sampling noise of
/// stochastic gradient descent. Past κ ≈ 10⁶ a decodable set can be reported
/// undecodable: float64 decoding of that code is then no longer trustworthy,
/// which is what the verdict should say.
pub const TOLERANCE: f64 = 1e-9;

/// The largest n for which codes are built (B has n·m columns and is dense).
pub const MAX_CODE_N: usize = 2000;

pub use crate::encoding::Generator;

/// Why a code cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", self.describe(&keys))]
pub enum CodeError {
    /// A generator was asked of a scheme whose construction has none.
    NoGenerator {
        /// The scheme.
        scheme: SchemeKind,
        /// The generator asked for.
        generator: &'static str,
    },
    /// n above [`MAX_CODE_N`].
    TooLarge {
        /// The number of workers.
        n: usize,
    },
    /// A custom scheme asked of a constructor: its matrix is the user's
    /// (see [`Code::custom`]).
    Custom,
    /// A strategy whose results are sent uncoded: its timeline is not a code.
    NotACode {
        /// The scheme.
        scheme: SchemeKind,
    },
    /// A matrix-multiplication code: its real code is [`matmul::MatmulCode`],
    /// and the simulation decodes it at its threshold.
    Matmul {
        /// The scheme.
        scheme: SchemeKind,
    },
    /// A partial-straggler code, whose coded part is frc's or crc's code.
    PartOf {
        /// The scheme.
        scheme: SchemeKind,
        /// The code of its coded part.
        code: SchemeKind,
    },
    /// A random draw produced a singular system (probability zero in exact
    /// arithmetic); another seed avoids it.
    Singular {
        /// The scheme.
        scheme: SchemeKind,
        /// The seed.
        seed: u64,
    },
}

/// An encoding matrix with its decoding target, for one scheme.
#[derive(Debug, Clone)]
pub struct Code {
    scheme: Scheme,
    generator: Option<Generator>,
    b: Mat<f64>,
    target: Mat<f64>,
    /// B's rows, for the decodable-prefix pass: see [`Rows`].
    rows: Rows,
    /// What is decided once about the set of all workers (`full.rs`).
    full: full::Shared,
}

/// B's rows as the pass reads them: one after another in memory (B itself
/// is stored by columns, so a row of it is read with a stride of n), and
/// each row's nonzero entries as (column, value).
#[derive(Debug, Clone)]
pub(crate) struct Rows {
    /// The columns c.
    cols: usize,
    /// Row i is `dense[i·c..(i + 1)·c]`.
    dense: Vec<f64>,
    /// Row i's nonzeros are `nonzeros[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    nonzeros: Vec<(usize, f64)>,
}

impl Rows {
    fn of(b: &Mat<f64>) -> Self {
        let (mut dense, mut starts, mut nonzeros) = (Vec::with_capacity(b.nrows() * b.ncols()), vec![0], Vec::new());
        for i in 0..b.nrows() {
            for (j, &x) in b.row(i).iter().enumerate() {
                dense.push(x);
                if x != 0.0 {
                    nonzeros.push((j, x));
                }
            }
            starts.push(nonzeros.len());
        }
        Rows {
            cols: b.ncols(),
            dense,
            starts,
            nonzeros,
        }
    }

    /// Row i of B.
    pub(crate) fn dense(&self, i: usize) -> &[f64] {
        &self.dense[i * self.cols..(i + 1) * self.cols]
    }

    /// Row i's nonzero entries as (column, value), by column.
    pub(crate) fn nonzeros(&self, i: usize) -> &[(usize, f64)] {
        &self.nonzeros[self.starts[i]..self.starts[i + 1]]
    }
}

impl Described for CodeError {
    fn describe(&self, name: Naming) -> String {
        match self {
            CodeError::NoGenerator { scheme, generator } => format!(
                "{} {generator} does not apply to {scheme}; only comm-efficient and mds take a generator",
                name(Param::Generator)
            ),
            CodeError::TooLarge { n } => format!(
                "{} {n} is too large to build a dense encoding matrix; accepted: 1..{MAX_CODE_N}",
                name(Param::N)
            ),
            CodeError::Custom => format!("custom codes are read from {} FILE, not constructed", name(Param::Code)),
            CodeError::NotACode { scheme } => format!(
                "{scheme} sends uncoded results and has no encoding matrix; codes builds {}",
                SchemeKind::listed(
                    SchemeKind::ALL
                        .into_iter()
                        // A deadline is not a code: codes takes no --timeout.
                        .filter(|k| {
                            let facts = k.facts();
                            facts.construction == Construction::Matrix && !facts.reads.contains(&Param::Timeout)
                        })
                )
            ),
            CodeError::Matmul { scheme } => format!(
                "{scheme} is a matrix-multiplication code, decoded at its threshold k ({} rank does not apply); check its real code with gcsim codes --scheme {scheme}",
                name(Param::Decoder)
            ),
            CodeError::PartOf { scheme, code } => {
                format!(
                    "{scheme}'s coded part is {code}'s code at the same s; check it with gcsim codes --scheme {code}"
                )
            }
            CodeError::Singular { scheme, seed } => format!(
                "the {scheme} construction drew a singular system at seed {seed}; try another {}",
                name(Param::Seed)
            ),
        }
    }
}

impl CodeError {
    /// Why `codes` builds no matrix for `kind`, where it builds none: the
    /// strategies send uncoded results, and the partial-straggler codes'
    /// coded part is frc's or crc's code.
    pub fn not_a_code(kind: SchemeKind) -> Option<Self> {
        match kind.facts().construction {
            Construction::Matrix => None,
            Construction::Uncoded => Some(CodeError::NotACode { scheme: kind }),
            Construction::Matmul => Some(CodeError::Matmul { scheme: kind }),
            Construction::PartOf(code) => Some(CodeError::PartOf { scheme: kind, code }),
        }
    }
}

impl Code {
    /// The code of `scheme`, with a Gaussian generator where the construction
    /// takes one; `seed` fixes the random matrices (crc, comm-efficient, mds).
    pub fn new(scheme: &Scheme, seed: u64) -> Result<Self, CodeError> {
        let generator = scheme.kind().facts().generator.then_some(Generator::Gaussian);
        Self::build(scheme, generator, seed)
    }

    /// The code of `scheme` with the given generator (comm-efficient and mds
    /// only).
    pub fn with_generator(scheme: &Scheme, generator: Generator, seed: u64) -> Result<Self, CodeError> {
        if !scheme.kind().facts().generator {
            return Err(CodeError::NoGenerator {
                scheme: scheme.kind(),
                generator: generator.name(),
            });
        }
        Self::build(scheme, Some(generator), seed)
    }

    fn build(scheme: &Scheme, generator: Option<Generator>, seed: u64) -> Result<Self, CodeError> {
        let n = scheme.n();
        if n > MAX_CODE_N {
            return Err(CodeError::TooLarge { n });
        }
        let singular = || CodeError::Singular {
            scheme: scheme.kind(),
            seed,
        };
        let gen_ = generator.unwrap_or(Generator::Gaussian);
        let (b, target) = match scheme.encoding(gen_, seed) {
            Encoding::Built { b, target } => (b, target),
            Encoding::Singular => return Err(singular()),
            Encoding::FromFile => return Err(CodeError::Custom),
            Encoding::NotACode => {
                return Err(CodeError::not_a_code(scheme.kind()).expect("a scheme without an encoding is not a code"));
            }
        };
        Ok(Self {
            scheme: *scheme,
            generator,
            rows: Rows::of(&b),
            b,
            target,
            full: full::Shared::default(),
        })
    }

    /// A user's encoding matrix `b` (n workers × P partitions) as the code
    /// of `scheme` (built by [`Scheme::custom`] from its shape): the master
    /// needs the sum of the P partial gradients, T = 1ᵀ.
    ///
    /// # Panics
    /// If `scheme` is not custom or its shape is not `b`'s.
    pub fn custom(scheme: &Scheme, b: Mat<f64>) -> Self {
        Self::custom_with(scheme, b, full::Shared::default())
    }

    /// The code of the user's matrix `m` ([`Code::custom`]), sharing what
    /// is decided once about all its workers with every code built from
    /// `m`: the study's check that it decodes, and each of its schemes.
    pub(crate) fn of_custom(scheme: &Scheme, m: &custom::CustomMatrix) -> Self {
        Self::custom_with(scheme, m.b.clone(), m.full.clone())
    }

    fn custom_with(scheme: &Scheme, b: Mat<f64>, full: full::Shared) -> Self {
        assert!(
            scheme.kind() == SchemeKind::Custom && scheme.n() == b.nrows() && scheme.partitions() == b.ncols(),
            "a custom scheme is built from its matrix's shape"
        );
        let target = Mat::full(1, b.ncols(), 1.0);
        Self {
            scheme: *scheme,
            generator: None,
            rows: Rows::of(&b),
            b,
            target,
            full,
        }
    }

    /// The scheme this code implements.
    pub fn scheme(&self) -> &Scheme {
        &self.scheme
    }

    /// The generator, for comm-efficient and mds.
    pub fn generator(&self) -> Option<Generator> {
        self.generator
    }

    /// The encoding matrix B (n × c): row i is worker i's combination of the
    /// column payloads.
    pub fn encoding(&self) -> &Mat<f64> {
        &self.b
    }

    /// B's rows, for the pass.
    pub(crate) fn rows(&self) -> &Rows {
        &self.rows
    }

    /// The target T (t × c): the master needs T·p.
    pub fn target(&self) -> &Mat<f64> {
        &self.target
    }

    /// Decoding coefficients, residual, condition number and verdict for the
    /// finished workers `finished` (indices 0..n, any order, no repeats).
    ///
    /// Cost: one SVD of the |F| × c matrix B_F, O(|F|·c·min(|F|, c)) (about
    /// 10 ms for 180 × 200). From 512 rows and columns on, B_F is factorised
    /// block by block where it is block diagonal (frc), else by divide and
    /// conquer, and the reference SVD is redone only where that decoding's
    /// verdict or rank is within a margin of its threshold (`fast.rs`).
    ///
    /// # Panics
    /// If an index is n or more.
    pub fn decode(&self, finished: &[usize]) -> Decoding {
        decode::decode(&self.b, &self.target, finished)
    }

    /// Whether the master can decode from `finished`: the relative residual
    /// is below [`TOLERANCE`]. Same cost as [`Code::decode`].
    pub fn is_decodable(&self, finished: &[usize]) -> bool {
        self.decode(finished).decodable
    }

    /// Whether the master can decode from all n workers, by
    /// [`Code::is_decodable`] on them in index order; decided once for the
    /// code and its copies.
    pub fn decodes_from_all(&self) -> bool {
        self.full.verdict(self).0
    }
}

pub use crate::scheme::ignore_residual;

#[cfg(test)]
mod tests;
