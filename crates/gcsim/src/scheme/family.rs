//! Every scheme, registered once. Each family of schemes is one module
//! below, holding for each of its schemes the data that fixes it (a struct:
//! `Crc { s }`, `Mds { k }`, `Timeout { deadline }`), its [`Facts`] (name,
//! help line, the parameters it reads, its sweep lists, its plan search,
//! its figure style, its builder from a user's parameters) and its [`Def`]
//! (threshold, load, message, rule, exactness, timeline, parameters,
//! name in output). This file lists them: [`Shape`], [`Shape::def`] and
//! [`SchemeKind::facts`] are exhaustive matches, so a new scheme does not
//! compile until it says each of these.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{Construction, Facts, Params, Rule, Strategy};
use crate::encoding::{Encoding, Generator};

mod approx;
mod comm_efficient;
mod matmul;
mod mds;
mod partial;
mod plain;
mod repetition;
mod strategies;

pub use approx::{ApproxRegular, Custom, ErasureHead};
pub use comm_efficient::CommEfficient;
pub use matmul::{Entangled, MatDot, Polynomial};
pub use mds::Mds;
pub use partial::{Partial, PartialCrc, PartialFrc};
pub use plain::{Ignore, Timeout, Uncoded};
pub use repetition::{Crc, Frc, MultiMessage};
pub use strategies::{KAsync, KBatchAsync, KBatchSync, Speculative};

/// The closed set of schemes that `--scheme` accepts. The default, uncoded,
/// is the baseline every speedup is measured against (and lets result rows
/// have a `Default`, whose serialised header names their columns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchemeKind {
    /// Every worker computes its own share; the master waits for all n.
    #[default]
    Uncoded,
    /// Wait for the fastest n−s workers and drop the rest (inexact).
    Ignore,
    /// Fractional repetition gradient code.
    Frc,
    /// Cyclic repetition gradient code.
    Crc,
    /// Communication-efficient gradient code with message size 1/m.
    CommEfficient,
    /// MDS-coded matrix–vector multiplication (linear models).
    Mds,
    /// Approximate gradient coding on a random d-regular bipartite graph
    /// (Charles, Papailiopoulos & Ellenberg 2017): wait for n−s, decode by
    /// least squares.
    ApproxRegular,
    /// A user-supplied encoding matrix.
    Custom,
    /// The deadline of synchronous data-parallel training: wait for all n
    /// workers until time T, then proceed with those that have arrived
    /// (with the first to arrive if none has; inexact).
    Timeout,
    /// Speculative copies (the MapReduce and Spark rule): once a share of
    /// the tasks is done, the unfinished ones are relaunched on idle workers.
    Speculative,
    /// K-batch-sync SGD (Dutta et al. 2018): workers compute mini-batches
    /// back to back; the iteration ends at the K-th mini-batch in all.
    KBatchSync,
    /// The cyclic placement of crc, each partition's gradient sent as soon
    /// as it is computed (Ozfatura, Gündüz & Ulukus 2019).
    MultiMessage,
    /// K-async SGD (Dutta et al. 2018): an update from the first K
    /// gradients of distinct workers; the others go on with a stale model.
    KAsync,
    /// K-batch-async SGD (Dutta et al. 2018): an update from any K
    /// mini-batches; every worker computes back to back on the model it last
    /// pulled.
    KBatchAsync,
    /// Partial stragglers with frc's placement (Tandon et al. 2017, §5):
    /// each worker's own partitions uncoded, then frc's coded part.
    PartialFrc,
    /// Partial stragglers with crc's placement (Tandon et al. 2017, §5).
    PartialCrc,
    /// Polynomial code for C = A·B (Yu, Maddah-Ali & Avestimehr 2017): A in
    /// p row blocks, B in q column blocks; any pq workers suffice.
    Polynomial,
    /// MatDot code for C = A·B (Dutta et al. 2019): the inner dimension in
    /// p blocks; any 2p − 1 workers suffice, each sending a full-size C.
    #[serde(rename = "matdot")]
    MatDot,
    /// Entangled polynomial code for C = A·B (Yu, Maddah-Ali & Avestimehr
    /// 2020): A in p × m blocks, B in m × q; any pmq + m − 1 suffice.
    Entangled,
    /// ErasureHead (Wang, Charles & Papailiopoulos 2019): frc's groups,
    /// wait for n−s, decode the groups heard from.
    #[serde(rename = "erasurehead")]
    ErasureHead,
}

impl SchemeKind {
    /// Every scheme, in the order `--help` lists them.
    pub const ALL: [SchemeKind; 20] = [
        SchemeKind::Uncoded,
        SchemeKind::Ignore,
        SchemeKind::Frc,
        SchemeKind::Crc,
        SchemeKind::CommEfficient,
        SchemeKind::Mds,
        SchemeKind::ApproxRegular,
        SchemeKind::Custom,
        SchemeKind::ErasureHead,
        SchemeKind::Timeout,
        SchemeKind::Speculative,
        SchemeKind::KBatchSync,
        SchemeKind::MultiMessage,
        SchemeKind::KAsync,
        SchemeKind::KBatchAsync,
        SchemeKind::PartialFrc,
        SchemeKind::PartialCrc,
        SchemeKind::Polynomial,
        SchemeKind::MatDot,
        SchemeKind::Entangled,
    ];

