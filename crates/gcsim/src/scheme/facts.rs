//! What each scheme is, stated once: its name, its line of `--help`, the
//! parameters it reads, how `plan` treats it, what `gcsim codes` builds for
//! it and how many messages a worker sends. [`SchemeKind::facts`] fills one
//! [`Facts`] per scheme in one exhaustive match, so a new scheme cannot
//! compile without saying each of them, and every layer reads the facts
//! instead of keeping a list of its own.

use super::SchemeKind;
use crate::param::Param;

/// How `gcsim plan` treats a scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Planning {
    /// Searched when `--scheme` is not given: an exact gradient code with a
    /// tolerance to choose.
    Default,
    /// Searched only when `--scheme` names it: inexact, without an exact
    /// law (every candidate simulated), or a matrix-multiplication code.
    WhenNamed,
    /// Refused: its value trades time against the gradient's error, which
    /// a ranking by time alone cannot weigh.
    Refused,
}

/// What `gcsim codes` builds for a scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Construction {
    /// An encoding matrix whose decodings it checks.
    Matrix,
    /// None: the workers send uncoded results (the strategies).
    Uncoded,
    /// A matrix-multiplication code, decoded at its recovery threshold.
    Matmul,
    /// The code of another scheme at the same s (the partial-straggler
    /// codes' coded part).
    PartOf(SchemeKind),
}

/// Messages one worker sends per iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Messages {
    /// One.
    One,
    /// One per partition it holds: s + 1.
    PerPartition,
    /// Its own part's and its coded part's: two, or one where L = s + 1
    /// leaves no own part.
    OwnAndCoded,
}

/// The facts of one scheme (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The name `--scheme` takes and the output prints.
    pub name: &'static str,
    /// One line for `--help`: the literature name and the rule.
    pub help: &'static str,
    /// The parameters it reads besides n. A scheme that reads both k and s
    /// reads s only without k, as k = n − s.
    pub reads: &'static [Param],
    /// How `plan` treats it.
    pub planning: Planning,
    /// What `gcsim codes` builds for it.
    pub construction: Construction,
    /// How many messages a worker sends.
    pub messages: Messages,
    /// Whether it encodes only linear computations (a matrix-vector
    /// product, Lee et al. 2017), so not the gradient of a nonlinear model.
    pub linear_only: bool,
    /// Whether its construction takes a generator matrix (`--generator`:
    /// Gaussian by default, Vandermonde or Chebyshev).
    pub generator: bool,
}

impl Facts {
    /// Whether the scheme takes `param` where `given` tells which
    /// parameters are given: one it [reads](Self::reads), except s for a
    /// scheme that also reads k and is given k.
    pub fn takes(&self, param: Param, given: impl Fn(Param) -> bool) -> bool {
        let listed = self.reads.contains(&param);
        if param == Param::S && self.reads.contains(&Param::K) {
            return listed && !given(Param::K);
        }
        listed
    }
}

/// The facts of a gradient code; the few that differ override a field.
const fn code(name: &'static str, help: &'static str, reads: &'static [Param]) -> Facts {
    Facts {
        name,
        help,
        reads,
        planning: Planning::Default,
        construction: Construction::Matrix,
        messages: Messages::One,
        linear_only: false,
        generator: false,
    }
}

/// The facts of a scheme that sends uncoded results on a timeline of its
/// own (`plan` searches it only when named; `codes` builds nothing).
const fn strategy(name: &'static str, help: &'static str, reads: &'static [Param], messages: Messages) -> Facts {
    Facts {
        name,
        help,
        reads,
        planning: Planning::WhenNamed,
        construction: Construction::Uncoded,
        messages,
        linear_only: false,
        generator: false,
    }
}

/// The facts of a matrix-multiplication code.
const fn matmul(name: &'static str, help: &'static str, reads: &'static [Param]) -> Facts {
    Facts {
        name,
        help,
        reads,
        planning: Planning::WhenNamed,
        construction: Construction::Matmul,
        messages: Messages::One,
        linear_only: false,
        generator: false,
    }
}

