//! The per-thread buffers a trial works in, allocated once per thread
//! and reused by every trial it runs.

use super::*;

/// Per-thread buffers for [`TrialPlan::run`].
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    /// One draw per worker (per unit of work under `additive`, unit-major).
    pub(super) draws: Vec<f64>,
    /// The worker times of one load group, by worker.
    pub(super) times: Vec<f64>,
    /// The order statistics below the top block drawn by bisection.
    pub(super) lower: bisection::Lower,
    /// Sorted times: the top standard exponential order statistics, or the
    /// merged runs of the worker classes.
    pub(super) sorted: Vec<f64>,
    /// Below the top block, by index: ln U_(k), from ln U_(k₀) down,
    /// as the order statistics are reached top down.
    pub(super) low_order: Vec<f64>,
    /// Each worker class's sorted run of times, then the same run shuffled
    /// to deal to the class's workers.
    pub(super) class_runs: Vec<f64>,
    /// Running sums of the units of work drawn so far (`additive`).
    pub(super) unit_sums: Vec<f64>,
    /// Worker indices in the order of their times (event walk, arrivals).
    pub(super) order: Vec<usize>,
    /// The rank of each worker's time: a uniformly random permutation.
    pub(super) worker_rank: Vec<u32>,
    /// The class of each worker.
    pub(super) worker_class: Vec<u32>,
    /// Each worker's full-gradient transfer time in this trial.
    pub(super) transfer: Vec<f64>,
    /// Each worker's finish time at the evaluated load.
    pub(super) finish: Vec<f64>,
    /// Each worker's message arrival at the master.
    pub(super) arrival: Vec<f64>,
    /// The raw times sorted: the order of a shared link's queue.
    pub(super) queue: Vec<f64>,
    /// The bucket sort's buffers.
    pub(super) sort: SortBuffers,
    /// Sentinel-padded copies for merging the classes' runs.
    pub(super) merge: Vec<f64>,
    /// Range minima of the worker times, for every frc group size at once.
    pub(super) group_table: Vec<f64>,
    /// The completion time of each frc group size.
    pub(super) group_times: Vec<f64>,
    /// Per class, the next time of its shuffled run to deal to a worker.
    pub(super) class_next: Vec<usize>,
    /// Per class, the index of its lowest drawn time in its run (see
    /// [`classes`]).
    pub(super) class_lowest: Vec<usize>,
    /// Per class, the stream of its times below its block, once needed.
    pub(super) class_reach: Vec<Option<rand_xoshiro::Xoshiro256PlusPlus>>,
    /// Speculative copies' fresh times, drawn in one loop before they
    /// are paired with the late ranks.
    pub(super) copy_times: Vec<f64>,
    /// The stream of draws beyond the trial's first (see [`strategy`]).
    pub(super) extra: Option<rand_xoshiro::Xoshiro256PlusPlus>,
    /// The results of a strategy's timeline, and when each was done,
    /// how long it takes to send and when it arrives.
    pub(super) messages: Vec<strategy::Message>,
    pub(super) msg_done: Vec<f64>,
    pub(super) msg_transfer: Vec<f64>,
    pub(super) msg_arrival: Vec<f64>,
    /// Per task or partition, its first arrival.
    pub(super) tag_best: Vec<f64>,
    /// Each worker's next mini-batch (k-batch-sync).
    pub(super) heap: std::collections::BinaryHeap<std::cmp::Reverse<strategy::Event>>,
    /// The k earliest arrivals so far (k-batch-sync on dedicated links).
    pub(super) kept: std::collections::BinaryHeap<strategy::Event>,
    /// The events of the asynchronous strategies.
    pub(super) ticks: std::collections::BinaryHeap<std::cmp::Reverse<asynchronous::Packed>>,
    /// The asynchronous timeline's ticks where it has no transfer times.
    pub(super) tree: asynchronous::Tournament,
    /// K-async's ticks in order, and room to merge the restarted ones in.
    pub(super) in_order: asynchronous::InOrder,
    /// Per worker, the model version it computes on (asynchronous).
    pub(super) version: Vec<u64>,
    /// The gradients of the pending update: sender and model version.
    pub(super) pending: Vec<(usize, u64)>,
    /// Per slot, what its strategy counts over the trials (see [`Scratch::tally`]).
    pub(super) tally: Vec<u64>,
    /// What a trial carries from one iteration to the next.
    pub(super) carried: Carried,
    /// One iteration's values, where a trial runs several.
    pub(super) iteration_out: Vec<f64>,
    /// Under a collective, each slot's time before its collective.
    pub(super) ruled: Vec<f64>,
    /// Under a collective, each deadline slot's participants: the workers
    /// in when it proceeds (see [`TrialPlan::count_participants`]).
    pub(super) participants: Vec<usize>,
    /// Where it is asked for, per slot and worker (slot-major), how many of
    /// the worker's results are in the slot's update: recorded by the
    /// strategies whose update holds some workers' data (k-batch-sync,
    /// k-async, k-batch-async; a worker may send several mini-batches).
    pub(super) used: Option<Vec<u32>>,
    /// A hybrid-parallel job's buffers.
    pub(super) hybrid: PipelineBuffers,
}