    /// Whether the scheme codes a matrix-matrix product (polynomial,
    /// matdot, entangled): a k-of-n rule whose load and message follow the
    /// split.
    pub fn is_matmul(self) -> bool {
        self.facts().construction == Construction::Matmul
    }

    /// Whether the scheme encodes only linear computations, so that it
    /// cannot encode the gradient of a nonlinear model (see
    /// [`super::Facts::linear_only`]).
    pub fn is_linear_only(self) -> bool {
        self.facts().linear_only
    }

    /// The name used on the command line and in output.
    pub fn name(self) -> &'static str {
        self.facts().name
    }
}

impl fmt::Display for SchemeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SchemeKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|k| k.name()).collect();
            format!("unknown scheme `{s}`; accepted: {}", names.join(", "))
        })
    }
}

/// What a scheme is, given its data and the cluster's n workers.
pub trait Def: fmt::Debug {
    /// The guaranteed threshold k: a number of finished workers that
    /// always suffices. The tolerance s is n − k.
    fn threshold(&self, n: usize) -> usize;
    /// Work per worker, in units of the uncoded share (1/n of the data).
    fn load(&self, n: usize) -> f64;
    /// Size of one worker's message, as a fraction of one full gradient.
    fn message(&self) -> f64 {
        1.0
    }
    /// Whether the decoded gradient is the exact full gradient.
    fn exact_gradient(&self) -> bool;
    /// When the master can decode.
    fn rule(&self, n: usize) -> Rule {
        Rule::KOfN(self.threshold(n))
    }
    /// The timeline, where it is not a recovery rule over one message per
    /// worker.
    fn strategy(&self) -> Option<Strategy> {
        None
    }
    /// Its encoding matrix and decoding target, where it is a gradient
    /// code (`generator` and `seed` fix the random constructions).
    fn encoding(&self, n: usize, generator: Generator, seed: u64) -> Encoding {
        let _ = (n, generator, seed);
        Encoding::NotACode
    }
    /// The parameters that rebuild it.
    fn params(&self) -> Params;
    /// Its name and parameters in output, e.g. `crc s=3`.
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// A scheme's data: one variant per scheme, holding what fixes it and
/// nothing else.
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)]
pub enum Shape {
    Uncoded(Uncoded),
    Ignore(Ignore),
    Frc(Frc),
    Crc(Crc),
    CommEfficient(CommEfficient),
    Mds(Mds),
    ApproxRegular(ApproxRegular),
    Custom(Custom),
    ErasureHead(ErasureHead),
    Timeout(Timeout),
    Speculative(Speculative),
    KBatchSync(KBatchSync),
    MultiMessage(MultiMessage),
    KAsync(KAsync),
    KBatchAsync(KBatchAsync),
    PartialFrc(PartialFrc),
    PartialCrc(PartialCrc),
    Polynomial(Polynomial),
    MatDot(MatDot),
    Entangled(Entangled),
}

/// What a few schemes carry beyond their threshold, load and rule, for the
/// rows, the figures and the study's checks. [`Shape::extras`] is one
/// exhaustive match: a new scheme says which of these it has.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Extras {
    /// comm-efficient's message split m.
    pub(crate) m: Option<usize>,
    /// approx-regular's graph degree, or a custom code's largest row support.
    pub(crate) d: Option<usize>,
    /// timeout's deadline T.
    pub(crate) deadline: Option<f64>,
    /// A custom code's columns, where they are not n.
    pub(crate) partitions: Option<usize>,
    /// A matmul code's split.
    pub(crate) split: Option<super::Split>,
    /// The partial-straggler codes' partitions per worker, L.
    pub(crate) parts: Option<usize>,
}

