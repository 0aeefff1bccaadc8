//! The parameters a user gives a scheme, and the shape of a user's code.

use crate::param::Param;

/// Parameters as a user gives them; which ones a scheme reads depends on it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Params {
    /// Straggler tolerance s.
    pub s: Option<usize>,
    /// Message split m (comm-efficient).
    pub m: Option<usize>,
    /// Recovery threshold k (mds).
    pub k: Option<usize>,
    /// Degree d of the regular graph (approx-regular).
    pub d: Option<usize>,
    /// The deadline T, in the time unit, after the iteration starts (timeout).
    pub timeout: Option<f64>,
    /// The share Q of tasks after which stragglers are copied (speculative).
    pub speculate_after: Option<f64>,
    /// The factor F: copies start at F·t_Q (speculative).
    pub speculate_factor: Option<f64>,
    /// Partitions per worker, L (partial-frc, partial-crc).
    pub parts: Option<usize>,
    /// Row blocks of A (polynomial, entangled), or the inner split (matdot).
    pub p: Option<usize>,
    /// Column blocks of B (polynomial, entangled).
    pub q: Option<usize>,
}

impl Params {
    /// The parameters a scheme may read, in the order a scheme's errors
    /// name them.
    pub(crate) const KEYS: [Param; 10] = [
        Param::S,
        Param::M,
        Param::K,
        Param::D,
        Param::Timeout,
        Param::SpeculateAfter,
        Param::SpeculateFactor,
        Param::Parts,
        Param::P,
        Param::Q,
    ];

    /// Whether `param` is given; false for a parameter no scheme reads.
    pub fn given(&self, param: Param) -> bool {
        match param {
            Param::S => self.s.is_some(),
            Param::M => self.m.is_some(),
            Param::K => self.k.is_some(),
            Param::D => self.d.is_some(),
            Param::Timeout => self.timeout.is_some(),
            Param::SpeculateAfter => self.speculate_after.is_some(),
            Param::SpeculateFactor => self.speculate_factor.is_some(),
            Param::Parts => self.parts.is_some(),
            Param::P => self.p.is_some(),
            Param::Q => self.q.is_some(),
            _ => false,
        }
    }
}

/// The shape of a user's encoding matrix, which is what a `custom` scheme
/// needs of it: the code itself is the study's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomShape {
    /// Rows: the workers.
    pub n: usize,
    /// Columns: the data partitions P.
    pub partitions: usize,
    /// The most nonzeros in any row: the largest number of partitions a
    /// worker stores.
    pub max_support: usize,
}

impl Params {
    /// Only s.
    pub(crate) fn with_s(s: usize) -> Self {
        Self {
            s: Some(s),
            ..Self::default()
        }
    }

    /// Only s and d.
    pub(crate) fn with_s_d(s: usize, d: usize) -> Self {
        Self {
            d: Some(d),
            ..Self::with_s(s)
        }
    }

    /// Only k.
    pub fn with_k(k: usize) -> Self {
        Self {
            k: Some(k),
            ..Self::default()
        }
    }
}
