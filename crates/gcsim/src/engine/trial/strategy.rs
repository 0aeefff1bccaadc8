//! The timelines that are not a recovery rule over one message per worker
//! ([`Strategy`]): speculative copies, K-batch-sync SGD, multi-message
//! cyclic placement and the partial-straggler codes (asynchronous SGD is in
//! its own module).
//!
//! Each runs on the trial's draws: a worker's first task (or first
//! mini-batch, or its partial results) takes the trial's draw for that
//! worker, so the strategies see the same stragglers as `uncoded` in the
//! same trial (common random numbers). What needs more draws (a copy's
//! fresh time, the mini-batches after the first) takes them from a stream
//! of its own, [`EXTRA_STREAM`], drawn from the law of the worker that runs
//! them, in that worker's state for the iteration (a slow worker's copies
//! and mini-batches are all slow).
//!
//! Results reach the master as every other message does: on a dedicated
//! link each message arrives its sender's transfer time after it is done;
//! on a shared link messages queue in the order they are done.
//!
//! Two strategies also run on the trial's order statistics, where their law
//! needs no worker identities: speculative copies from one law
//! ([`copies_on_order_statistics`], by rank in
//! `TrialPlan::speculative_by_ranks`), and K-async on exponential workers,
//! whose update interval is a k-of-n rule ([`async_reads_order_statistics`]).

use std::cmp::{Ordering, Reverse};

use rand::RngExt;
use rand_distr::Distribution;

use super::classes::ClassLaws;
use super::laws::{Standard, stateful};
use super::{Eval, Scratch, TrialPlan, additive_time, completion_by_events};
use crate::comm::Link;
use crate::scheme::Scheme;
use crate::scheme::Strategy;
use crate::study::{Study, Workers};

/// Key of the stream of draws beyond the trial's first (XORed with the seed).
pub(super) const EXTRA_STREAM: u64 = 0x5EED_0FC0_91E5;

/// A time and the worker it belongs to, ordered by time (then worker).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Event(f64, usize);

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// Whether `scheme` is K-async (see [`Strategy::Async`]) whose update
/// interval under `study` is, in law, the K-th smallest of n independent
/// worker times: every worker's law exponential (one law, or classes of
/// exponential laws) with no constant part at load 1 (`fixed`, `scaled`,
/// `affine` with a zero unit time), no transfer times and no state. At
/// each update every worker then has an exponential time left at its own
/// rate: the K that sent restart with fresh draws, and the others' times
/// left are exponential by memorylessness, independent of the past (the
/// exponential case of Dutta et al. 2018, §5). So every update interval,
/// the recorded one after the warm-up included, is the K-th order
/// statistic of n fresh worker times, and the slot reads it as the k-of-n
/// rule it states, from the trial's order statistics. Its marginal law is
/// exact; it is paired with the other configurations through the trial's
/// order statistics rather than through the timeline's own draws. The
/// staleness is drawn in law as well (see `tallies`).
pub fn async_reads_order_statistics(study: &Study, scheme: &Scheme) -> bool {
    // The strategy first: the law's representation is built for the
    // question (a trace's bootstrap tables), and this is asked of every
    // configuration of a sweep.
    if !matches!(scheme.strategy(), Some(Strategy::Async { batch: false, .. })) {
        return false;
    }
    let exponential = |law: &Standard| matches!(law, Standard::Exp { .. });
    let laws_exponential = match (Standard::of(study.workers()), ClassLaws::of(study.workers())) {
        (Some(law), _) => exponential(&law),
        (None, Some(classes)) => classes.classes.iter().all(|(_, law, _)| exponential(law)),
        (None, None) => false,
    };
    laws_exponential
        && !stateful(study.workers())
        && study.load_model().is_monotone()
        && study.load_model().apply(1.0, 0.0) == 0.0
        && !study.comm().transfers()
}

