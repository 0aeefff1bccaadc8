//! The split of a matrix-multiplication code (C = A·B) and its recovery
//! threshold, computation share and message share (Yu, Maddah-Ali &
//! Avestimehr 2017 and 2020; Dutta et al. 2019).

/// How a matmul code splits C = A·B: A in `p` row blocks, B in `q` column
/// blocks, the inner dimension in `m` parts (polynomial: m = 1; matdot:
/// p = q = 1 and m its inner split).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Row blocks of A.
    pub p: usize,
    /// Column blocks of B.
    pub q: usize,
    /// Parts of the inner dimension.
    pub m: usize,
}

impl Split {
    /// The recovery threshold pmq + m − 1 (pq for polynomial, 2m − 1 for
    /// matdot): the number of coefficients of the product polynomial.
    pub fn threshold(&self) -> u128 {
        self.p as u128 * self.m as u128 * self.q as u128 + self.m as u128 - 1
    }

    /// A worker's share of the full product's arithmetic, 1/(pmq).
    pub(crate) fn compute_share(&self) -> f64 {
        1.0 / (self.p as f64 * self.m as f64 * self.q as f64)
    }

    /// A worker's message as a share of C, 1/(pq).
    pub(crate) fn message_share(&self) -> f64 {
        1.0 / (self.p as f64 * self.q as f64)
    }
}
