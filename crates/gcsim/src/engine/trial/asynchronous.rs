//! Asynchronous SGD on the event timeline: K-async and K-batch-async
//! (Dutta et al. 2018), as [`Strategy::Async`] states them.
//!
//! One queue of events per trial: a worker finishing a gradient, and a
//! gradient reaching the master. Without transfer times the two coincide
//! and the arrival is handled at once. On a dedicated link a gradient
//! arrives its sender's transfer time after it is done; on a shared link
//! the gradients queue in the order they are done (the finishing events
//! are popped in time order, so the link's queue is served first come,
//! first served). K-batch-async without transfer times has exactly one
//! event queued per worker, its next gradient, and its queue is a
//! tournament tree over the workers ([`Tournament`]) instead of a heap:
//! the same events in the same order, for fewer comparisons and no
//! unpredictable branches.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Eval, RulePath, Scratch, TrialPlan};
use crate::comm::Link;
use crate::scheme::Strategy;

mod tournament;

pub(super) use tournament::Tournament;

/// An event of the asynchronous timeline, ordered by time, then worker,
/// then kind.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tick {
    at: f64,
    worker: usize,
    /// `None`: the worker finishes a gradient. `Some(v)`: its gradient,
    /// computed on model v, reaches the master.
    arrives: Option<u64>,
}

/// Bits of a packed [`Tick`] for the worker (n ≤ 2²⁴ workers) and for
/// the kind (0 for `None`, v + 1 for `Some(v)`).
const WORKER_BITS: u32 = 24;
const KIND_BITS: u32 = 64 - WORKER_BITS;

/// A [`Tick`] as one integer whose order is the tick's order: time (by its
/// order-preserving key), worker, kind. The queue compares integers, not
/// three fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(super) struct Packed(u128);

impl Tick {
    /// The queue's entry for `worker` finishing a gradient at `at`.
    fn computed(at: f64, worker: usize) -> Reverse<Packed> {
        Reverse(
            Tick {
                at,
                worker,
                arrives: None,
            }
            .pack(),
        )
    }

    fn pack(self) -> Packed {
        let kind = self.arrives.map_or(0, |v| v + 1);
        assert!(
            (self.worker as u64) < 1 << WORKER_BITS && kind < 1 << KIND_BITS,
            "a tick's worker and model version fit their bits"
        );
        let low = (self.worker as u64) << KIND_BITS | kind;
        Packed(u128::from(crate::engine::sort::key(self.at)) << 64 | u128::from(low))
    }

