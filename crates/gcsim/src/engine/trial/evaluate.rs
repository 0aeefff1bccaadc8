//! Evaluation: each configuration's iteration time from a load group's
//! worker times: the finish times at its load, the arrivals under the
//! communication model, the recovery rule (or the real code's rank
//! condition), and the decoding time.

use super::*;

impl TrialPlan {
    /// Arrival times of `e`'s messages in `scratch.arrival`: its workers'
    /// finish times at its load, plus the transfers where messages take time.
    ///
    /// Where the workers' loads differ, each worker's finish time is at its
    /// own load: the monotone models scale the raw draw in `times`; under
    /// `additive` it is the sum of that worker's first ⌊ℓ⌋ unit draws (and
    /// the fraction of the next) in `scratch.draws`.
    pub(super) fn arrivals_of(&self, e: &Eval, times: &[f64], scratch: &mut Scratch) {
        match &e.worker_loads {
            None => {
                for (f, &x) in scratch.finish.iter_mut().zip(times) {
                    *f = if self.model.is_monotone() {
                        self.model.apply(e.load, x)
                    } else {
                        x
                    };
                }
            }
            Some(loads) if self.model.is_monotone() => {
                for ((f, &x), &l) in scratch.finish.iter_mut().zip(times).zip(loads.iter()) {
                    *f = self.model.apply(l, x);
                }
            }
            Some(loads) => {
                for (i, (f, &l)) in scratch.finish.iter_mut().zip(loads.iter()).enumerate() {
                    *f = additive_time(&scratch.draws, self.n, i, l);
                }
            }
        }
        self.deliver(
            e,
            &scratch.finish,
            &scratch.transfer,
            &mut scratch.order,
            &mut scratch.arrival,
        );
    }

    /// Arrival times at the master of `e`'s results done at `finish` by
    /// senders whose full-gradient transfer times are `transfer`: the
    /// communication model where messages take time, `finish` itself
    /// otherwise. `order` is scratch space.
    pub(super) fn deliver(&self, e: &Eval, finish: &[f64], transfer: &[f64], order: &mut Vec<usize>, out: &mut [f64]) {
        if self.delivery.comm.transfers() {
            let message = self.delivery.messages[e.slot];
            self.delivery.comm.arrivals(finish, transfer, message, order, out);
        } else {
            out.copy_from_slice(finish);
        }
    }

    /// Each configuration of `group`'s time from the group's worker
    /// `times`, into `out`; under a collective, each deadline's
    /// participants too.
    pub(super) fn evaluate(&self, group: &LoadGroup, times: &[f64], scratch: &mut Scratch, out: &mut [f64]) {
        self.evaluate_rules(group, times, scratch, out);
        if self.delivery.collective.is_some() {
            self.count_participants(group, times, scratch, out);
        }
    }

    /// Under a collective, the participants of each deadline of `group`
    /// whose time is in `out`: the workers whose results are in by then
    /// (at least the first, as [`with_deadline`] proceeds at the first
    /// arrival where none is in by the deadline), the count the master's
    /// `timeout` takes its update from.
    fn count_participants(&self, group: &LoadGroup, times: &[f64], scratch: &mut Scratch, out: &[f64]) {
        for e in group.evals.iter().filter(|e| e.deadline.is_some()) {
            self.arrivals_of(e, times, scratch);
            let end = out[e.slot];
            scratch.participants[e.slot] = scratch.arrival.iter().filter(|&&a| a <= end).count();
        }
    }