impl Scratch {
    /// Per slot, what its strategy counts over the trials run with these
    /// buffers: the copies launched (speculative), or the staleness summed
    /// over the recorded update's K gradients (the asynchronous
    /// strategies); 0 for the others.
    pub fn tally(&self) -> &[u64] {
        &self.tally
    }
}

impl TrialPlan {
    /// Fresh buffers for one thread.
    ///
    /// (Their tallies count over the trials run with them: see
    /// [`Scratch::tally`].)
    pub fn scratch(&self) -> Scratch {
        Scratch {
            draws: vec![0.0; self.n * self.units],
            times: vec![0.0; self.n],
            sorted: vec![0.0; self.n],
            lower: Default::default(),
            low_order: vec![0.0; self.n],
            class_runs: vec![0.0; self.n],
            unit_sums: vec![0.0; self.n],
            order: Vec::with_capacity(self.n),
            worker_rank: (0..self.n as u32).collect(),
            worker_class: vec![0; self.n],
            transfer: vec![0.0; self.n],
            finish: vec![0.0; self.n],
            arrival: vec![0.0; self.n],
            queue: Vec::with_capacity(self.n),
            sort: SortBuffers::default(),
            merge: Vec::with_capacity(2 * self.n + 4),
            group_table: Vec::new(),
            group_times: Vec::new(),
            class_next: Vec::new(),
            class_lowest: Vec::new(),
            class_reach: Vec::new(),
            copy_times: Vec::new(),
            extra: None,
            messages: Vec::new(),
            msg_done: Vec::new(),
            msg_transfer: Vec::new(),
            msg_arrival: Vec::new(),
            tag_best: Vec::new(),
            heap: Default::default(),
            kept: Default::default(),
            ticks: Default::default(),
            tree: Default::default(),
            in_order: Default::default(),
            version: vec![0; self.n],
            pending: Vec::new(),
            tally: vec![0; self.slots],
            carried: Carried::default(),
            iteration_out: vec![0.0; self.slots],
            ruled: vec![0.0; self.slots],
            participants: vec![0; self.slots],
            used: None,
            hybrid: Default::default(),
        }
    }
}

/// Per thread: the trial's microbatch computes and the replicas' stage
/// times.
#[derive(Debug, Clone, Default)]
pub(crate) struct PipelineBuffers {
    /// Replica d's stage i's microbatch j compute at `(i·most + j)·D + d`.
    pub(super) compute: Vec<f64>,
    /// Per replica and microbatch, its work.
    pub(super) works: Vec<f64>,
    /// Per program, stage i's end in replica d at `i·D + d`.
    pub(super) done: Vec<Vec<f64>>,
    /// One evaluation's times, every replica's.
    pub(super) times: super::lanes::LaneTimes,
    /// Per program, stage i's last backward's duration in replica d at
    /// `i·D + d`.
    pub(super) tails: Vec<Vec<f64>>,
    /// One stage's replicas' bucket, ready.
    pub(super) ready: Vec<f64>,
    /// One stage's replicas, for a selection.
    pub(super) column: Vec<f64>,
    /// Per unit, each tensor group's slowest rank, where the groups are
    /// drawn whole (see [`super::tensor`]).
    pub(super) slowest: Vec<f64>,
    /// Per tensor group, its slow ranks.
    pub(super) kinds: Vec<u32>,
}
