//! When the master can decode: the recovery rules.

/// When the master can decode, as a function of which workers have finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Any `k` finished workers suffice.
    KOfN(usize),
    /// Workers form consecutive groups of `size` (worker i is in group
    /// i / size); one finished worker in every group suffices.
    Groups {
        /// Workers per group (s+1 for frc).
        size: usize,
    },
}

impl Rule {
    /// Whether the set of finished workers (`finished[i]` for worker i) lets
    /// the master decode. This is the definition every faster evaluation of
    /// the rule is tested against.
    pub fn decodable(&self, finished: &[bool]) -> bool {
        match *self {
            Rule::KOfN(k) => finished.iter().filter(|&&f| f).count() >= k,
            Rule::Groups { size } => finished.chunks(size).all(|g| g.iter().any(|&f| f)),
        }
    }
}
