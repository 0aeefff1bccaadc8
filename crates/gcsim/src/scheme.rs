//! Coding schemes as plain data: load, message size and recovery rule of
//! each (Tandon et al. 2017; Ye & Abbe 2018; Kadhe et al. 2020; Lee et al. 2017).
//!
//! Each scheme fixes, for its parameters, the per-worker load (in units of the
//! uncoded share), the message size (fraction of one full gradient), the
//! recovery rule and whether the decoded gradient is exact:
//!
//! | scheme | load | message | recovery rule |
//! |---|---|---|---|
//! | `uncoded` | 1 | 1 | all n |
//! | `ignore` | 1 | 1 | any n−s (drops s/n of the data) |
//! | `frc` (Tandon et al. 2017, §4.1) | s+1 | 1 | one worker of each of the n/(s+1) groups |
//! | `crc` (Tandon et al. 2017, §4.2) | s+1 | 1 | any n−s |
//! | `comm-efficient` (Ye & Abbe 2018) | s+m | 1/m | any n−s |
//! | `mds` (Lee et al. 2017) | n/k | 1 | any k |
//! | `approx-regular` (Charles et al. 2017) | d | 1 | any n−s, least-squares decoding (inexact) |
//! | `custom` (a user's matrix, `--code FILE`) | nonzeros of the row × n/P | 1 | the real code's rank condition, or any n−s with `--s` (inexact) |
//! | `timeout` (`--timeout T`) | 1 | 1 | all n, or at time T those arrived (at least the first; inexact) |
//! | `speculative` (Dean & Ghemawat 2008) | 1, plus copies | 1 | every task, from its worker or its copy |
//! | `k-batch-sync` (`--k K`, Dutta et al. 2018) | 1 per mini-batch | 1 per mini-batch | any K mini-batches (inexact) |
//! | `multi-message` (Ozfatura et al. 2019) | s+1, one message per partition | 1 (s+1 messages) | every partition from some worker |
//! | `k-async` (`--k K`, Dutta et al. 2018) | 1 per gradient | 1 per gradient | an update per K gradients of distinct workers (asynchronous, stale) |
//! | `k-batch-async` (`--k K`, Dutta et al. 2018) | 1 per mini-batch | 1 per mini-batch | an update per K mini-batches (asynchronous, stale) |
//! | `partial-frc`, `partial-crc` (`--parts L`, Tandon et al. 2017, §5) | L/(L−s) | 1 (two messages) | every worker's own part, and frc's or crc's rule on the coded parts |
//! | `polynomial` (`--p P --q Q`, Yu, Maddah-Ali & Avestimehr 2017) | n/(pq) | 1/(pq) of C | any pq |
//! | `matdot` (`--p P`, inner split, Dutta et al. 2019) | n/p | 1 (all of C) | any 2p − 1 |
//! | `entangled` (`--p P --m M --q Q`, Yu, Maddah-Ali & Avestimehr 2020) | n/(pmq) | 1/(pq) of C | any pmq + m − 1 |
//!
//! For the three matmul codes (C = A·B, A in p row blocks, B in q column
//! blocks, the inner dimension in m parts; matdot's p is its inner split)
//! the load is n times a worker's share of the full product's arithmetic,
//! and the message its share of C.
//!
//! The last seven are not a rule over one message per worker: their
//! timelines are in [`Strategy`].

use std::fmt;

mod build;
mod error;
mod facts;
mod kind;
mod params;
mod rule;
mod split;
pub use build::MAX_PARTS;
pub use error::SchemeError;
pub use facts::{Construction, Facts, Messages, Planning};
pub use kind::{SPECULATE_AFTER, SPECULATE_FACTOR, SchemeKind, Strategy};
pub use params::{CustomShape, Params};
pub use rule::Rule;
pub use split::Split;

/// A validated scheme for a cluster of `n` workers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scheme {
    kind: SchemeKind,
    n: usize,
    s: usize,
    m: Option<usize>,
    k: usize,
    /// approx-regular: the degree; custom: the largest row support.
    d: Option<usize>,
    /// Data partitions (n, except for custom codes).
    partitions: usize,
    /// Whether the master waits for a fixed number of workers and decodes
    /// what it can (ignore with s > 0, approx-regular, custom with s), or
    /// stops at a deadline (timeout).
    approximate: bool,
    /// The time after which the master proceeds with the arrived workers.
    deadline: Option<f64>,
    /// The timeline where it is not a rule over one message per worker.
    strategy: Option<Strategy>,
    /// The split of a matmul code.
    split: Option<Split>,
}

