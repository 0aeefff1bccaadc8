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

    pub(super) fn evaluate(&self, group: &LoadGroup, times: &[f64], scratch: &mut Scratch, out: &mut [f64]) {
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
            // Each configuration's arrivals, judged by the event walk.
            for e in ruled {
                self.arrivals_of(e, times, scratch);
                let done = completion_by_events(e.rule, &scratch.arrival, &mut scratch.order);
                out[e.slot] = deadline_of(e, done, &scratch.arrival);
            }
            return;
        }
        let (sorted, order) = (&mut scratch.sorted, &mut scratch.order);
        if group.needs_sort {
            sorted.copy_from_slice(times);
            sort_floats(sorted, &mut scratch.sort);
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
/// decodable prefix in arrival order, found by bisection (decodability only
/// grows as workers arrive); infinite when even every worker's message does
/// not decode (a code that fails numerically). `order` is scratch space.
fn shortest_decodable(code: &Code, arrival: &[f64], order: &mut Vec<usize>) -> f64 {
    let n = arrival.len();
    order.clear();
    order.extend(0..n);
    order.sort_unstable_by(|&a, &b| arrival[a].total_cmp(&arrival[b]).then(a.cmp(&b)));
    if !code.is_decodable(order) {
        return f64::INFINITY;
    }
    let (mut lo, mut hi) = (1, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if code.is_decodable(&order[..mid]) {
            hi = mid
        } else {
            lo = mid + 1
        }
    }
    arrival[order[lo - 1]]
}