impl Shape {
    /// Its [`Extras`].
    pub(crate) fn extras(&self) -> Extras {
        use super::Split;
        let none = Extras::default();
        match *self {
            Shape::CommEfficient(c) => Extras { m: Some(c.m), ..none },
            Shape::ApproxRegular(a) => Extras { d: Some(a.d), ..none },
            Shape::Custom(c) => Extras {
                d: Some(c.max_support),
                partitions: Some(c.partitions),
                ..none
            },
            Shape::Timeout(t) => Extras {
                deadline: Some(t.deadline),
                ..none
            },
            Shape::Polynomial(Polynomial { p, q }) => Extras {
                split: Some(Split { p, q, m: 1 }),
                ..none
            },
            Shape::MatDot(MatDot { p }) => Extras {
                split: Some(Split { p: 1, q: 1, m: p }),
                ..none
            },
            Shape::Entangled(Entangled { p, m, q }) => Extras {
                split: Some(Split { p, q, m }),
                ..none
            },
            Shape::PartialFrc(Partial { parts, .. }) | Shape::PartialCrc(Partial { parts, .. }) => Extras {
                parts: Some(parts),
                ..none
            },
            // ErasureHead's group size is its own parameter, not a graph's
            // degree: it is in its name, not in `d`.
            Shape::Uncoded(_)
            | Shape::Ignore(_)
            | Shape::Frc(_)
            | Shape::Crc(_)
            | Shape::Mds(_)
            | Shape::ErasureHead(_)
            | Shape::Speculative(_)
            | Shape::KBatchSync(_)
            | Shape::MultiMessage(_)
            | Shape::KAsync(_)
            | Shape::KBatchAsync(_) => none,
        }
    }

    /// Which scheme it is.
    pub fn kind(&self) -> SchemeKind {
        match self {
            Shape::Uncoded(_) => SchemeKind::Uncoded,
            Shape::Ignore(_) => SchemeKind::Ignore,
            Shape::Frc(_) => SchemeKind::Frc,
            Shape::Crc(_) => SchemeKind::Crc,
            Shape::CommEfficient(_) => SchemeKind::CommEfficient,
            Shape::Mds(_) => SchemeKind::Mds,
            Shape::ApproxRegular(_) => SchemeKind::ApproxRegular,
            Shape::Custom(_) => SchemeKind::Custom,
            Shape::ErasureHead(_) => SchemeKind::ErasureHead,
            Shape::Timeout(_) => SchemeKind::Timeout,
            Shape::Speculative(_) => SchemeKind::Speculative,
            Shape::KBatchSync(_) => SchemeKind::KBatchSync,
            Shape::MultiMessage(_) => SchemeKind::MultiMessage,
            Shape::KAsync(_) => SchemeKind::KAsync,
            Shape::KBatchAsync(_) => SchemeKind::KBatchAsync,
            Shape::PartialFrc(_) => SchemeKind::PartialFrc,
            Shape::PartialCrc(_) => SchemeKind::PartialCrc,
            Shape::Polynomial(_) => SchemeKind::Polynomial,
            Shape::MatDot(_) => SchemeKind::MatDot,
            Shape::Entangled(_) => SchemeKind::Entangled,
        }
    }

    /// What it is (see [`Def`]).
    pub fn def(&self) -> &dyn Def {
        match self {
            Shape::Uncoded(d) => d,
            Shape::Ignore(d) => d,
            Shape::Frc(d) => d,
            Shape::Crc(d) => d,
            Shape::CommEfficient(d) => d,
            Shape::Mds(d) => d,
            Shape::ApproxRegular(d) => d,
            Shape::Custom(d) => d,
            Shape::ErasureHead(d) => d,
            Shape::Timeout(d) => d,
            Shape::Speculative(d) => d,
            Shape::KBatchSync(d) => d,
            Shape::MultiMessage(d) => d,
            Shape::KAsync(d) => d,
            Shape::KBatchAsync(d) => d,
            Shape::PartialFrc(d) => d,
            Shape::PartialCrc(d) => d,
            Shape::Polynomial(d) => d,
            Shape::MatDot(d) => d,
            Shape::Entangled(d) => d,
        }
    }
}

impl SchemeKind {
    /// What the scheme is (see [`Facts`]).
    pub const fn facts(self) -> Facts {
        match self {
            SchemeKind::Uncoded => plain::UNCODED,
            SchemeKind::Ignore => plain::IGNORE,
            SchemeKind::Frc => repetition::FRC,
            SchemeKind::Crc => repetition::CRC,
            SchemeKind::CommEfficient => comm_efficient::FACTS,
            SchemeKind::Mds => mds::FACTS,
            SchemeKind::ApproxRegular => approx::APPROX_REGULAR,
            SchemeKind::Custom => approx::CUSTOM,
            SchemeKind::ErasureHead => approx::ERASUREHEAD,
            SchemeKind::Timeout => plain::TIMEOUT,
            SchemeKind::Speculative => strategies::SPECULATIVE,
            SchemeKind::KBatchSync => strategies::K_BATCH_SYNC,
            SchemeKind::MultiMessage => repetition::MULTI_MESSAGE,
            SchemeKind::KAsync => strategies::K_ASYNC,
            SchemeKind::KBatchAsync => strategies::K_BATCH_ASYNC,
            SchemeKind::PartialFrc => partial::PARTIAL_FRC,
            SchemeKind::PartialCrc => partial::PARTIAL_CRC,
            SchemeKind::Polynomial => matmul::POLYNOMIAL,
            SchemeKind::MatDot => matmul::MATDOT,
            SchemeKind::Entangled => matmul::ENTANGLED,
        }
    }
}