    fn unpack(p: Packed) -> Self {
        let low = p.0 as u64;
        let kind = low & ((1 << KIND_BITS) - 1);
        Tick {
            at: crate::engine::sort::value((p.0 >> 64) as u64),
            worker: (low >> KIND_BITS) as usize,
            arrives: kind.checked_sub(1),
        }
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

/// The updates a timeline has applied so far and when the last was: what
/// the next [`Update`] reports.
#[derive(Debug, Default)]
struct Applied {
    updates: u64,
    last: f64,
}

impl Applied {
    /// Announces the update at `at` from `gradients` to `update`; if the
    /// timeline goes on (`update` returns true), counts it as applied.
    fn announce(&mut self, at: f64, gradients: &[(usize, u64)], update: impl FnOnce(Update) -> bool) -> bool {
        let go_on = update(Update {
            index: self.updates,
            at,
            previous: self.last,
            gradients,
        });
        if go_on {
            self.updates += 1;
            self.last = at;
        }
        go_on
    }
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
        if !batch && !transfers && self.path == RulePath::Fast {
            return self.k_async_in_order(k, times, draws, scratch, update);
        }
        if batch && !transfers {
            return self.k_batch_on_tree(k, times, draws, scratch, update);
        }
        let shared = self.delivery.comm.link == Link::Shared;
        let mut ticks = std::mem::take(&mut scratch.ticks);
        ticks.clear();
        for w in 0..n {
            let at = self.time_at(times, draws, w, 1.0);
            ticks.push(Tick::computed(at, w));
        }
        scratch.version.clear();
        scratch.version.resize(n, 0);
        let mut pending = std::mem::take(&mut scratch.pending);
        pending.clear();
        let mut applied = Applied::default();
        let mut queue_free = f64::NEG_INFINITY;
        loop {
            let Reverse(packed) = ticks
                .pop()
                .expect("a worker is always computing or a gradient travelling");
            let tick = Tick::unpack(packed);
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
                    ticks.push(Reverse(
                        Tick {
                            at,
                            worker: w,
                            arrives: Some(version),
                        }
                        .pack(),
                    ));
                    None
                }
            };
            if let Some(v) = arrival {
                pending.push((w, v));
                if pending.len() == k {
                    if !applied.announce(t, &pending, |done| update(self, scratch, done)) {
                        break;
                    }
                    // K-async: the update's workers restart on the new model.
                    if !batch {
                        for &(p, _) in &pending {
                            self.start(p, t, applied.updates, &mut ticks, scratch);
                        }
                    }
                    pending.clear();
                }
            }
            if batch && tick.arrives.is_none() {
                // K-batch-async: the next mini-batch, on the current model.
                self.start(w, t, applied.updates, &mut ticks, scratch);
            }
        }
        scratch.ticks = ticks;
        scratch.pending = pending;
    }

    /// [`async_timeline`](Self::async_timeline) for K-batch-async without
    /// transfer times: a gradient arrives as it is done and its worker
    /// starts the next at once, so each worker has exactly one tick queued
    /// and the queue is a [`Tournament`] over the workers, whose first
    /// tick is replaced by its worker's next. The ticks are taken in the
    /// heap's order and the fresh draws in the same order, so every value
    /// is the heap's.
    fn k_batch_on_tree(
        &self,
        k: usize,
        times: &[f64],
        draws: &[f64],
        scratch: &mut Scratch,
        mut update: impl FnMut(&Self, &mut Scratch, Update) -> bool,
    ) {
        let n = self.n;
        let mut tree = std::mem::take(&mut scratch.tree);
        tree.fill(
            n,
            (0..n).map(|w| Tick::computed(self.time_at(times, draws, w, 1.0), w).0),
        );
        scratch.version.clear();
        scratch.version.resize(n, 0);
        let mut pending = std::mem::take(&mut scratch.pending);
        pending.clear();
        let mut applied = Applied::default();
        loop {
            let Tick { at: t, worker: w, .. } = Tick::unpack(tree.first());
            pending.push((w, scratch.version[w]));
            if pending.len() == k {
                if !applied.announce(t, &pending, |done| update(self, scratch, done)) {
                    break;
                }
                pending.clear();
            }
            // The next mini-batch, on the current model, in the place of this tick.
            scratch.version[w] = applied.updates;
            let at = t + self.fresh(w, scratch);
            tree.replace_first(Tick::computed(at, w).0);
        }
        scratch.tree = tree;
        scratch.pending = pending;
    }

    /// [`async_timeline`](Self::async_timeline) for K-async without
    /// transfer times, update by update rather than event by event.
    ///
    /// Every worker has one computation under way, and the next update
    /// takes the K that finish first, at the K-th of them; its workers
    /// restart together after it, later than everything else under way.
    /// So with the n finishing ticks kept sorted, an update's gradients are
    /// the first K ticks (in the order a queue would pop them), and the
    /// restarted workers' new ticks, sorted among themselves, merge into
    /// the other n − K: K log K + n comparisons an update instead of K pops
    /// and pushes of a heap of n. The ticks, the order of the fresh draws
    /// and so every value are the event walk's.
    fn k_async_in_order(
        &self,
        k: usize,
        times: &[f64],
        draws: &[f64],
        scratch: &mut Scratch,
        mut update: impl FnMut(&Self, &mut Scratch, Update) -> bool,
    ) {
        let n = self.n;
        let InOrder {
            mut sorted,
            mut restarted,
            mut merged,
            mut starts,
        } = std::mem::take(&mut scratch.in_order);
        sorted.clear();
        sorted.extend((0..n).map(|w| Tick::computed(self.time_at(times, draws, w, 1.0), w).0));
        sorted.sort_unstable();
        scratch.version.clear();
        scratch.version.resize(n, 0);
        let mut pending = std::mem::take(&mut scratch.pending);
        let mut applied = Applied::default();
        loop {
            pending.clear();
            pending.extend(sorted[..k].iter().map(|&p| {
                let w = Tick::unpack(p).worker;
                (w, scratch.version[w])
            }));
            let t = Tick::unpack(sorted[k - 1]).at;
            if !applied.announce(t, &pending, |done| update(self, scratch, done)) {
                break;
            }
            restarted.clear();
            for &(w, _) in &pending {
                scratch.version[w] = applied.updates;
                restarted.push(Tick::computed(t + self.fresh(w, scratch), w).0);
            }
            let time = |p: &Packed| (p.0 >> 64) as u64;
            crate::engine::sort::bucket_sort(&restarted, time, &mut merged, &mut starts);
            merge_into(&mut merged, &sorted[k..]);
            std::mem::swap(&mut sorted, &mut merged);
        }
        scratch.pending = pending;
        scratch.in_order = InOrder {
            sorted,
            restarted,
            merged,
            starts,
        };
    }

    /// Worker `w` starts a gradient at `t` on model `version`.
    fn start(&self, w: usize, t: f64, version: u64, ticks: &mut BinaryHeap<Reverse<Packed>>, scratch: &mut Scratch) {
        scratch.version[w] = version;
        let at = t + self.fresh(w, scratch);
        ticks.push(Tick::computed(at, w));
    }
}