/// Whether `scheme` is speculative copies (see [`Strategy::Speculative`])
/// that run on the trial's order statistics under `study`: i.i.d. workers
/// of a [`Standard`] law with no state (the bootstrap from a trace
/// included), under a monotone load model, and no
/// transfer times. A copy is then a fresh draw of the one law whichever
/// idle worker runs it, and the tasks' order is a uniformly random
/// permutation of the ranks, so the iteration's law follows from the
/// sorted times alone (see `TrialPlan::speculative_by_ranks`).
pub(super) fn copies_on_order_statistics(study: &Study, scheme: &Scheme) -> bool {
    matches!(scheme.strategy(), Some(Strategy::Speculative { .. }))
        && matches!(study.workers(), Workers::Iid(_) | Workers::Trace(_))
        && Standard::of(study.workers()).is_some()
        && !stateful(study.workers())
        && study.load_model().is_monotone()
        && !study.comm().transfers()
}

impl TrialPlan {
    /// Worker `i`'s time for load `load` in this trial: the load model on
    /// its draw in `times`, or under `additive` the sum of its first units.
    pub(super) fn time_at(&self, times: &[f64], draws: &[f64], i: usize, load: f64) -> f64 {
        if self.model.is_monotone() {
            self.model.apply(load, times[i])
        } else {
            additive_time(draws, self.n, i, load)
        }
    }

    /// A fresh time of load 1 for worker `w`, from its own law.
    pub(super) fn fresh(&self, w: usize, scratch: &mut Scratch) -> f64 {
        let rng = scratch.extra.as_mut().expect("the trial seeded the extra stream");
        self.fresh_from(rng, w, &scratch.carried, &scratch.worker_class)
    }

    /// [`Self::fresh`] from `rng`, with the workers' states and classes.
    fn fresh_from(
        &self,
        rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
        w: usize,
        carried: &super::Carried,
        worker_class: &[u32],
    ) -> f64 {
        let x = match &self.workers {
            Workers::Iid(dist) if self.stateful => carried.draw(dist, rng, w),
            Workers::Iid(dist) => dist.sample(rng),
            Workers::Classes { classes, .. } => {
                let law = &classes[worker_class[w] as usize].1;
                if self.stateful {
                    carried.draw(law, rng, w)
                } else {
                    law.sample(rng)
                }
            }
            Workers::Trace(trace) | Workers::Replay(trace) => {
                let all = trace.all();
                all[rng.random_range(0..all.len())]
            }
        };
        if self.model.is_monotone() {
            self.model.apply(1.0, x)
        } else {
            x
        }
    }

    /// `out.len()` fresh times of load 1 from `rng`, as that many calls of
    /// [`Self::fresh_from`] for worker 0 would draw them: for one i.i.d.
    /// law without states, in one loop on a local copy of the stream.
    fn fresh_times(
        &self,
        rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
        carried: &super::Carried,
        worker_class: &[u32],
        out: &mut [f64],
    ) {
        match &self.workers {
            Workers::Iid(dist) if !self.stateful => {
                let mut local = rng.clone();
                for v in out.iter_mut() {
                    *v = dist.sample(&mut local);
                }
                *rng = local;
                if self.model.is_monotone() {
                    out.iter_mut().for_each(|v| *v = self.model.apply(1.0, *v));
                }
            }
            _ => out
                .iter_mut()
                .for_each(|v| *v = self.fresh_from(rng, 0, carried, worker_class)),
        }
    }

    /// The iteration time of `e`, whose timeline is `strategy`, on the
    /// trial's `times` (raw draws under a monotone load; under `additive`,
    /// the units are in `scratch.draws`).
    pub(super) fn strategy_time(&self, e: &Eval, strategy: Strategy, times: &[f64], scratch: &mut Scratch) -> f64 {
        let n = self.n;
        if let Some(used) = scratch.used.as_mut() {
            used[e.slot * n..(e.slot + 1) * n].fill(0);
        }
        let draws = std::mem::take(&mut scratch.draws);
        let done = match strategy {
            Strategy::MultiMessage { s } => {
                scratch.messages.clear();
                for w in 0..n {
                    for j in 1..=s + 1 {
                        let t = self.time_at(times, &draws, w, j as f64);
                        scratch.messages.push(Message {
                            done: t,
                            sender: w,
                            tag: (w + j - 1) % n,
                        });
                    }
                }
                self.every_tag(e, scratch)
            }
            Strategy::Speculative { after, factor } => self.speculative(e, after, factor, times, &draws, scratch),
            Strategy::KBatchSync { k } => self.k_batch_sync(e, k, times, &draws, scratch),
            Strategy::Async { k, batch } => self.asynchronous(e, k, batch, times, &draws, scratch),
            Strategy::Partial { s, parts } => self.partial(e, s, parts, times, &draws, scratch),
        };
        scratch.draws = draws;
        done
    }

