//! The closed set of schemes, and the timelines that are not a recovery
//! rule over one message per worker.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::facts::Construction;

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
}

impl SchemeKind {
    /// Every scheme, in the order `--help` lists them.
    pub const ALL: [SchemeKind; 19] = [
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
    /// Asynchronous SGD, which has no iteration boundary: the master applies
    /// an update whenever K gradients have arrived since the last one.
    ///
    /// Every worker starts on model 0 at time 0 (its first gradient takes
    /// the trial's draw; the later ones fresh draws of load 1). Under
    /// K-async a worker that has sent its gradient waits for the update
    /// that includes it and restarts on the new model; the K gradients of
    /// an update are therefore from distinct workers. Under K-batch-async a
    /// worker starts its next mini-batch as soon as it has sent one, on the
    /// model current at the master at that moment (the new one when its own
    /// gradient completed an update). A gradient computed on model v that
    /// enters update u + 1 has staleness u − v.
    ///
    /// A trial simulates [`Strategy::warmup_updates`] updates from that
    /// synchronized start, and its value is the time between the last of
    /// them and the next: one update interval of the (nearly) stationary
    /// process, so the trials are independent draws of it and their
    /// percentiles are those of the time per update. The staleness of the
    /// recorded update's K gradients is counted for the `staleness` column.
    Async {
        /// K in 1..=n.
        k: usize,
        /// K-batch-async (any K mini-batches) rather than K-async.
        batch: bool,
    },
    /// Partial stragglers (Tandon et al. 2017, §5): each worker holds
    /// `parts` = L partitions of the n·(L − s) the data is split into: its
    /// own L − s − 1, uncoded, and s + 1 coded across workers by frc's or
    /// crc's placement (the scheme's rule). It sends two messages: the
    /// gradient of its own part when that is done, at its time for load
    /// (L − s − 1)/(L − s), and its coded message when the rest is done, at
    /// its time for load L/(L − s) (its whole work, in units of the uncoded
    /// share L − s). The iteration ends when every worker's first message
    /// and a decodable set of second messages have arrived. With L = s + 1
    /// there is no own part and no first message: frc or crc itself.
    Partial {
        /// s: each coded partition is held by s + 1 workers.
        s: usize,
        /// L ≥ s + 1: partitions per worker.
        parts: usize,
    },
}

/// Gradients per worker, on average, in the warm-up of the asynchronous
/// strategies: the warm-up is ⌈WARMUP_GRADIENTS·n/K⌉ updates. For
/// exponential workers under K-async a gradient skips each update with
/// probability 1 − K/n, so the synchronized start still weighs on the
/// recorded update's staleness with probability (1 − K/n)^(8n/K) < e⁻⁸.
pub const WARMUP_GRADIENTS: usize = 8;

impl Strategy {
    /// The updates simulated before the recorded one (see [`Strategy::Async`]).
    pub fn warmup_updates(n: usize, k: usize) -> usize {
        (WARMUP_GRADIENTS * n).div_ceil(k)
    }

    /// The loads at which a partial-straggler worker sends its two
    /// messages: its own part (0 where it has none) and its whole work.
    pub fn partial_loads(s: usize, parts: usize) -> (f64, f64) {
        let share = (parts - s) as f64;
        ((parts - s - 1) as f64 / share, parts as f64 / share)
    }

    /// The number of results, ⌈Q·n⌉ (at least 1, at most n), whose last
    /// arrival starts the clock of speculative copies.
    pub fn results_before_copies(after: f64, n: usize) -> usize {
        ((after * n as f64).ceil() as usize).clamp(1, n)
    }
}