impl Scheme {
    /// The scheme.
    pub fn kind(&self) -> SchemeKind {
        self.kind
    }

    /// Number of workers.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Straggler tolerance (n − k for mds).
    pub fn s(&self) -> usize {
        self.s
    }

    /// Message split m, for comm-efficient.
    pub fn m(&self) -> Option<usize> {
        self.m
    }

    /// The guaranteed threshold: a number of finished workers that always suffices.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Work per worker, in units of the uncoded share (1/n of the data).
    pub fn load(&self) -> f64 {
        match self.kind {
            SchemeKind::Uncoded
            | SchemeKind::Ignore
            | SchemeKind::Timeout
            | SchemeKind::Speculative
            | SchemeKind::KBatchSync
            | SchemeKind::KAsync
            | SchemeKind::KBatchAsync => 1.0,
            SchemeKind::Frc | SchemeKind::Crc | SchemeKind::MultiMessage => (self.s + 1) as f64,
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => match self.strategy {
                Some(Strategy::Partial { s, parts }) => Strategy::partial_loads(s, parts).1,
                _ => unreachable!("a partial code has its strategy"),
            },
            SchemeKind::CommEfficient => (self.s + self.m.unwrap_or(1)) as f64,
            SchemeKind::Mds => self.n as f64 / self.k as f64,
            SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled => match self.split {
                Some(split) => self.n as f64 * split.compute_share(),
                None => unreachable!("a matmul code has its split"),
            },
            SchemeKind::ApproxRegular | SchemeKind::Custom => {
                self.d.unwrap_or(1) as f64 * self.n as f64 / self.partitions as f64
            }
        }
    }

    /// Degree of approx-regular's graph, or a custom code's largest row support.
    pub fn d(&self) -> Option<usize> {
        self.d
    }

    /// The deadline T of `timeout`: at T after the iteration starts the
    /// master proceeds with the messages that have arrived (with the first
    /// to arrive if none has). The iteration time is min(R, max(T, A₁)),
    /// with R the time of the recovery rule (all n for timeout) and A₁ the
    /// first arrival.
    pub fn deadline(&self) -> Option<f64> {
        self.deadline
    }

    /// The timeline of the strategies that are not a recovery rule over one
    /// message per worker (see [`Strategy`]).
    pub fn strategy(&self) -> Option<Strategy> {
        self.strategy
    }

    /// Partitions per worker, L, of the partial-straggler codes.
    pub fn parts(&self) -> Option<usize> {
        match self.strategy {
            Some(Strategy::Partial { parts, .. }) => Some(parts),
            _ => None,
        }
    }

    /// Data partitions: n, or a custom code's columns.
    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// Size of one worker's message, as a fraction of one full gradient.
    pub fn message(&self) -> f64 {
        if let Some(split) = self.split {
            return split.message_share();
        }
        match self.m {
            Some(m) => 1.0 / m as f64,
            None => 1.0,
        }
    }

    /// Whether the decoded gradient is the exact full gradient (by
    /// construction; a custom code without s decodes exactly or not at all).
    pub fn exact_gradient(&self) -> bool {
        !self.approximate
    }

    /// Whether the master decodes a user's code by its rank condition,
    /// whatever the decoder: a custom code without s.
    pub fn rank_decoded(&self) -> bool {
        self.kind == SchemeKind::Custom && !self.approximate
    }

    /// The split of a matmul code (polynomial, matdot, entangled).
    pub fn split(&self) -> Option<Split> {
        self.split
    }

