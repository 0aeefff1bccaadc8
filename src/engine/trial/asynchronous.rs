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

/// One update of the asynchronous timeline: when it is applied, and the
/// (worker, model version) of each gradient in it, in arrival order.
pub struct Update<'a> {
    /// Updates applied before this one: it makes model `index + 1`.
    pub index: u64,
    /// When it is applied.
    pub at: f64,
    /// When the previous one was (0 for the first).
    pub previous: f64,
    /// Its K gradients: the sender and the model it computed on.
    pub gradients: &'a [(usize, u64)],
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
        let warmup = Strategy::warmup_updates(self.n, k) as u64;
        let mut interval = 0.0;
        self.async_timeline(e, k, batch, times, draws, scratch, |plan, scratch, update| {
            if update.index < warmup {
                return true;
            }
            for &(w, v) in update.gradients {
                plan.mark_used(e.slot, w, scratch);
                scratch.tally[e.slot] += update.index - v;
            }
            interval = update.at - update.previous;
            false
        });
        interval
    }

    /// The asynchronous timeline of `e` from its synchronized start on the
    /// trial's first draws: calls `update` at each update, until it returns
    /// false. Every worker starts on model 0 at time 0; see
    /// [`Strategy::Async`] for the rules.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn async_timeline(
        &self,
        e: &Eval,
        k: usize,
        batch: bool,
        times: &[f64],
        draws: &[f64],
        scratch: &mut Scratch,
        mut update: impl FnMut(&Self, &mut Scratch, Update) -> bool,
    ) {
        let n = self.n;
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
        let mut pending = std::mem::take(&mut scratch.pending);
        pending.clear();
        let (mut updates, mut last) = (0u64, 0.0);
        let mut queue_free = f64::NEG_INFINITY;
        loop {
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
                pending.push((w, v));
                if pending.len() == k {
                    let done = Update {
                        index: updates,
                        at: t,
                        previous: last,
                        gradients: &pending,
                    };
                    if !update(self, scratch, done) {
                        break;
                    }
                    updates += 1;
                    last = t;
                    // K-async: the update's workers restart on the new model.
                    if !batch {
                        for &(p, _) in &pending {
                            self.start(p, t, updates, &mut ticks, scratch);
                        }
                    }
                    pending.clear();
                }
            }
            if batch && tick.arrives.is_none() {
                // K-batch-async: the next mini-batch, on the current model.
                self.start(w, t, updates, &mut ticks, scratch);
            }
        }
        scratch.ticks = ticks;
        scratch.pending = pending;
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
