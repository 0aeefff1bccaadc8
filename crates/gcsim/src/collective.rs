//! All-reduce collectives: clusters without a master.
//!
//! Under `--aggregation master` (the default) workers send their messages
//! to one master, as in the rest of the model. Under a collective the
//! participants sum their gradients among themselves; the sum starts when
//! every participant is ready and lasts the collective's α–β time.
//!
//! **Costs.** For p participants summing S bytes, with α the latency of one
//! message and β = 1/bandwidth the time per byte (the computation of the
//! sum, γ, is not charged):
//!
//! - ring (Patarasuk & Yuan 2009): 2(p−1)α + 2((p−1)/p)·S·β;
//! - recursive halving-doubling, Rabenseifner's algorithm (Thakur,
//!   Rabenseifner & Gropp 2005, the all-reduce section): 2·log₂p·α + 2((p−1)/p)·S·β where p
//!   is a power of two. Otherwise the p − p′ ranks above the largest power of
//!   two p′ ≤ p first hand their whole vector to a partner (α + S·β), the p′
//!   others run the algorithm, and the partners hand the result back
//!   (α + S·β), as MPICH does: 2·log₂p′·α + 2((p′−1)/p′)·S·β + 2(α + S·β);
//! - binomial tree, reduce then broadcast (Thakur et al. 2005):
//!   2·⌈log₂p⌉·(α + S·β);
//! - hierarchical with G ranks per node: a ring reduce-scatter inside each
//!   node, a ring all-reduce across the ⌈p/G⌉ nodes on S/G bytes, and a ring
//!   all-gather inside the node: 2(g−1)α + 2((g−1)/g)·S·β_intra +
//!   2(N−1)α + 2((N−1)/N)·(S/g)·β with g = min(G, p) and N = ⌈p/G⌉. Where
//!   p is not a multiple of G the fullest node (G ranks) sets the time.
//!
//! One participant sums nothing: its cost is 0.
//!
//! **Participants and agreement.** A scheme's participants are the set its
//! recovery rule waits for: all n for uncoded, the first k for a k-of-n rule
//! (ignore, crc, mds, comm-efficient), the first worker of each group for
//! frc. Where that set is not every rank, the participants first agree on
//! it with one collective of a bitmap (the algorithm's α terms among the p
//! participants, no bandwidth term), then each scales its coded message by
//! its decoding coefficient and the sum runs on the message's size
//! (comm-efficient sends S/m bytes). The ranks left out receive the sum
//! after the iteration; that transfer is not charged to it.
//!
//! **A deadline** (`timeout` T) sums the workers in when the master's
//! deadline would proceed: at min(T, X_(n)), or, where no worker is in by
//! T, at the first one's finish X_(1) (its sum among one rank costs
//! nothing). Its participants are the p workers in by then, a count that
//! varies from trial to trial, and each trial's collective costs that of
//! its own p (with the agreement where p < n).
//!
//! **Buckets** (`--buckets K`, as PyTorch DDP overlaps its all-reduce with
//! the backward pass): the gradient is split into K equal buckets, and a
//! rank produces bucket j once it has done the fraction j/K of its work.
//! Bucket j's collective starts when its participants have produced it and
//! bucket j − 1's collective has ended; each costs the agreement plus the
//! sum of S/K bytes, c. Participants finishing their work by time t have
//! all produced bucket j by (j/K)·t, so the iteration ends at
//! e_K = max over j of ((j/K)·t + (K − j + 1)·c), with t the time the
//! scheme's rule is met. K = 1 gives t + c.

use std::fmt;

use crate::scheme::Rule;

mod build;
mod parse;

pub use build::CollectiveError;
pub use parse::{parse_aggregations, parse_bandwidth};

/// The per-message latency α used where `--latency` is not given: 5 µs, the
/// order of one hop's latency over InfiniBand or NVLink as NCCL's
/// all-reduce tests measure it at small sizes. Fit yours with
/// `gcsim fit --nccl-tests`.
pub const DEFAULT_LATENCY: f64 = 5e-6;