    /// The parameters that rebuild this scheme with [`Scheme::new`].
    pub fn params(&self) -> Params {
        if let Some(Split { p, q, m }) = self.split {
            return match self.kind {
                SchemeKind::MatDot => Params {
                    p: Some(m),
                    ..Params::default()
                },
                SchemeKind::Polynomial => Params {
                    p: Some(p),
                    q: Some(q),
                    ..Params::default()
                },
                _ => Params {
                    p: Some(p),
                    q: Some(q),
                    m: Some(m),
                    ..Params::default()
                },
            };
        }
        match self.kind {
            SchemeKind::Uncoded => Params::default(),
            SchemeKind::Mds => Params {
                k: Some(self.k),
                ..Params::default()
            },
            SchemeKind::ApproxRegular => Params {
                s: Some(self.s),
                d: self.d,
                ..Params::default()
            },
            SchemeKind::Custom => Params {
                s: self.approximate.then_some(self.s),
                ..Params::default()
            },
            SchemeKind::Timeout => Params {
                timeout: self.deadline,
                ..Params::default()
            },
            SchemeKind::Speculative => match self.strategy {
                Some(Strategy::Speculative { after, factor }) => Params {
                    speculate_after: Some(after),
                    speculate_factor: Some(factor),
                    ..Params::default()
                },
                _ => unreachable!("speculative has its strategy"),
            },
            SchemeKind::KBatchSync | SchemeKind::KAsync | SchemeKind::KBatchAsync => Params {
                k: Some(self.k),
                ..Params::default()
            },
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => match self.strategy {
                Some(Strategy::Partial { s, parts }) => Params {
                    s: Some(s),
                    parts: Some(parts),
                    ..Params::default()
                },
                _ => unreachable!("a partial code has its strategy"),
            },
            _ => Params {
                s: Some(self.s),
                m: self.m,
                ..Params::default()
            },
        }
    }

    /// The recovery rule.
    pub fn rule(&self) -> Rule {
        match self.kind {
            SchemeKind::Frc | SchemeKind::PartialFrc => Rule::Groups { size: self.s + 1 },
            _ => Rule::KOfN(self.k),
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SchemeKind::Uncoded => write!(f, "uncoded"),
            SchemeKind::Mds => write!(f, "mds k={}", self.k),
            SchemeKind::Polynomial | SchemeKind::MatDot | SchemeKind::Entangled => {
                let Split { p, q, m } = self.split.unwrap_or(Split { p: 1, q: 1, m: 1 });
                match self.kind {
                    SchemeKind::Polynomial => write!(f, "polynomial p={p} q={q}"),
                    SchemeKind::MatDot => write!(f, "matdot p={m}"),
                    _ => write!(f, "entangled p={p} m={m} q={q}"),
                }
            }
            SchemeKind::CommEfficient => write!(f, "comm-efficient s={} m={}", self.s, self.m.unwrap_or(1)),
            SchemeKind::ApproxRegular => write!(f, "approx-regular s={} d={}", self.s, self.d.unwrap_or(1)),
            SchemeKind::Custom if !self.approximate => write!(f, "custom"),
            SchemeKind::Timeout => write!(f, "timeout T={}", self.deadline.unwrap_or(0.0)),
            SchemeKind::KBatchSync | SchemeKind::KAsync | SchemeKind::KBatchAsync => {
                write!(f, "{} K={}", self.kind, self.k)
            }
            SchemeKind::PartialFrc | SchemeKind::PartialCrc => match self.strategy {
                Some(Strategy::Partial { s, parts }) => write!(f, "{} s={s} L={parts}", self.kind),
                _ => write!(f, "{}", self.kind),
            },
            SchemeKind::Speculative => match self.strategy {
                Some(Strategy::Speculative { after, factor }) => write!(f, "speculative Q={after} F={factor}"),
                _ => write!(f, "speculative"),
            },
            kind => write!(f, "{kind} s={}", self.s),
        }
    }
}

/// The approximation error of `ignore` when `finished` of the n workers are
/// in: min over a of ‖aᵀ·I_F − 1ᵀ‖ / ‖1‖ = √((n − finished)/n), the fraction
/// of the gradient's partitions that are lost, in the norm of approximate
/// gradient coding. Equal to the residual of [`crate::codes::Code::decode`] for `ignore`.
///
/// # Panics
/// If `finished > n` or n = 0.
pub fn ignore_residual(n: usize, finished: usize) -> f64 {
    assert!(
        n > 0 && finished <= n,
        "finished workers are a subset of the n >= 1 workers"
    );
    ((n - finished) as f64 / n as f64).sqrt()
}

#[cfg(test)]
mod tests;
