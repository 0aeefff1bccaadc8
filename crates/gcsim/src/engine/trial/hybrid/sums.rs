//! A stage's gradient sum across the data-parallel replicas: which
//! replicas it waits for (the scheme's rule or a deadline), bucket by
//! bucket, and what each bucket's collective costs.

use crate::collective::{BucketCost, Collective};
use crate::engine::timeline::with_deadline;
use crate::scheme::Rule;

/// The replicas whose gradients are summed, for replicas that end at
/// `ends`: the first k, the first of each group, or those in by the
/// deadline's time (see [`deadline_time`]).
pub(super) fn participants(decide: Decide, ends: &[f64]) -> Vec<usize> {
    let rule = match decide {
        Decide::Rule(rule) => rule,
        Decide::Deadline(t) => {
            let at = deadline_time(t, ends).0;
            return (0..ends.len()).filter(|&d| ends[d] <= at).collect();
        }
    };
    let mut order: Vec<usize> = (0..ends.len()).collect();
    order.sort_by(|&a, &b| ends[a].total_cmp(&ends[b]).then(a.cmp(&b)));
    let mut chosen = match rule {
        Rule::KOfN(k) => order[..k].to_vec(),
        Rule::Groups { size } => (0..ends.len() / size)
            .map(|g| {
                (g * size..(g + 1) * size)
                    .min_by(|&a, &b| ends[a].total_cmp(&ends[b]))
                    .expect("a group")
            })
            .collect(),
    };
    chosen.sort_unstable();
    chosen
}

/// How a stage's sum across the replicas is decided: by the scheme's rule,
/// or by a deadline T from the iteration's start (`timeout`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Decide {
    Rule(Rule),
    Deadline(f64),
}

/// A stage's gradient sum across the replicas: in K buckets, bucket j ready
/// on a replica j/K of the way through its last backward (the gradient
/// accumulates over the microbatches, so only the last backward overlaps
/// the sums), each summed once it is decided over the replicas' bucket and
/// the previous bucket's sum has ended. A rule's bucket costs the same in
/// every trial; a deadline's, that of the replicas in by it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sum<'a> {
    pub(super) decide: Decide,
    pub(super) buckets: usize,
    pub(super) cost: BucketCost,
    pub(super) collective: Option<&'a Collective>,
}

impl Sum<'_> {
    /// When a bucket ready on the replicas at `ready` is decided, and how
    /// many replicas' gradients its sum holds.
    fn decide(&self, ready: &[f64], column: &mut Vec<f64>) -> (f64, usize) {
        match self.decide {
            Decide::Rule(rule) => (
                rule_time(rule, ready, column),
                Collective::participants(rule, ready.len()),
            ),
            Decide::Deadline(t) => deadline_time(t, ready),
        }
    }

    /// One bucket's sum among `p` of `n` replicas.
    fn cost(&self, p: usize, n: usize) -> f64 {
        match (self.cost, self.collective) {
            (BucketCost::Fixed(cost), _) => cost,
            (counted, Some(c)) => counted.of(c, p, n),
            (BucketCost::Counted { .. }, None) => unreachable!("a counted cost is a collective's"),
        }
    }

    /// When the first bucket's sum starts and the last one's ends, and the
    /// mean over buckets of the replicas summed, for replicas whose last
    /// backward ends at `ends` after lasting `tails` (read only where there
    /// are several buckets).
    pub(super) fn span(
        &self,
        ends: &[f64],
        tails: &[f64],
        ready: &mut Vec<f64>,
        column: &mut Vec<f64>,
    ) -> (f64, f64, f64) {
        let n = ends.len();
        if self.buckets == 1 {
            let (t, p) = self.decide(ends, column);
            return (t, t + self.cost(p, n), p as f64);
        }
        let k = self.buckets as f64;
        let (mut first, mut end, mut summed) = (f64::NAN, f64::NEG_INFINITY, 0);
        for j in 1..=self.buckets {
            let left = 1.0 - j as f64 / k;
            ready.clear();
            ready.extend(ends.iter().zip(tails).map(|(g, b)| g - left * b));
            let (t, p) = self.decide(ready, column);
            let start = t.max(end);
            if j == 1 {
                first = start;
            }
            end = start + self.cost(p, n);
            summed += p;
        }
        (first, end, summed as f64 / k)
    }
}

/// Under a deadline `t`, when replicas ready at `ready` are summed and how
/// many: at min(t, the last), those ready by then; where none is ready by
/// t, at the first (with any tied with it), as the flat cluster's
/// `timeout` proceeds.
fn deadline_time(t: f64, ready: &[f64]) -> (f64, usize) {
    let (first, last) = ready.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
        (lo.min(r), hi.max(r))
    });
    let at = with_deadline(last, t, first);
    (at, ready.iter().filter(|&&r| r <= at).count())
}

/// When `rule` is met by replicas that end at `ends`.
fn rule_time(rule: Rule, ends: &[f64], column: &mut Vec<f64>) -> f64 {
    match rule {
        Rule::KOfN(k) if k == ends.len() => ends.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Rule::KOfN(k) => {
            column.clear();
            column.extend_from_slice(ends);
            *column.select_nth_unstable_by(k - 1, f64::total_cmp).1
        }
        Rule::Groups { size } => ends
            .chunks(size)
            .map(|g| g.iter().copied().fold(f64::INFINITY, f64::min))
            .fold(f64::NEG_INFINITY, f64::max),
    }
}