/// Most gradient buckets (`--buckets`).
pub const MAX_BUCKETS: usize = 100_000;

/// An all-reduce algorithm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algorithm {
    /// Ring reduce-scatter then all-gather.
    Ring,
    /// Binomial-tree reduce then broadcast.
    Tree,
    /// Rabenseifner's recursive halving (reduce-scatter) and doubling (all-gather).
    HalvingDoubling,
    /// Ring inside each node, ring across nodes on a 1/G share.
    Hierarchical {
        /// Ranks per node, G.
        gpus_per_node: usize,
        /// Bandwidth between the ranks of one node, in bytes per second.
        intra_bandwidth: f64,
    },
}

/// How gradients are summed (`--aggregation`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Aggregation {
    /// Every worker sends to one master (the star of the rest of the model).
    #[default]
    Master,
    /// An all-reduce among the participants.
    Collective(Collective),
}

/// What one bucket's collective costs for one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BucketCost {
    /// A participant set of fixed size: the same cost in every trial.
    Fixed(f64),
    /// A deadline's participants, the workers in by it: a count that varies
    /// from trial to trial, costed by [`Collective::bucket_cost`] with its
    /// message size (see [`BucketCost::of`]).
    Counted {
        /// The message, in full gradients.
        message: f64,
    },
}

impl BucketCost {
    /// The cost among `p` participants of `n` ranks under `c`.
    #[inline]
    pub fn of(&self, c: &Collective, p: usize, n: usize) -> f64 {
        match *self {
            BucketCost::Fixed(cost) => cost,
            BucketCost::Counted { message } => c.bucket_cost(p, n, message),
        }
    }
}

/// An all-reduce collective and the network it runs on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collective {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// α: the latency of one message, in seconds.
    pub latency: f64,
    /// Each rank's link bandwidth, in bytes per second (β = 1/bandwidth).
    pub bandwidth: f64,
    /// S: the size of one full gradient, in bytes.
    pub gradient_bytes: f64,
    /// K: equal buckets the gradient is split into.
    pub buckets: usize,
    /// The study's time units in one second (1 for seconds, 1000 for ms).
    pub units_per_second: f64,
}

impl Algorithm {
    /// The name on the command line and in output.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Hierarchical { .. } => "hierarchical",
        }
    }

    /// The time in seconds of an all-reduce of `bytes` among `p` ranks,
    /// with per-message latency `latency` and link bandwidth `bandwidth`.
    pub fn cost(&self, p: usize, bytes: f64, latency: f64, bandwidth: f64) -> f64 {
        if p <= 1 {
            return 0.0;
        }
        if let Algorithm::Hierarchical {
            gpus_per_node,
            intra_bandwidth,
        } = *self
        {
            let g = gpus_per_node.min(p);
            let nodes = p.div_ceil(gpus_per_node);
            return Algorithm::Ring.cost(g, bytes, latency, intra_bandwidth)
                + Algorithm::Ring.cost(nodes, bytes / g as f64, latency, bandwidth);
        }
        let (a, b) = self.coefficients(p);
        a * latency + b * bytes / bandwidth
    }

    /// The coefficients (a, b) of the flat algorithms' cost a·α + b·S·β
    /// among `p` ranks (for the hierarchical one, those of a flat ring).
    pub fn coefficients(&self, p: usize) -> (f64, f64) {
        if p <= 1 {
            return (0.0, 0.0);
        }
        let share = |q: usize| (q - 1) as f64 / q as f64;
        match self {
            Algorithm::Ring | Algorithm::Hierarchical { .. } => (2.0 * (p - 1) as f64, 2.0 * share(p)),
            Algorithm::Tree => {
                let rounds = 2.0 * p.next_power_of_two().trailing_zeros() as f64;
                (rounds, rounds)
            }
            Algorithm::HalvingDoubling => {
                let lower = 1usize << (usize::BITS - 1 - p.leading_zeros());
                let rounds = 2.0 * lower.trailing_zeros() as f64;
                if lower == p {
                    (rounds, 2.0 * share(p))
                } else {
                    (rounds + 2.0, 2.0 * share(lower) + 2.0)
                }
            }
        }
    }
}