    fn evaluate_rules(&self, group: &LoadGroup, times: &[f64], scratch: &mut Scratch, out: &mut [f64]) {
        let mut ruled = group.evals.iter().filter(|e| e.strategy.is_none()).peekable();
        for e in &group.evals {
            if let Some(strategy) = e.strategy {
                out[e.slot] = self.strategy_time(e, strategy, times, scratch);
            }
        }
        if ruled.peek().is_none() {
            return;
        }
        if let Some(codes) = &self.delivery.codes {
            for e in ruled {
                self.arrivals_of(e, times, scratch);
                let done = match &codes[e.slot] {
                    Some(code) => shortest_decodable(code, &scratch.arrival, &mut scratch.order),
                    None => completion_by_events(e.rule, &scratch.arrival, &mut scratch.order),
                };
                out[e.slot] = deadline_of(e, done, &scratch.arrival);
            }
            return;
        }
        if self.delivery.comm.transfers() {
            if self.path == RulePath::Fast {
                self.evaluate_with_transfers(group, times, scratch, out);
                return;
            }
            // Each configuration's arrivals, judged by the event walk.
            for e in ruled {
                self.arrivals_of(e, times, scratch);
                let done = completion_by_events(e.rule, &scratch.arrival, &mut scratch.order);
                out[e.slot] = deadline_of(e, done, &scratch.arrival);
            }
            return;
        }
        let (sorted, order) = (&mut scratch.sorted, &mut scratch.order);
        let replayed = self.replay_sorted.as_ref().zip(scratch.carried.replayed_step);
        if let (true, Some((steps, step))) = (group.needs_sort, replayed) {
            // The replayed step's times, sorted once for the whole run.
            sorted.copy_from_slice(&steps[step * self.n..(step + 1) * self.n]);
        } else if group.needs_sort {
            sorted.copy_from_slice(times);
            match group.only_k {
                // One order statistic: selected, the same element a sort puts there.
                Some(k) => {
                    sorted.select_nth_unstable_by(k - 1, f64::total_cmp);
                }
                None => sort_floats(sorted, &mut scratch.sort),
            }
        }
        if self.path == RulePath::Fast && !group.group_sizes.is_empty() {
            fast::groups_all(
                times,
                &group.group_sizes,
                &mut scratch.group_table,
                &mut scratch.group_times,
            );
        }
        // The fastest raw time, once per group where a deadline reads it.
        let mut fastest = None;
        for e in ruled {
            let raw = match (self.path, e.rule) {
                (RulePath::Fast, Rule::KOfN(k)) => fast::k_of_n(sorted, k),
                (RulePath::Fast, Rule::Groups { .. }) => scratch.group_times[e.group],
                (RulePath::Events, rule) => completion_by_events(rule, times, order),
            };
            let apply = |raw| {
                if self.model.is_monotone() {
                    self.model.apply(e.load, raw)
                } else {
                    raw
                }
            };
            out[e.slot] = match e.deadline {
                // The load model is increasing, so the first finish is that
                // of the fastest raw time.
                Some(t) => {
                    let first = *fastest.get_or_insert_with(|| times.iter().copied().fold(f64::INFINITY, f64::min));
                    with_deadline(apply(raw), t, apply(first))
                }
                None => apply(raw),
            };
        }
    }
}

impl TrialPlan {
    /// The rule of each configuration of `group` on its arrivals where
    /// messages take time, by closed forms instead of the event walk, with
    /// the same result bit for bit: a k-of-n rule ends at the k-th smallest
    /// arrival, a group rule at the largest of the groups' earliest arrivals.
    ///
    /// Configurations whose finish times and message size are the same
    /// (every load under `fixed`, one message size) share one set of
    /// arrivals. On a dedicated link the arrivals are sorted once per set.
    /// On a shared link the master serves messages in the order they are
    /// done, which is the order of the raw times under every load model
    /// (each is increasing in the draw, and a load group shares its times
    /// under `additive`): the queue is ordered once per trial, and its
    /// departures, a_(j) = max(a_(j−1), f_(j)) + c_(j)·m, are nondecreasing,
    /// so they are the sorted arrivals with no sort at all. With a constant
    /// transfer time and only k-of-n rules, which worker is where in the
    /// queue does not matter: the raw times are sorted, without indices.
    fn evaluate_with_transfers(&self, group: &LoadGroup, times: &[f64], scratch: &mut Scratch, out: &mut [f64]) {
        let shared = self.delivery.comm.link == crate::comm::Link::Shared;
        let ruled = || group.evals.iter().filter(|e| e.strategy.is_none());
        let by_worker = self.delivery.comm.comm_time().is_none()
            || ruled().any(|e| matches!(e.rule, Rule::Groups { .. }) || e.worker_loads.is_some());
        let mut queued = false;
        // The (load, message) whose arrivals are in `scratch.arrival` (or,
        // without `by_worker`, only sorted), and whether `scratch.sorted`
        // holds them sorted.
        let mut current: Option<(u64, u64)> = None;
        let mut sorted = false;
        for e in ruled() {
            if e.worker_loads.is_some() {
                // Workers' loads differ: the general walk.
                self.arrivals_of(e, times, scratch);
                let done = completion_by_events(e.rule, &scratch.arrival, &mut scratch.order);
                out[e.slot] = deadline_of(e, done, &scratch.arrival);
                current = None;
                continue;
            }
            let message = self.delivery.messages[e.slot];
            let load = if matches!(self.model, LoadModel::Fixed | LoadModel::Additive) {
                0.0
            } else {
                e.load
            };
            let key = (load.to_bits(), message.to_bits());
            if current != Some(key) {
                self.transfer_all(e.load, message, times, scratch, (shared, by_worker), &mut queued);
                sorted = shared || self.sampling == Sampling::Spacings;
                current = Some(key);
            }
            let done = match e.rule {
                Rule::KOfN(k) => {
                    if !sorted {
                        scratch.sorted.copy_from_slice(&scratch.arrival);
                        sort_floats(&mut scratch.sorted, &mut scratch.sort);
                        sorted = true;
                    }
                    fast::k_of_n(&scratch.sorted, k)
                }
                Rule::Groups { size } => fast::groups(&scratch.arrival, size),
            };
            out[e.slot] = match e.deadline {
                Some(t) => {
                    let first = if sorted {
                        scratch.sorted[0]
                    } else {
                        scratch.arrival.iter().copied().fold(f64::INFINITY, f64::min)
                    };
                    with_deadline(done, t, first)
                }
                None => done,
            };
        }
    }