    /// The time at which every tag (task, partition) has arrived from at
    /// least one of the messages in `scratch.messages`.
    fn every_tag(&self, e: &Eval, scratch: &mut Scratch) -> f64 {
        self.deliver_messages(e, scratch);
        scratch.tag_best.clear();
        scratch.tag_best.resize(self.n, f64::INFINITY);
        for (msg, &a) in scratch.messages.iter().zip(&scratch.msg_arrival) {
            let best = &mut scratch.tag_best[msg.tag];
            *best = best.min(a);
        }
        scratch.tag_best.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    /// The arrival of each message of `scratch.messages` at the master, in
    /// `scratch.msg_arrival`.
    fn deliver_messages(&self, e: &Eval, scratch: &mut Scratch) {
        let m = scratch.messages.len();
        scratch.msg_done.clear();
        scratch.msg_done.extend(scratch.messages.iter().map(|msg| msg.done));
        scratch.msg_arrival.resize(m, 0.0);
        scratch.msg_transfer.clear();
        if self.delivery.comm.transfers() {
            let senders = scratch.messages.iter().map(|msg| scratch.transfer[msg.sender]);
            scratch.msg_transfer.extend(senders);
        }
        self.deliver(
            e,
            &scratch.msg_done,
            &scratch.msg_transfer,
            &mut scratch.order,
            &mut scratch.msg_arrival,
        );
    }

    /// Partial stragglers (see [`Strategy::Partial`]): every worker's first
    /// message, and the coded rule on the second messages.
    fn partial(&self, e: &Eval, s: usize, parts: usize, times: &[f64], draws: &[f64], scratch: &mut Scratch) -> f64 {
        let n = self.n;
        let (own, whole) = Strategy::partial_loads(s, parts);
        scratch.messages.clear();
        for w in 0..n {
            if own > 0.0 {
                let done = self.time_at(times, draws, w, own);
                scratch.messages.push(Message {
                    done,
                    sender: w,
                    tag: 0,
                });
            }
            let done = self.time_at(times, draws, w, whole);
            scratch.messages.push(Message {
                done,
                sender: w,
                tag: 1,
            });
        }
        self.deliver_messages(e, scratch);
        let mut own_done = f64::NEG_INFINITY;
        scratch.arrival.clear();
        for (msg, &a) in scratch.messages.iter().zip(&scratch.msg_arrival) {
            if msg.tag == 0 {
                own_done = own_done.max(a);
            } else {
                scratch.arrival.push(a);
            }
        }
        let coded = completion_by_events(e.rule, &scratch.arrival, &mut scratch.order);
        own_done.max(coded)
    }

    /// Speculative copies (see [`Strategy::Speculative`]).
    fn speculative(
        &self,
        e: &Eval,
        after: f64,
        factor: f64,
        times: &[f64],
        draws: &[f64],
        scratch: &mut Scratch,
    ) -> f64 {
        let n = self.n;
        for i in 0..n {
            scratch.finish[i] = self.time_at(times, draws, i, 1.0);
        }
        self.deliver(
            e,
            &scratch.finish,
            &scratch.transfer,
            &mut scratch.order,
            &mut scratch.arrival,
        );
        let a = Strategy::results_before_copies(after, n);
        // The workers by arrival (ties by index): the a-th is t_Q, and the
        // idle workers at the relaunch, earliest first, are a prefix.
        crate::engine::sort::argsort_floats(&scratch.arrival, &mut scratch.order, &mut scratch.sort);
        let relaunch = factor * scratch.arrival[scratch.order[a - 1]];
        let idle = scratch.order.partition_point(|&i| scratch.arrival[i] <= relaunch);
        if !self.delivery.comm.transfers() && self.path == super::RulePath::Fast {
            // Each task is done at its result or its copy's, whichever is
            // first; nothing queues, so no messages are needed.
            let (mut done, mut copies) = (f64::NEG_INFINITY, 0);
            for task in 0..n {
                let mut t = scratch.arrival[task];
                if t > relaunch && copies < idle {
                    let w = scratch.order[copies];
                    copies += 1;
                    t = t.min(relaunch + self.fresh(w, scratch));
                }
                done = done.max(t);
            }
            scratch.tally[e.slot] += copies as u64;
            return done;
        }
        scratch.messages.clear();
        for i in 0..n {
            scratch.messages.push(Message {
                done: scratch.finish[i],
                sender: i,
                tag: i,
            });
        }
        let mut copies = 0;
        for task in 0..n {
            if scratch.arrival[task] <= relaunch || copies == idle {
                continue;
            }
            let w = scratch.order[copies];
            copies += 1;
            let copy = relaunch + self.fresh(w, scratch);
            scratch.messages.push(Message {
                done: copy,
                sender: w,
                tag: task,
            });
        }
        scratch.tally[e.slot] += copies as u64;
        self.every_tag(e, scratch)
    }

    /// Speculative copies (see [`Strategy::Speculative`]) on the trial's
    /// standard order statistics, drawn down to index `*lowest` (extended
    /// as the relaunch needs): the iteration's law without knowing which
    /// worker finished when.
    ///
    /// With X_(1) ≤ … ≤ X_(n) the sorted times at load 1, t_Q is X_(a) and
    /// the relaunch r = F·t_Q. The tasks done by then are the ranks with
    /// X_(j) ≤ r, whose workers are idle; the L late ones are the ranks
    /// above. In task order, which is a uniformly random permutation of the
    /// ranks for i.i.d. workers, the first min(L, idle) late tasks get a
    /// copy: a uniformly random subset of the late ranks (all of them when
    /// there are idle workers enough, as with F = 1 and Q ≥ 1/2). A copy is
    /// a fresh draw of the workers' law from r, whichever idle worker runs
    /// it, so the iteration ends at the largest of min(X_(j), r + C) over
    /// the copied ranks and X_(j) over the others. Each configuration's
    /// copies draw from the start of the trial's stream of extra draws, so
    /// its values do not depend on the rest of the study (and configurations
    /// share their copies' draws, as they share the trial's).
    pub(super) fn speculative_by_ranks(
        &self,
        copies: &Copies,
        (seed, trial): (u64, u64),
        rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
        scratch: &mut Scratch,
        lowest: &mut usize,
    ) -> f64 {
        let n = self.n;
        let a = Strategy::results_before_copies(copies.after, n);
        if a - 1 < *lowest {
            self.reach(a - 1, rng, scratch, lowest);
        }
        let at = |rank: usize, scratch: &Scratch| {
            self.model
                .apply(1.0, self.law_of_standard(self.order_statistic(rank, scratch, *lowest)))
        };
        let relaunch = copies.factor * at(a - 1, scratch);
        let mut idle = a;
        while idle < n && at(idle, scratch) <= relaunch {
            idle += 1;
        }
        if idle == n {
            return at(n - 1, scratch);
        }
        let late = n - idle;
        let copied = late.min(idle);
        scratch.tally[copies.slot] += copied as u64;
        let mut extra = crate::rng::trial_rng(seed ^ EXTRA_STREAM, trial);
        let fresh = |extra: &mut rand_xoshiro::Xoshiro256PlusPlus, scratch: &Scratch| {
            relaunch + self.fresh_from(extra, 0, &scratch.carried, &scratch.worker_class)
        };
        let mut done = f64::NEG_INFINITY;
        if copied == late {
            // Every late rank gets a copy: the copies' times first, in one
            // loop on a local stream (the same draws in the same order as
            // one at a time), then each rank against its own.
            let mut copy_times = std::mem::take(&mut scratch.copy_times);
            copy_times.resize(late, 0.0);
            self.fresh_times(&mut extra, &scratch.carried, &scratch.worker_class, &mut copy_times);
            for (rank, &c) in (idle..n).zip(&copy_times) {
                done = done.max(at(rank, scratch).min(relaunch + c));
            }
            scratch.copy_times = copy_times;
            return done;
        }
        // Fewer idle workers than late tasks: the copied ones are the first
        // `copied` of the late ranks shuffled (a partial Fisher-Yates).
        let mut ranks = std::mem::take(&mut scratch.order);
        ranks.clear();
        ranks.extend(idle..n);
        for i in 0..copied {
            let j = extra.random_range(i..late);
            ranks.swap(i, j);
        }
        for (i, &rank) in ranks.iter().enumerate() {
            let t = at(rank, scratch);
            done = done.max(if i < copied {
                t.min(fresh(&mut extra, scratch))
            } else {
                t
            });
        }
        scratch.order = ranks;
        done
    }

    /// Where the trial records them, counts one more result of worker `w`
    /// in slot `slot`'s update (see [`TrialPlan::run_iteration_marked`]).
    #[inline]
    pub(super) fn mark_used(&self, slot: usize, w: usize, scratch: &mut Scratch) {
        if let Some(used) = scratch.used.as_mut() {
            used[slot * self.n + w] += 1;
        }
    }

    /// K-batch-sync (see [`Strategy::KBatchSync`]): mini-batches in the
    /// order they are done, by a heap of each worker's next one.
    fn k_batch_sync(&self, e: &Eval, k: usize, times: &[f64], draws: &[f64], scratch: &mut Scratch) -> f64 {
        let mut next = std::mem::take(&mut scratch.heap);
        next.clear();
        next.extend((0..self.n).map(|w| Reverse(Event(self.time_at(times, draws, w, 1.0), w))));
        let message = self.delivery.messages[e.slot];
        let transfers = self.delivery.comm.transfers();
        let mut kept = std::mem::take(&mut scratch.kept);
        kept.clear();
        let mut queue_free = f64::NEG_INFINITY;
        let mut arrived = 0;
        let end = loop {
            let Reverse(Event(t, w)) = next.pop().expect("every worker always has a next mini-batch");
            if !transfers {
                self.mark_used(e.slot, w, scratch);
                arrived += 1;
                if arrived == k {
                    break t;
                }
            } else if self.delivery.comm.link == Link::Shared {
                // First come first served in the order they are done.
                self.mark_used(e.slot, w, scratch);
                queue_free = queue_free.max(t) + scratch.transfer[w] * message;
                arrived += 1;
                if arrived == k {
                    break queue_free;
                }
            } else {
                // Dedicated links reorder arrivals: keep the k earliest, and
                // stop once a mini-batch is done after the k-th of them.
                if kept.len() == k && t >= kept.peek().map_or(f64::INFINITY, |Event(a, _)| *a) {
                    for &Event(_, v) in kept.iter() {
                        self.mark_used(e.slot, v, scratch);
                    }
                    break kept.peek().expect("k arrivals are kept").0;
                }
                kept.push(Event(t + scratch.transfer[w] * message, w));
                if kept.len() > k {
                    kept.pop();
                }
            }
            let fresh = self.fresh(w, scratch);
            next.push(Reverse(Event(t + fresh, w)));
        };
        scratch.heap = next;
        scratch.kept = kept;
        end
    }
}

/// A speculative slot on order statistics: its slot, Q and F.
#[derive(Debug, Clone)]
pub(super) struct Copies {
    pub(super) slot: usize,
    pub(super) after: f64,
    pub(super) factor: f64,
}

/// One result on its way to the master.
#[derive(Debug, Clone, Copy)]
pub(super) struct Message {
    /// When its sender finished it.
    pub done: f64,
    /// The worker that sends it.
    pub sender: usize,
    /// What it completes: a task or a partition.
    pub tag: usize,
}
