//! Deadlines on the order statistics: a slot whose rule's time a deadline
//! T cuts short ends at min(rule, max(T, first)), `first` the fastest
//! worker's time (see [`super::super::timeline::with_deadline`]). Where the
//! top block is not every worker, the fastest is drawn below it from a
//! stream of its own, and only where some slot's value depends on it.

use super::*;

/// A slot whose rule's time a deadline cuts short (see
/// [`TrialPlan::apply_deadlines`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadline {
    pub(super) slot: usize,
    /// The deadline.
    pub(super) t: f64,
    /// The least uniform V of the fastest worker's draw (see
    /// [`bisection::fastest_uniform`]) from which that worker's time at the
    /// slot's load is surely before the deadline (see
    /// [`TrialPlan::fastest_clear_from`]).
    pub(super) clear_from: f64,
}

impl TrialPlan {
    /// Each deadline's `clear_from`, once the block is known.
    pub(super) fn plan_deadlines(&mut self) {
        // Deadlines read the fastest time this way by order statistics
        // alone (see `order_statistics_apply`: monotone loads).
        let below = self.n - self.order.block;
        let by_order = self.sampling == Sampling::OrderStatistics && self.model.is_monotone();
        let clear: Vec<f64> = (self.order.deadlines.iter())
            .map(|d| match by_order {
                true => self.fastest_clear_from(self.slot_loads[d.slot], d.t, below),
                false => f64::INFINITY,
            })
            .collect();
        for (d, c) in self.order.deadlines.iter_mut().zip(clear) {
            d.clear_from = c;
        }
    }

    /// Each deadline slot's time cut short by its deadline, from its rule's
    /// time in `out` and the fastest worker's (see
    /// [`super::timeline::with_deadline`]).
    // Out of line, so that the trial's loop without deadlines is as compact
    // as before they took this path.
    #[inline(never)]
    pub(super) fn apply_deadlines(&self, seed: u64, trial: u64, scratch: &Scratch, out: &mut [f64]) {
        // Where the fastest time is surely before a slot's deadline,
        // max(t, first) is t and the fastest need not be known: where the
        // lowest drawn time is before it (by a margin above any rounding of
        // the law), or the fastest's uniform is at least the slot's
        // `clear_from`. Where the rule's time is before it, so is the
        // fastest.
        let lowest = self.law_of_standard(scratch.sorted[self.n - self.order.block]);
        let clear = |d: &Deadline| {
            let bound = self.model.apply(self.slot_loads[d.slot], lowest);
            bound + bound.abs() * 1e-9 <= d.t
        };
        let fastest = if self.order.split.is_none() {
            Some(scratch.sorted[0])
        } else if self.order.deadlines.iter().all(clear) {
            None
        } else {
            let v = super::bisection::fastest_v(seed, trial);
            let surely = |d: &Deadline| out[d.slot] <= d.t || v >= d.clear_from;
            (!self.order.deadlines.iter().all(surely)).then(|| self.fastest_standard(v, scratch))
        };
        let fastest = fastest.map(|e| self.law_of_standard(e));
        for d in &self.order.deadlines {
            out[d.slot] = match fastest {
                Some(fastest) => with_deadline(out[d.slot], d.t, self.model.apply(self.slot_loads[d.slot], fastest)),
                None => out[d.slot].min(d.t),
            };
        }
    }

    /// The least V (see [`Self::fastest_standard`]) from which the fastest
    /// worker's time at `load` is surely before `t`, `below` uniforms lying
    /// under the lowest drawn: with ε the largest standard exponential whose
    /// time at `load` is before t by the margin of `apply_deadlines`
    /// (bisected once, on the law as the trial computes it), E_(1) ≤ ε once
    /// U_(1) ≤ 1 − e^(−ε), and U_(1) = U_(k₀)·(1 − V^(1/below)) ≤ 1 −
    /// V^(1/below), so V ≥ e^(−below·ε) suffices. Infinite where no time is
    /// before t, or no uniform lies below.
    pub(super) fn fastest_clear_from(&self, load: f64, t: f64, below: usize) -> f64 {
        let before = |e: f64| {
            let x = self.model.apply(load, self.law_of_standard(e));
            x + x.abs() * 1e-9 <= t
        };
        if below == 0 || !before(0.0) {
            return f64::INFINITY;
        }
        let (mut lo, mut hi) = (0.0, 1.0);
        while before(hi) {
            if hi > 4096.0 {
                return 0.0;
            }
            (lo, hi) = (hi, 2.0 * hi);
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if before(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // Above e^(−below·ε) by more than its rounding.
        (-(below as f64) * lo).exp() * (1.0 + 1e-12)
    }

    /// The smallest standard exponential E_(1) of the trial whose top block
    /// is drawn, where the block is not every worker (where it is, E_(1) is
    /// its lowest value), at the V of the trial's own stream (see
    /// [`bisection::fastest_v`]), so that the trial's
    /// other draws, and every other configuration's values, stay as they
    /// are: given U_(k₀) = 1 − e^(−E_(k₀)), the lowest of the top block,
    /// the k₀ − 1 uniforms below it are i.i.d. on (0, U_(k₀)) (David &
    /// Nagaraja 2003, §2.5), so their minimum is U_(k₀)·(1 − V^(1/(k₀−1)))
    /// for V uniform on (0, 1]. The pair (E_(1), E_(n)) has its exact joint
    /// law, since both are drawn given U_(k₀) as the sample's; the lower
    /// values that deep tolerances draw on demand are not conditioned on
    /// this E_(1), so a deadline pairs exactly with the uncoded time, not
    /// with those.
    pub(super) fn fastest_standard(&self, v: f64, scratch: &Scratch) -> f64 {
        let below = self.n - self.order.block; // k₀ − 1
        let lowest = -(-scratch.sorted[below]).exp_m1();
        -(-super::bisection::fastest_uniform_at(v, lowest, below)).ln_1p()
    }
}