/// The buffers of [`TrialPlan::k_async_in_order`].
#[derive(Debug, Clone, Default)]
pub(super) struct InOrder {
    /// The ticks under way, sorted.
    sorted: Vec<Packed>,
    /// The restarted workers' ticks, in restart order.
    restarted: Vec<Packed>,
    /// The restarted ticks sorted, then the merge.
    merged: Vec<Packed>,
    /// The bucket sort's counts.
    starts: Vec<u32>,
}

/// Merges the sorted `rest` into the sorted `v`, keeping it sorted.
fn merge_into(v: &mut Vec<Packed>, rest: &[Packed]) {
    let head = v.len();
    v.extend_from_slice(rest);
    // Merge from the back into the room `rest` made: each slot is written
    // after it was read. Branch-free: the interleaving is random.
    let (mut i, mut j, mut out) = (head, rest.len(), v.len());
    while i > 0 && j > 0 {
        out -= 1;
        let (a, b) = (v[i - 1], rest[j - 1]);
        let from_v = a > b;
        v[out] = if from_v { a } else { b };
        i -= usize::from(from_v);
        j -= usize::from(!from_v);
    }
    v[..j].copy_from_slice(&rest[..j]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tick((at, worker, arrives): (f64, usize, Option<u64>)) -> Tick {
        Tick { at, worker, arrives }
    }

    proptest! {
        /// Packed ticks round-trip and order as (time by total order,
        /// worker, kind with `None` first) would.
        #[test]
        fn packing_keeps_the_order(
            a in (0.0f64..10.0, 0usize..1 << 24, prop::option::of(0u64..1 << 39)),
            b in (0.0f64..10.0, 0usize..1 << 24, prop::option::of(0u64..1 << 39)),
            same_time in any::<bool>(),
            same_worker in any::<bool>(),
        ) {
            let a = tick(a);
            let mut b = tick(b);
            if same_time {
                b.at = a.at;
                if same_worker {
                    b.worker = a.worker;
                }
            }
            prop_assert_eq!(Tick::unpack(a.pack()), a);
            let expected = a.at.total_cmp(&b.at).then(a.worker.cmp(&b.worker)).then(a.arrives.cmp(&b.arrives));
            prop_assert_eq!(a.pack().cmp(&b.pack()), expected);
        }
    }
}
