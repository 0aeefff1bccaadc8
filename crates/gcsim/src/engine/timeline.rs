//! The discrete-event view of one trial.
//!
//! Worker i finishes at `times[i]`. The master takes finish events in time
//! order and stops at the first event after which the set of finished workers
//! satisfies the recovery rule; that event's time is the iteration time.
//! [`RuleState`] is the incremental form of [`Rule::decodable`]; the
//! closed-form evaluations in [`fast`] give the same answer without sorting
//! indices (k-th order statistic; max over frc groups of the group minimum).

use crate::scheme::Rule;

/// Incremental recovery state, fed one finished worker at a time.
#[derive(Debug, Clone)]
pub enum RuleState {
    /// Counting finished workers up to k.
    KOfN {
        /// Finished workers still needed.
        needed: usize,
    },
    /// Marking covered frc groups.
    Groups {
        /// Workers per group.
        size: usize,
        /// Whether each group has a finished worker.
        covered: Vec<bool>,
        /// Groups still uncovered.
        left: usize,
    },
}

impl RuleState {
    /// The state of `rule` on `n` workers before any has finished.
    pub fn new(rule: Rule, n: usize) -> Self {
        match rule {
            Rule::KOfN(k) => RuleState::KOfN { needed: k },
            Rule::Groups { size } => RuleState::Groups {
                size,
                covered: vec![false; n / size],
                left: n / size,
            },
        }
    }

    /// Records that `worker` finished; returns whether the master can now decode.
    pub fn finish(&mut self, worker: usize) -> bool {
        match self {
            RuleState::KOfN { needed } => {
                *needed = needed.saturating_sub(1);
                *needed == 0
            }
            RuleState::Groups { size, covered, left } => {
                let g = worker / *size;
                if !covered[g] {
                    covered[g] = true;
                    *left -= 1;
                }
                *left == 0
            }
        }
    }
}

/// The iteration time by walking finish events in time order.
///
/// `order` is scratch space. Costs O(n log n) for the sort.
pub fn completion_by_events(rule: Rule, times: &[f64], order: &mut Vec<usize>) -> f64 {
    order.clear();
    order.extend(0..times.len());
    order.sort_unstable_by(|&a, &b| times[a].total_cmp(&times[b]));
    let mut state = RuleState::new(rule, times.len());
    for &w in order.iter() {
        if state.finish(w) {
            return times[w];
        }
    }
    unreachable!("every rule is satisfied once all workers have finished")
}

/// The iteration time under a deadline `t` (the `timeout` scheme): the
/// master proceeds when the recovery rule is met (at `rule`), or at `t`
/// with the messages that have arrived, or, if none has arrived by `t`, at
/// the first arrival `first`: min(rule, max(t, first)).
#[inline]
pub(crate) fn with_deadline(rule: f64, t: f64, first: f64) -> f64 {
    rule.min(t.max(first))
}

/// Closed-form evaluations of the rules, equal to [`completion_by_events`].
pub mod fast {
    /// The k-th smallest time, from times sorted ascending.
    #[inline]
    pub(crate) fn k_of_n(sorted: &[f64], k: usize) -> f64 {
        sorted[k - 1]
    }

