//! The closed set of schemes, and the timelines that are not a recovery
//! rule over one message per worker.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The closed set of schemes that `--scheme` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchemeKind {
    /// Every worker computes its own share; the master waits for all n.
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
}

impl SchemeKind {
    /// Every scheme, in the order `--help` lists them.
    pub const ALL: [SchemeKind; 12] = [
        SchemeKind::Uncoded,
        SchemeKind::Ignore,
        SchemeKind::Frc,
        SchemeKind::Crc,
        SchemeKind::CommEfficient,
        SchemeKind::Mds,
        SchemeKind::ApproxRegular,
        SchemeKind::Custom,
        SchemeKind::Timeout,
        SchemeKind::Speculative,
        SchemeKind::KBatchSync,
        SchemeKind::MultiMessage,
    ];

    /// The name used on the command line and in output.
    pub fn name(self) -> &'static str {
        match self {
            SchemeKind::Uncoded => "uncoded",
            SchemeKind::Ignore => "ignore",
            SchemeKind::Frc => "frc",
            SchemeKind::Crc => "crc",
            SchemeKind::CommEfficient => "comm-efficient",
            SchemeKind::Mds => "mds",
            SchemeKind::ApproxRegular => "approx-regular",
            SchemeKind::Custom => "custom",
            SchemeKind::Timeout => "timeout",
            SchemeKind::Speculative => "speculative",
            SchemeKind::KBatchSync => "k-batch-sync",
            SchemeKind::MultiMessage => "multi-message",
        }
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

/// Default of `--speculate-after`: Hadoop's and Spark's 75%.
pub const SPECULATE_AFTER: f64 = 0.75;

/// Default of `--speculate-factor`.
pub const SPECULATE_FACTOR: f64 = 1.0;

/// A timeline that is not a recovery rule over one message per worker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    /// Worker i's task is uncoded. At t_Q, the arrival of the ⌈Q·n⌉-th
    /// result, the master waits until F·t_Q; then every task whose result
    /// has not arrived is relaunched, with a fresh draw, on an idle worker
    /// (one whose result has arrived; the earliest to arrive take the tasks
    /// in worker order, while idle workers last). A task is done at the
    /// first arrival of its result, from either copy; the iteration when
    /// every task is done.
    Speculative {
        /// Q in (0, 1].
        after: f64,
        /// F ≥ 1.
        factor: f64,
    },
    /// Every worker computes mini-batches of load 1 back to back, each a
    /// fresh draw (the first is the trial's draw), and sends each as it is
    /// done; the iteration ends at the K-th mini-batch to arrive.
    KBatchSync {
        /// K in 1..=n.
        k: usize,
    },
    /// Worker w computes partitions w, w+1, …, w+s (mod n) in that order,
    /// the j-th done at its time for load j, and sends each as it is done;
    /// the iteration ends when every partition has arrived from some worker.
    MultiMessage {
        /// s: each partition is held by s+1 workers.
        s: usize,
    },
}

impl Strategy {
    /// The number of results, ⌈Q·n⌉ (at least 1, at most n), whose last
    /// arrival starts the clock of speculative copies.
    pub fn results_before_copies(after: f64, n: usize) -> usize {
        ((after * n as f64).ceil() as usize).clamp(1, n)
    }
}