    /// Each worker's arrival at the master for a load and a message size:
    /// its finish plus its transfer, queued on one link when `shared`, into
    /// `scratch.arrival`, or in arrival order into `scratch.sorted` where
    /// the link is shared or the times are the sorted sample. `queued` says
    /// whether `scratch` already holds this trial's queue order.
    #[inline]
    fn transfer_all(
        &self,
        load: f64,
        message: f64,
        times: &[f64],
        scratch: &mut Scratch,
        (shared, by_worker): (bool, bool),
        queued: &mut bool,
    ) {
        let finish = |x: f64| {
            if self.model.is_monotone() {
                self.model.apply(load, x)
            } else {
                x
            }
        };
        match (shared, by_worker) {
            // The times are the sorted sample: the queue's order,
            // and with the same transfer for all, arrivals in order.
            _ if self.sampling == Sampling::Spacings => {
                let c = self
                    .delivery
                    .comm
                    .comm_time()
                    .expect("spacings: a constant transfer time")
                    * message;
                let mut free = f64::NEG_INFINITY;
                for (a, &x) in scratch.sorted.iter_mut().zip(times) {
                    *a = if shared { free.max(finish(x)) + c } else { finish(x) + c };
                    free = *a;
                }
            }
            (true, false) => {
                if !*queued {
                    scratch.queue.clear();
                    scratch.queue.extend_from_slice(times);
                    sort_floats(&mut scratch.queue, &mut scratch.sort);
                    *queued = true;
                }
                let c = self.delivery.comm.comm_time().expect("a constant transfer time") * message;
                let mut free = f64::NEG_INFINITY;
                for (a, &x) in scratch.sorted.iter_mut().zip(&scratch.queue) {
                    free = free.max(finish(x)) + c;
                    *a = free;
                }
            }
            (true, true) => {
                for (f, &x) in scratch.finish.iter_mut().zip(times) {
                    *f = finish(x);
                }
                if !*queued {
                    argsort_floats(times, &mut scratch.order, &mut scratch.sort);
                }
                // Ties the load made are served in worker order, which
                // reorders the queue: order it anew for the next load.
                *queued = !serve_in_order(
                    &scratch.finish,
                    &scratch.transfer,
                    message,
                    &mut scratch.order,
                    &mut scratch.arrival,
                    &mut scratch.sorted,
                );
            }
            (false, _) => {
                for ((a, &x), &c) in scratch.arrival.iter_mut().zip(times).zip(&scratch.transfer) {
                    *a = finish(x) + c * message;
                }
            }
        }
    }
}

/// The shared link's first-come-first-served queue (as
/// [`Comm::arrivals`](crate::comm::Comm::arrivals)) over workers already in
/// the order of their raw times: each worker's arrival in `arrival`, and
/// the departures in queue order, which are the arrivals sorted, in
/// `sorted`. Where the load rounds two raw times to the same finish time,
/// those workers are first put back in worker order, as the queue takes
/// them; returns whether that happened.
fn serve_in_order(
    finish: &[f64],
    transfer: &[f64],
    message: f64,
    order: &mut [usize],
    arrival: &mut [f64],
    sorted: &mut [f64],
) -> bool {
    let n = order.len();
    let mut reordered = false;
    let mut a = 0;
    while a < n {
        let mut b = a + 1;
        while b < n && finish[order[b]] == finish[order[a]] {
            b += 1;
        }
        if b - a > 1 && !order[a..b].is_sorted() {
            order[a..b].sort_unstable();
            reordered = true;
        }
        a = b;
    }
    let mut free = f64::NEG_INFINITY;
    for (j, &w) in order.iter().enumerate() {
        free = free.max(finish[w]) + transfer[w] * message;
        arrival[w] = free;
        sorted[j] = free;
    }
    reordered
}

/// `done`, the time the master could decode, cut short by `e`'s deadline
/// where it has one, given every message's arrival.
fn deadline_of(e: &Eval, done: f64, arrival: &[f64]) -> f64 {
    match e.deadline {
        Some(t) => with_deadline(done, t, arrival.iter().copied().fold(f64::INFINITY, f64::min)),
        None => done,
    }
}

/// The time at which the master can first decode `code` from the messages
/// arriving at `arrival`: the arrival of the last worker of the shortest
/// decodable prefix in arrival order ([`Code::shortest_decodable_prefix`]);
/// infinite when even every worker's message does not decode (a code that
/// fails numerically). `order` is scratch space.
fn shortest_decodable(code: &Code, arrival: &[f64], order: &mut Vec<usize>) -> f64 {
    let n = arrival.len();
    order.clear();
    order.extend(0..n);
    order.sort_unstable_by(|&a, &b| arrival[a].total_cmp(&arrival[b]).then(a.cmp(&b)));
    match code.shortest_decodable_prefix(order) {
        Some(len) => arrival[order[len - 1]],
        None => f64::INFINITY,
    }
}
