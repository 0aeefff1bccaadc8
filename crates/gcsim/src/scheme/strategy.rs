//! The timelines that are not a recovery rule over one message per worker.

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
pub(crate) const WARMUP_GRADIENTS: usize = 8;

impl Strategy {
    /// The updates simulated before the recorded one (see [`Strategy::Async`]).
    pub fn warmup_updates(n: usize, k: usize) -> usize {
        (WARMUP_GRADIENTS * n).div_ceil(k)
    }

    /// The loads at which a partial-straggler worker sends its two
    /// messages: its own part (0 where it has none) and its whole work.
    pub(crate) fn partial_loads(s: usize, parts: usize) -> (f64, f64) {
        let share = (parts - s) as f64;
        ((parts - s - 1) as f64 / share, parts as f64 / share)
    }

    /// The number of results, ⌈Q·n⌉ (at least 1, at most n), whose last
    /// arrival starts the clock of speculative copies.
    pub(crate) fn results_before_copies(after: f64, n: usize) -> usize {
        ((after * n as f64).ceil() as usize).clamp(1, n)
    }
}