    /// Max over consecutive groups of `size` workers of the group's earliest time.
    #[inline]
    pub fn groups(times: &[f64], size: usize) -> f64 {
        times
            .chunks_exact(size)
            .map(|g| g.iter().copied().fold(f64::INFINITY, f64::min))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// [`groups`] for every size in `sizes` at once, into `out`: the max over
    /// consecutive groups of the group's minimum, of values or of ranks.
    ///
    /// One size costs n comparisons. With many sizes a sparse table of
    /// range minima (levels of minima over 2^j consecutive entries, built in
    /// n per level) answers each group in O(1), so `sizes` cost
    /// n·(levels) + Σ n/size: O(n log n) per trial for a whole frc sweep
    /// instead of n per configuration. The results are the same elements
    /// either way (minima and maxima select, they do not round).
    pub(crate) fn groups_all<T: Copy + PartialOrd>(v: &[T], sizes: &[usize], table: &mut Vec<T>, out: &mut Vec<T>) {
        #[inline(always)]
        fn min<T: PartialOrd>(a: T, b: T) -> T {
            if b < a { b } else { a }
        }
        #[inline(always)]
        fn max<T: PartialOrd>(a: T, b: T) -> T {
            if b > a { b } else { a }
        }
        out.clear();
        let n = v.len();
        let largest = sizes.iter().copied().max().unwrap_or(1);
        let levels = (usize::BITS - largest.leading_zeros()) as usize; // ⌊log2⌋ + 1
        if sizes.len() <= levels + 1 {
            for &size in sizes {
                let mut groups = v.chunks_exact(size).map(|g| g[1..].iter().copied().fold(g[0], min));
                let first = groups.next().expect("size divides n");
                out.push(groups.fold(first, max));
            }
            return;
        }
        table.clear();
        table.extend_from_slice(v);
        table.resize(levels * n, v[0]);
        for j in 1..levels {
            let half = 1 << (j - 1);
            let (done, rest) = table.split_at_mut(j * n);
            let (prev, level) = (&done[(j - 1) * n..], &mut rest[..n]);
            let cut = n.saturating_sub(half);
            for ((m, &x), &y) in level[..cut].iter_mut().zip(&prev[..cut]).zip(&prev[half..]) {
                *m = min(x, y);
            }
            level[cut..].copy_from_slice(&prev[cut..]);
        }
        for &size in sizes {
            let j = (usize::BITS - 1 - size.leading_zeros()) as usize;
            let (level, span) = (&table[j * n..(j + 1) * n], 1 << j);
            let mut groups = (0..n).step_by(size).map(|a| min(level[a], level[a + size - span]));
            let first = groups.next().expect("size divides n");
            out.push(groups.fold(first, max));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every size at once, by sparse table or one by one, equals [`fast::groups`].
        #[test]
        fn all_group_sizes_at_once(
            n in 1usize..300,
            seed in any::<u64>(),
            picks in prop::collection::vec(1usize..300, 0..40),
        ) {
            let v: Vec<f64> = (0..n).map(|i| ((i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as f64).collect();
            let sizes: Vec<usize> = picks.iter().map(|p| {
                let divisors: Vec<usize> = (1..=n).filter(|d| n % d == 0).collect();
                divisors[p % divisors.len()]
            }).collect();
            let (mut table, mut out) = (Vec::new(), Vec::new());
            fast::groups_all(&v, &sizes, &mut table, &mut out);
            let expected: Vec<f64> = sizes.iter().map(|&s| fast::groups(&v, s)).collect();
            prop_assert_eq!(out, expected);
        }
    }

    /// The earliest time t at which `decodable({i : times[i] ≤ t})` holds,
    /// by trying every worker's time: the definition, in O(n²).
    fn brute_force(rule: Rule, times: &[f64]) -> f64 {
        times
            .iter()
            .copied()
            .filter(|&t| rule.decodable(&times.iter().map(|&x| x <= t).collect::<Vec<_>>()))
            .fold(f64::INFINITY, f64::min)
    }

    proptest! {
        #[test]
        fn events_fast_and_definition_agree(
            times in prop::collection::vec(0.0f64..100.0, 1..40),
            k_frac in 0.0f64..1.0,
            g_pick in 0usize..40,
        ) {
            let n = times.len();
            let k = 1 + ((n - 1) as f64 * k_frac) as usize;
            let mut sorted = times.clone();
            sorted.sort_by(f64::total_cmp);
            let mut order = Vec::new();
            let rule = Rule::KOfN(k);
            let by_events = completion_by_events(rule, &times, &mut order);
            prop_assert_eq!(by_events, fast::k_of_n(&sorted, k));
            prop_assert_eq!(by_events, brute_force(rule, &times));

            let divisors: Vec<usize> = (1..=n).filter(|d| n % d == 0).collect();
            let size = divisors[g_pick % divisors.len()];
            let rule = Rule::Groups { size };
            let by_events = completion_by_events(rule, &times, &mut order);
            prop_assert_eq!(by_events, fast::groups(&times, size));
            prop_assert_eq!(by_events, brute_force(rule, &times));
            // Bounds: between the fastest and the slowest worker.
            prop_assert!(sorted[0] <= by_events && by_events <= sorted[n - 1]);
        }
    }
}
