//! Evaluation: each configuration's iteration time from a load group's
//! worker times: the finish times at its load, the arrivals under the
//! communication model, the recovery rule (or the real code's rank
//! condition), and the decoding time.

use super::*;

impl TrialPlan {
    /// Arrival times of `e`'s messages in `scratch.arrival`: its workers'
    /// finish times at its load, plus the transfers where messages take time.
    pub(super) fn arrivals_of(&self, e: &Eval, times: &[f64], scratch: &mut Scratch) {
        for (f, &x) in scratch.finish.iter_mut().zip(times) {
            *f = if self.model.is_monotone() {
                self.model.apply(e.load, x)
            } else {
                x
            };
        }
        if self.comm.transfers() {
            let message = self.messages[e.slot];
            self.comm.arrivals(
                &scratch.finish,
                &scratch.transfer,
                message,
                &mut scratch.order,
                &mut scratch.arrival,
            );
        } else {
            scratch.arrival.copy_from_slice(&scratch.finish);
        }
    }

    pub(super) fn evaluate(&self, group: &LoadGroup, times: &[f64], scratch: &mut Scratch, out: &mut [f64]) {
        if let Some(codes) = &self.codes {
            // Arrivals in time order; the shortest decodable prefix, by
            // bisection (decodability only grows as workers arrive).
            for e in &group.evals {
                self.arrivals_of(e, times, scratch);
                let arrival = &scratch.arrival;
                scratch.order.clear();
                scratch.order.extend(0..self.n);
                scratch
                    .order
                    .sort_unstable_by(|&a, &b| arrival[a].total_cmp(&arrival[b]).then(a.cmp(&b)));
                let code = &codes[e.slot];
                let (mut lo, mut hi) = (1, self.n);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if code.is_decodable(&scratch.order[..mid]) {
                        hi = mid
                    } else {
                        lo = mid + 1
                    }
                }
                out[e.slot] = arrival[scratch.order[lo - 1]];
            }
            return;
        }
        if self.comm.transfers() {
            // Each configuration's arrivals, judged by the event walk.
            for e in &group.evals {
                self.arrivals_of(e, times, scratch);
                out[e.slot] = completion_by_events(e.rule, &scratch.arrival, &mut scratch.order);
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
        for e in &group.evals {
            let raw = match (self.path, e.rule) {
                (RulePath::Fast, Rule::KOfN(k)) => fast::k_of_n(sorted, k),
                (RulePath::Fast, Rule::Groups { .. }) => scratch.group_times[e.group],
                (RulePath::Events, rule) => completion_by_events(rule, times, order),
            };
            out[e.slot] = if self.model.is_monotone() {
                self.model.apply(e.load, raw)
            } else {
                raw
            };
        }
    }
}
