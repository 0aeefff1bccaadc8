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
pub mod family;
mod params;
mod rule;
pub mod search;
mod split;
mod strategy;
pub use build::MAX_PARTS;
pub use error::SchemeError;
pub use facts::{Colour, Construction, Facts, Marker, Messages, Planning, Style};
use family::Custom;
pub use family::{Def, SchemeKind, Shape};
pub use params::{CustomShape, Params};
pub use rule::Rule;
pub use split::Split;
pub use strategy::{SPECULATE_AFTER, SPECULATE_FACTOR, Strategy};

/// A validated scheme for a cluster of `n` workers: the cluster size and
/// the scheme's own data ([`Shape`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scheme {
    n: usize,
    shape: Shape,
}

impl Scheme {
    /// The scheme.
    pub fn kind(&self) -> SchemeKind {
        self.shape.kind()
    }

    /// Its data.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// What it is (see [`Def`]).
    fn def(&self) -> &dyn Def {
        self.shape.def()
    }

    /// Number of workers.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Straggler tolerance s = n − k: how many workers the master can
    /// always do without.
    pub fn s(&self) -> usize {
        self.n - self.k()
    }

    /// Message split m, for comm-efficient.
    pub fn m(&self) -> Option<usize> {
        self.shape.extras().m
    }

    /// The guaranteed threshold: a number of finished workers that always suffices.
    pub fn k(&self) -> usize {
        self.def().threshold(self.n)
    }

    /// Work per worker, in units of the uncoded share (1/n of the data).
    pub fn load(&self) -> f64 {
        self.def().load(self.n)
    }

    /// Degree of approx-regular's graph, or a custom code's largest row support.
    pub fn d(&self) -> Option<usize> {
        self.shape.extras().d
    }

    /// The deadline T of `timeout` (see [`family::Timeout`]).
    pub fn deadline(&self) -> Option<f64> {
        self.shape.extras().deadline
    }

    /// The timeline of the strategies that are not a recovery rule over one
    /// message per worker (see [`Strategy`]).
    pub fn strategy(&self) -> Option<Strategy> {
        self.def().strategy()
    }

    /// Partitions per worker, L, of the partial-straggler codes.
    pub fn parts(&self) -> Option<usize> {
        self.shape.extras().parts
    }

    /// Data partitions: n, or a custom code's columns.
    pub fn partitions(&self) -> usize {
        self.shape.extras().partitions.unwrap_or(self.n)
    }

    /// Size of one worker's message, as a fraction of one full gradient.
    pub fn message(&self) -> f64 {
        self.def().message()
    }

    /// Whether the decoded gradient is the exact full gradient (by
    /// construction; a custom code without s decodes exactly or not at all).
    pub fn exact_gradient(&self) -> bool {
        self.def().exact_gradient()
    }

    /// Whether the master decodes a user's code by its rank condition,
    /// whatever the decoder: a custom code without s.
    pub(crate) fn rank_decoded(&self) -> bool {
        matches!(self.shape, Shape::Custom(Custom { s: None, .. }))
    }

    /// The split of a matmul code (polynomial, matdot, entangled).
    pub fn split(&self) -> Option<Split> {
        self.shape.extras().split
    }

    /// The parameters that rebuild this scheme with [`Scheme::new`].
    pub fn params(&self) -> Params {
        self.def().params()
    }

    /// Its encoding matrix and decoding target where it is a gradient code
    /// (see [`Def::encoding`]).
    pub fn encoding(&self, generator: crate::encoding::Generator, seed: u64) -> crate::encoding::Encoding {
        self.def().encoding(self.n, generator, seed)
    }

    /// The recovery rule.
    pub fn rule(&self) -> Rule {
        self.def().rule(self.n)
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.def().describe(f)
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