/// The facts of a partial-straggler code whose coded part is `of`'s code.
const fn partial(name: &'static str, help: &'static str, of: SchemeKind) -> Facts {
    Facts {
        name,
        help,
        reads: &[Param::S, Param::Parts],
        planning: Planning::WhenNamed,
        construction: Construction::PartOf(of),
        messages: Messages::OwnAndCoded,
        linear_only: false,
        generator: false,
    }
}

/// Each scheme's line of `--help`.
mod help {
    pub const UNCODED: &str = "No coding: wait for all n workers";
    pub const IGNORE: &str = "Wait for the fastest n-s workers and drop the rest (inexact)";
    pub const FRC: &str = "Fractional repetition (Tandon et al. 2017): load s+1, s+1 must divide n";
    pub const CRC: &str = "Cyclic repetition (Tandon et al. 2017): load s+1, any n-s suffice";
    pub const COMM_EFFICIENT: &str = "Communication-efficient (Ye & Abbe 2018): load s+m, message 1/m, any n-s";
    pub const MDS: &str = "MDS-coded matrix-vector (Lee et al. 2017): load n/k, any k suffice";
    pub const APPROX_REGULAR: &str = "Approximate gradient coding (Charles et al. 2017): a random d-regular graph, load d, any n-s, least-squares decoding (inexact)";
    pub const CUSTOM: &str =
        "A user's encoding matrix (--code FILE): decoded by its rank condition, or from any n-s with --s (inexact)";
    pub const TIMEOUT: &str = "A deadline (--timeout T): wait for all n until time T, then proceed with those arrived, at least the first (inexact)";
    pub const SPECULATIVE: &str = "Speculative copies (MapReduce, Spark): after the fastest Q·n tasks, at F times that, unfinished tasks are relaunched on idle workers";
    pub const K_BATCH_SYNC: &str = "K-batch-sync SGD (Dutta et al. 2018): mini-batches back to back, the iteration ends at the K-th in all (--k, or --s as K=n-s; inexact)";
    pub const MULTI_MESSAGE: &str = "Multi-message (Ozfatura et al. 2019): crc's placement, each partition's gradient sent as it is done; every partition from some worker";
    pub const K_ASYNC: &str = "K-async SGD (Dutta et al. 2018): an update per K gradients of distinct workers, the others go on with a stale model (--k, or --s as K=n-s; asynchronous)";
    pub const K_BATCH_ASYNC: &str = "K-batch-async SGD (Dutta et al. 2018): an update per K mini-batches from any workers, each computing back to back (--k, or --s as K=n-s; asynchronous)";
    pub const PARTIAL_FRC: &str = "Partial stragglers with frc's placement (Tandon et al. 2017, sec. 5): --parts L per worker, L-s-1 own then s+1 coded; two messages each";
    pub const PARTIAL_CRC: &str = "Partial stragglers with crc's placement (Tandon et al. 2017, sec. 5): --parts L per worker, L-s-1 own then s+1 coded; two messages each";
    pub const POLYNOMIAL: &str = "Polynomial code for C=A*B (Yu et al. 2017): --p P row blocks of A, --q Q column blocks of B; any pq suffice, load n/(pq), message 1/(pq) of C";
    pub const MATDOT: &str =
        "MatDot code for C=A*B (Dutta et al. 2019): --p P inner blocks; any 2p-1 suffice, load n/p, message all of C";
    pub const ENTANGLED: &str = "Entangled polynomial code for C=A*B (Yu et al. 2020): --p P, --m M inner, --q Q; any pmq+m-1 suffice, load n/(pmq), message 1/(pq) of C";
}

