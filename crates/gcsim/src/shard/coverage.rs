//! Sets of shards, as runs of consecutive 1-based indices: which shards a
//! file covers (one for `--shard I/K`, any set for `merge --partial`), which
//! a merge has read, and how errors name them (`shards 3, 7 and 12-15 of
//! 20`). Runs keep a set of thousands of shards, or of a crafted file's
//! 2⁶⁴ − 1, in a few numbers.

use std::collections::BTreeMap;

/// A non-empty set of shards of a split into `count`: ascending, disjoint
/// runs `(first, last)` of 1-based indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    runs: Vec<(u64, u64)>,
    count: u64,
}

impl Coverage {
    /// Shard `index` (1-based) of `count`.
    pub fn one(index: u64, count: u64) -> Result<Self, String> {
        Self::from_runs(vec![(index, index)], count)
    }

    /// The shards of `runs`, which must be ascending and disjoint, each
    /// `[first, last]` with 1 <= first <= last <= count.
    pub(crate) fn from_runs(runs: Vec<(u64, u64)>, count: u64) -> Result<Self, String> {
        if runs.is_empty() {
            return Err("covers no shard".into());
        }
        let mut after = 0;
        for &(first, last) in &runs {
            if first == 0 || first > last || last > count {
                return Err(format!(
                    "shards {first} to {last} of {count}: indices are 1 to {count}, first <= last"
                ));
            }
            if first <= after {
                return Err(format!("shard {first} of {count}: runs must ascend and not overlap"));
            }
            after = last;
        }
        Ok(Self { runs, count })
    }

    /// The runs of consecutive indices.
    pub fn runs(&self) -> &[(u64, u64)] {
        &self.runs
    }

    /// The number of shards of the split.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// `shard 3/20` or `shards 3, 7 and 12-15 of 20`.
    pub fn name(&self) -> String {
        name_runs(&self.runs, self.count)
    }

    /// Whether [`Self::name`] is plural.
    pub fn plural(&self) -> bool {
        is_plural(&self.runs)
    }
}

/// `shard 3/20` or `shards 3, 7 and 12-15 of 20`: runs of 1-based indices.
pub fn name_runs(runs: &[(u64, u64)], count: u64) -> String {
    let text: Vec<String> = runs
        .iter()
        .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect();
    match text.as_slice() {
        [one] if !is_plural(runs) => format!("shard {one}/{count}"),
        [init @ .., last] if !init.is_empty() => format!("shards {} and {last} of {count}", init.join(", ")),
        _ => format!("shards {} of {count}", text.join(", ")),
    }
}

/// Whether runs hold more than one index.
pub(crate) fn is_plural(runs: &[(u64, u64)]) -> bool {
    runs.len() > 1 || runs.first().is_some_and(|r| r.0 != r.1)
}

/// Shards already held: the repeated runs, and the inputs that held them
/// first, in index order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeated {
    /// Runs of 1-based indices.
    pub shards: Vec<(u64, u64)>,
    /// The inputs that hold them.
    pub holders: Vec<usize>,
}

/// The shards read so far, each with the number of the input that held
/// it: runs keyed by their first index.
#[derive(Debug, Clone, Default)]
pub struct Held {
    runs: BTreeMap<u64, (u64, usize)>,
}

impl Held {
    /// Records that input `by` holds `coverage`, unless some of its shards
    /// are already held.
    pub fn take(&mut self, coverage: &Coverage, by: usize) -> Result<(), Repeated> {
        let mut repeated = Vec::new();
        let mut holders = Vec::new();
        for &(a, b) in coverage.runs() {
            // Held runs are disjoint: those overlapping [a, b] start at or
            // before b, and are the last ones before b that end at or after a.
            let mut overlaps: Vec<(u64, u64, usize)> = self
                .runs
                .range(..=b)
                .rev()
                .take_while(|(_, (end, _))| *end >= a)
                .map(|(&start, &(end, who))| (start.max(a), end.min(b), who))
                .collect();
            overlaps.reverse();
            for (s, e, who) in overlaps {
                repeated.push((s, e));
                if !holders.contains(&who) {
                    holders.push(who);
                }
            }
        }
        if !repeated.is_empty() {
            return Err(Repeated {
                shards: repeated,
                holders,
            });
        }
        for &(a, b) in coverage.runs() {
            self.runs.insert(a, (b, by));
        }
        Ok(())
    }

    /// The runs of shards of 1 to `count` not held.
    pub fn missing(&self, count: u64) -> Vec<(u64, u64)> {
        let mut gaps = Vec::new();
        let mut next = 1;
        for (&start, &(end, _)) in &self.runs {
            if start > next {
                gaps.push((next, start - 1));
            }
            next = end.saturating_add(1);
        }
        if next <= count {
            gaps.push((next, count));
        }
        gaps
    }

    /// Everything held, as a coverage of `count` (`None` if nothing is);
    /// adjacent runs join.
    pub fn coverage(&self, count: u64) -> Option<Coverage> {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for (&start, &(end, _)) in &self.runs {
            match runs.last_mut() {
                Some(run) if run.1 + 1 == start => run.1 = end,
                _ => runs.push((start, end)),
            }
        }
        Coverage::from_runs(runs, count).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_named_and_checked() {
        let c = |runs: &[(u64, u64)]| Coverage::from_runs(runs.to_vec(), 20);
        assert_eq!(c(&[(3, 3)]).unwrap().name(), "shard 3/20");
        assert_eq!(c(&[(3, 4)]).unwrap().name(), "shards 3-4 of 20");
        assert_eq!(
            c(&[(3, 3), (7, 7), (12, 15)]).unwrap().name(),
            "shards 3, 7 and 12-15 of 20"
        );
        assert!(c(&[]).is_err());
        assert!(c(&[(0, 2)]).is_err());
        assert!(c(&[(3, 2)]).is_err());
        assert!(c(&[(3, 21)]).is_err());
        assert!(c(&[(3, 5), (5, 6)]).is_err());
        assert!(c(&[(7, 8), (3, 5)]).is_err());
    }

    #[test]
    fn held_shards_name_repeats_and_gaps() {
        let c = |runs: &[(u64, u64)]| Coverage::from_runs(runs.to_vec(), 20).unwrap();
        let mut held = Held::default();
        held.take(&c(&[(1, 5)]), 0).unwrap();
        held.take(&c(&[(8, 8), (10, 12)]), 1).unwrap();
        let repeated = |shards: &[(u64, u64)], holders: &[usize]| {
            Err(Repeated {
                shards: shards.to_vec(),
                holders: holders.to_vec(),
            })
        };
        assert_eq!(held.take(&c(&[(4, 9)]), 2), repeated(&[(4, 5), (8, 8)], &[0, 1]));
        assert_eq!(held.take(&c(&[(12, 20)]), 2), repeated(&[(12, 12)], &[1]));
        assert_eq!(held.missing(20), vec![(6, 7), (9, 9), (13, 20)]);
        held.take(&c(&[(6, 7)]), 3).unwrap();
        assert_eq!(held.coverage(20).unwrap().runs(), &[(1, 8), (10, 12)]);
    }
}