impl Collective {
    /// The number of participants under `rule` among `n` ranks.
    pub fn participants(rule: Rule, n: usize) -> usize {
        match rule {
            Rule::KOfN(k) => k,
            Rule::Groups { size } => n / size,
        }
    }

    /// The cost, in the study's time unit, of one bucket's collective among
    /// `p` of `n` ranks whose messages are `message` full gradients: the
    /// agreement where p < n, plus the sum of S·message/K bytes.
    pub fn bucket_cost(&self, p: usize, n: usize, message: f64) -> f64 {
        let agreement = if p < n {
            self.algorithm.cost(p, 0.0, self.latency, self.bandwidth)
        } else {
            0.0
        };
        let bytes = self.gradient_bytes * message / self.buckets as f64;
        (agreement + self.algorithm.cost(p, bytes, self.latency, self.bandwidth)) * self.units_per_second
    }

    /// The gradients (in units of S) that `p` participants send in one
    /// iteration, all buckets together, for messages of `message` full
    /// gradients: 2(p − 1)·message, whatever the algorithm. A ring's and
    /// halving-doubling's ranks each send 2((p−1)/p) of the message; in a
    /// binomial tree each of the p − 1 ranks other than the root sends it
    /// once up (reduce) and receives it once down (broadcast), p − 1 sends
    /// each way; halving-doubling's p − p′ extra ranks and their partners
    /// add one message each way, 2(p − p′) to the 2(p′ − 1) of the p′
    /// (Thakur et al. 2005); hierarchical's N nodes of g ranks send
    /// 2(g − 1) each in their node and 2(N − 1) across nodes, 2(Ng − 1)
    /// (where G divides p; otherwise the same count is charged). The
    /// agreement's bitmaps are not counted.
    pub fn gradients_sent(&self, p: usize, message: f64) -> f64 {
        2.0 * p.saturating_sub(1) as f64 * message
    }

    /// The end of the iteration whose rule is met at `t`, with buckets of
    /// cost `cost` each: max over j of ((j/K)·t + (K − j + 1)·cost).
    #[inline]
    pub fn finish(&self, t: f64, cost: f64) -> f64 {
        let k = self.buckets;
        if k == 1 {
            return t + cost;
        }
        // The maximum of terms linear in j is at j = 1 or j = K.
        let first = t / k as f64 + k as f64 * cost;
        (t + cost).max(first)
    }

    /// When the first bucket's collective starts, for a rule met at `t`.
    pub fn start(&self, t: f64) -> f64 {
        t / self.buckets as f64
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Algorithm::Hierarchical {
                gpus_per_node,
                intra_bandwidth,
            } => write!(
                f,
                "hierarchical:gpus-per-node={gpus_per_node},intra-bandwidth={}",
                crate::dist::plain(*intra_bandwidth)
            ),
            a => f.write_str(a.name()),
        }
    }
}

impl fmt::Display for Aggregation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Aggregation::Master => f.write_str("master"),
            Aggregation::Collective(c) => c.algorithm.fmt(f),
        }
    }
}

impl fmt::Display for Collective {
    /// The collective as a header names it: the algorithm, then each of
    /// its quantities.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} latency={} bandwidth={} gradient-size={} buckets={}",
            self.algorithm,
            crate::dist::plain(self.latency),
            crate::dist::plain(self.bandwidth),
            crate::dist::plain(self.gradient_bytes),
            self.buckets
        )
    }
}

impl Aggregation {
    /// The collective, where there is one.
    pub fn collective(&self) -> Option<&Collective> {
        match self {
            Aggregation::Master => None,
            Aggregation::Collective(c) => Some(c),
        }
    }
}

#[cfg(test)]
mod tests;
