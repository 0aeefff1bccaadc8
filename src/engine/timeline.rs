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

/// Closed-form evaluations of the rules, equal to [`completion_by_events`].
pub mod fast {
    /// The k-th smallest time, from times sorted ascending.
    #[inline]
    pub fn k_of_n(sorted: &[f64], k: usize) -> f64 {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