impl SchemeKind {
    /// What the scheme is (see [`Facts`]).
    pub const fn facts(self) -> Facts {
        use Param::{D, K, M, P, Q, S, SpeculateAfter, SpeculateFactor, Timeout};
        match self {
            SchemeKind::Uncoded => code("uncoded", help::UNCODED, &[S]),
            SchemeKind::Ignore => Facts {
                planning: Planning::WhenNamed,
                ..code("ignore", help::IGNORE, &[S])
            },
            SchemeKind::Frc => code("frc", help::FRC, &[S]),
            SchemeKind::Crc => code("crc", help::CRC, &[S]),
            SchemeKind::CommEfficient => Facts {
                generator: true,
                ..code("comm-efficient", help::COMM_EFFICIENT, &[S, M])
            },
            SchemeKind::Mds => Facts {
                linear_only: true,
                generator: true,
                ..code("mds", help::MDS, &[K, S])
            },
            SchemeKind::ApproxRegular => Facts {
                planning: Planning::Refused,
                ..code("approx-regular", help::APPROX_REGULAR, &[S, D])
            },
            SchemeKind::Custom => Facts {
                planning: Planning::Refused,
                ..code("custom", help::CUSTOM, &[S, Param::Code])
            },
            SchemeKind::Timeout => Facts {
                planning: Planning::WhenNamed,
                ..code("timeout", help::TIMEOUT, &[Timeout])
            },
            SchemeKind::Speculative => strategy(
                "speculative",
                help::SPECULATIVE,
                &[SpeculateAfter, SpeculateFactor],
                Messages::One,
            ),
            SchemeKind::KBatchSync => strategy("k-batch-sync", help::K_BATCH_SYNC, &[K, S], Messages::One),
            SchemeKind::MultiMessage => strategy("multi-message", help::MULTI_MESSAGE, &[S], Messages::PerPartition),
            SchemeKind::KAsync => strategy("k-async", help::K_ASYNC, &[K, S], Messages::One),
            SchemeKind::KBatchAsync => strategy("k-batch-async", help::K_BATCH_ASYNC, &[K, S], Messages::One),
            SchemeKind::PartialFrc => partial("partial-frc", help::PARTIAL_FRC, SchemeKind::Frc),
            SchemeKind::PartialCrc => partial("partial-crc", help::PARTIAL_CRC, SchemeKind::Crc),
            SchemeKind::Polynomial => matmul("polynomial", help::POLYNOMIAL, &[P, Q]),
            SchemeKind::MatDot => matmul("matdot", help::MATDOT, &[P]),
            SchemeKind::Entangled => matmul("entangled", help::ENTANGLED, &[P, Q, M]),
        }
    }
}

impl SchemeKind {
    /// The schemes that read `param`, in the order `--help` lists them.
    pub fn readers(param: Param) -> impl Iterator<Item = SchemeKind> {
        SchemeKind::ALL
            .into_iter()
            .filter(move |k| k.facts().reads.contains(&param))
    }

    /// The names of the schemes that read `param`, as a sentence lists
    /// them: `crc`, `frc and crc`, `a, b and c`.
    pub fn readers_listed(param: Param) -> String {
        let names: Vec<&str> = Self::readers(param).map(SchemeKind::name).collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are unique, and the readers of a parameter are listed in
    /// `--help` order as a sentence.
    #[test]
    fn names_are_unique_and_lists_read_as_sentences() {
        let mut names: Vec<&str> = SchemeKind::ALL.iter().map(|k| k.facts().name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SchemeKind::ALL.len());
        assert_eq!(
            SchemeKind::readers_listed(Param::K),
            "mds, k-batch-sync, k-async and k-batch-async"
        );
        assert_eq!(SchemeKind::readers_listed(Param::Parts), "partial-frc and partial-crc");
        assert_eq!(SchemeKind::readers_listed(Param::D), "approx-regular");
        assert_eq!(SchemeKind::readers_listed(Param::N), "");
    }

    /// s is read without k by the schemes that read both, with it by none.
    #[test]
    fn s_is_read_as_k_only_without_k() {
        let k_given = |p: Param| p == Param::K;
        let nothing_given = |_: Param| false;
        for kind in SchemeKind::ALL {
            let f = kind.facts();
            let both = f.reads.contains(&Param::K) && f.reads.contains(&Param::S);
            assert_eq!(
                f.takes(Param::S, k_given),
                f.reads.contains(&Param::S) && !both,
                "{kind}"
            );
            assert_eq!(f.takes(Param::S, nothing_given), f.reads.contains(&Param::S), "{kind}");
        }
        assert!(SchemeKind::Mds.facts().takes(Param::S, nothing_given));
        assert!(!SchemeKind::Mds.facts().takes(Param::S, k_given));
    }
}
