//! Asynchronous SGD on the event timeline: K-async and K-batch-async
//! (Dutta et al. 2018), as [`Strategy::Async`] states them.
//!
//! One queue of events per trial: a worker finishing a gradient, and a
//! gradient reaching the master. Without transfer times the two coincide
//! and the arrival is handled at once. On a dedicated link a gradient
//! arrives its sender's transfer time after it is done; on a shared link
//! the gradients queue in the order they are done (the finishing events
//! are popped in time order, so the link's queue is served first come,
//! first served).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::{Eval, Scratch, TrialPlan};
use crate::comm::Link;
use crate::scheme::Strategy;

/// An event of the asynchronous timeline, ordered by time, then worker,
/// then kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Tick {
    at: f64,
    worker: usize,
    /// `None`: the worker finishes a gradient. `Some(v)`: its gradient,
    /// computed on model v, reaches the master.
    arrives: Option<u64>,
}

impl Eq for Tick {}

impl PartialOrd for Tick {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Tick {
    fn cmp(&self, other: &Self) -> Ordering {
        self.at
            .total_cmp(&other.at)
            .then(self.worker.cmp(&other.worker))
            .then(self.arrives.cmp(&other.arrives))
    }
}

/// The master's side of the timeline.
struct Master {
    /// Updates applied so far: the current model's version.
    updates: u64,
    /// When the last update was applied.
    last: f64,
    /// Gradients in the pending update, and their staleness summed.
    count: usize,
    stale: u64,
}

impl TrialPlan {
    /// One update interval of `strategy` after its warm-up (see
    /// [`Strategy::Async`]), on the trial's first draws; the recorded
    /// update's staleness goes to `scratch.tally`.
    pub(super) fn asynchronous(
        &self,
        e: &Eval,
        k: usize,
        batch: bool,
        times: &[f64],
        draws: &[f64],
        scratch: &mut Scratch,
    ) -> f64 {
        let n = self.n;
        let warmup = Strategy::warmup_updates(n, k) as u64;
        let message = self.delivery.messages[e.slot];
        let transfers = self.delivery.comm.transfers();
        let shared = self.delivery.comm.link == Link::Shared;
        let mut ticks = std::mem::take(&mut scratch.ticks);
        ticks.clear();
        for w in 0..n {
            let at = self.time_at(times, draws, w, 1.0);
            ticks.push(Reverse(Tick {
                at,
                worker: w,
                arrives: None,
            }));
        }
        scratch.version.clear();
        scratch.version.resize(n, 0);
        scratch.pending.clear();
        let mut master = Master {
            updates: 0,
            last: 0.0,
            count: 0,
            stale: 0,
        };
        let mut queue_free = f64::NEG_INFINITY;
        let interval = loop {
            let Reverse(tick) = ticks
                .pop()
                .expect("a worker is always computing or a gradient travelling");
            let (t, w) = (tick.at, tick.worker);
            let arrival = match tick.arrives {
                Some(v) => Some(v),
                None if !transfers => Some(scratch.version[w]),
                None => {
                    let version = scratch.version[w];
                    let transfer = scratch.transfer[w] * message;
                    let at = if shared {
                        queue_free = queue_free.max(t) + transfer;
                        queue_free
                    } else {
                        t + transfer
                    };
                    ticks.push(Reverse(Tick {
                        at,
                        worker: w,
                        arrives: Some(version),
                    }));
                    None
                }
            };
            if let Some(v) = arrival {
                if master.updates == warmup {
                    self.mark_used(e.slot, w, scratch);
                }
                master.count += 1;
                master.stale += master.updates - v;
                if !batch {
                    scratch.pending.push(w);
                }
                if master.count == k {
                    if master.updates == warmup {
                        scratch.tally[e.slot] += master.stale;
                        break t - master.last;
                    }
                    master.updates += 1;
                    master.last = t;
                    master.count = 0;
                    master.stale = 0;
                    // K-async: the update's workers restart on the new model.
                    for i in 0..scratch.pending.len() {
                        let p = scratch.pending[i];
                        self.start(p, t, master.updates, &mut ticks, scratch);
                    }
                    scratch.pending.clear();
                }
            }
            if batch && tick.arrives.is_none() {
                // K-batch-async: the next mini-batch, on the current model.
                self.start(w, t, master.updates, &mut ticks, scratch);
            }
        };
        scratch.ticks = ticks;
        interval
    }

    /// Worker `w` starts a gradient at `t` on model `version`.
    fn start(&self, w: usize, t: f64, version: u64, ticks: &mut BinaryHeap<Reverse<Tick>>, scratch: &mut Scratch) {
        scratch.version[w] = version;
        let at = t + self.fresh(w, scratch);
        ticks.push(Reverse(Tick {
            at,
            worker: w,
            arrives: None,
        }));
    }
}
