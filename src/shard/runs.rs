//! Shards: the split of a run's trials into K parts that separate processes
//! compute, and the merge of their parts into the single run's outcome, bit
//! for bit (the pilot is a pure function of the seed; blocks of 2²⁰ trials
//! fold in index order; window tallies add).

use crate::engine::pass::PassTotals;
use crate::engine::{Options, Outcome, Progress, Started, TrialPlan};
use crate::stats::Moments;
use crate::stats::quantile::Tally;
use crate::study::Study;

/// The part of a run that shard `index` of `count` computes: its blocks'
/// power sums, and its window tallies and value ranges (see [`crate::shard`], which writes it).
#[derive(Debug, Clone, PartialEq)]
pub struct ShardPart {
    /// 0-based shard index.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
    /// Power sums of each block this shard ran, by block index.
    pub blocks: Vec<(u64, Vec<Moments>)>,
    /// Smallest and largest value per slot.
    pub range: Vec<(f64, f64)>,
    /// First-pass window tallies.
    pub tallies: Vec<Tally>,
}

/// The blocks shard `index` of `count` runs: a contiguous share of them.
pub fn shard_blocks(blocks: u64, index: u64, count: u64) -> std::ops::Range<u64> {
    let at = |i: u64| (blocks as u128 * i as u128 / count as u128) as u64;
    at(index)..at(index + 1)
}

/// Runs shard `index` of `count` of `study`: the pilot, then the first pass
/// over this shard's blocks only.
pub fn simulate_shard(study: &Study, index: u64, count: u64, progress: &dyn Progress) -> ShardPart {
    let plan = TrialPlan::new(study);
    let run = Started::new(&plan, study, &Options::default(), progress);
    let blocks = shard_blocks(run.runner.blocks(), index, count);
    let (blocks, range, tallies) = if run.pilot_is_whole_run() {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        let first = run.first_pass(blocks, progress);
        (first.blocks, first.totals.range, first.totals.tallies)
    };
    progress.finish();
    ShardPart {
        index,
        count,
        blocks,
        range,
        tallies,
    }
}

/// Why shards cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// Shards of different splits.
    #[error("shards of different splits: one is of {0}, another of {1}")]
    Counts(u64, u64),
    /// The same shard twice (1-based index, as in `--shard I/K`).
    #[error("shard {0}/{1} is given twice")]
    Duplicate(u64, u64),
    /// Shards are absent (1-based indices, ascending).
    #[error("{text} missing (give all {count} shard files)", text = missing(.0, *.1), count = .1)]
    Missing(Vec<u64>, u64),
    /// A shard's contents do not fit the study (1-based index).
    #[error("shard {0}/{1} does not fit the study: {2}")]
    Inconsistent(u64, u64, String),
}

/// `shard 3/20 is` or `shards 3, 7 and 12-15 of 20 are`: the absent
/// indices, runs of consecutive ones as ranges.
fn missing(indices: &[u64], count: u64) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &i in indices {
        match runs.last_mut() {
            Some(run) if run.1 + 1 == i => run.1 = i,
            _ => runs.push((i, i)),
        }
    }
    let text: Vec<String> = runs
        .iter()
        .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect();
    match text.as_slice() {
        [one] if indices.len() == 1 => format!("shard {one}/{count} is"),
        [init @ .., last] if !init.is_empty() => format!("shards {} and {last} of {count} are", init.join(", ")),
        _ => format!("shards {} of {count} are", text.join(", ")),
    }
}

/// Merges the parts of every shard of `study` into the outcome a single run
/// gives, bit for bit: the pilot is recomputed (it is a pure function of the
/// seed), blocks fold in index order, tallies add, and any quantile
/// refinement pass runs here.
pub fn merge_shards(study: &Study, parts: &[ShardPart], progress: &dyn Progress) -> Result<Outcome, MergeError> {
    let count = parts.first().map_or(1, |p| p.count);
    let mut seen = vec![false; count as usize];
    for p in parts {
        if p.count != count {
            return Err(MergeError::Counts(count, p.count));
        }
        if p.index >= count {
            return Err(MergeError::Inconsistent(
                p.index + 1,
                count,
                "index out of range".into(),
            ));
        }
        if std::mem::replace(&mut seen[p.index as usize], true) {
            return Err(MergeError::Duplicate(p.index + 1, count));
        }
    }
    let absent: Vec<u64> = (1..=count).filter(|&i| !seen[i as usize - 1]).collect();
    if !absent.is_empty() {
        return Err(MergeError::Missing(absent, count));
    }
    let plan = TrialPlan::new(study);
    let run = Started::new(&plan, study, &Options::default(), progress);
    if run.pilot_is_whole_run() {
        let outcome = run.whole_run_outcome(progress);
        progress.finish();
        return Ok(outcome);
    }
    let pass = run.first_pass_spec();
    let mut totals = PassTotals::new(&pass);
    let blocks = run.runner.blocks();
    let mut trials_of = vec![0u64; count as usize];
    for p in parts {
        let wrong = |what: String| MergeError::Inconsistent(p.index + 1, count, what);
        let own: Vec<u64> = p.blocks.iter().map(|b| b.0).collect();
        if !own.iter().copied().eq(shard_blocks(blocks, p.index, count)) {
            return Err(wrong("its blocks are not the ones its --shard runs".into()));
        }
        for (b, moments) in &p.blocks {
            if moments.len() != totals.moments.len() {
                return Err(wrong(format!("block {b} has the wrong number of configurations")));
            }
            let trials = run.runner.block_trials(*b);
            if moments.iter().any(|m| m.count() != trials || m.infinite() > trials) {
                return Err(wrong(format!("block {b}'s counts are not its {trials} trials")));
            }
            trials_of[p.index as usize] += trials;
        }
    }
    let mut ordered: Vec<&(u64, Vec<Moments>)> = parts.iter().flat_map(|p| &p.blocks).collect();
    ordered.sort_by_key(|b| b.0);
    for (_, moments) in ordered {
        for (t, m) in totals.moments.iter_mut().zip(moments) {
            t.merge(m);
        }
    }
    for p in parts {
        if p.range.len() != totals.range.len() || p.tallies.len() != totals.tallies.len() {
            return Err(MergeError::Inconsistent(
                p.index + 1,
                count,
                "wrong number of configurations or windows".into(),
            ));
        }
        for (r, pr) in totals.range.iter_mut().zip(&p.range) {
            *r = (r.0.min(pr.0), r.1.max(pr.1));
        }
        for (t, pt) in totals.tallies.iter_mut().zip(&p.tallies) {
            if t.counts.len() != pt.counts.len() || t.bin_range.len() != pt.bin_range.len() {
                return Err(MergeError::Inconsistent(
                    p.index + 1,
                    count,
                    "a window has the wrong number of bins".into(),
                ));
            }
            let held = pt.counts.iter().try_fold(pt.below, |a, &c| a.checked_add(c));
            if held.is_none_or(|h| h > trials_of[p.index as usize]) {
                return Err(MergeError::Inconsistent(
                    p.index + 1,
                    count,
                    "a window counts more values than the shard has trials".into(),
                ));
            }
            t.merge(pt);
        }
    }
    let outcome = run.finish(totals, progress);
    progress.finish();
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_shards_are_named_as_runs() {
        let say = |v: &[u64]| MergeError::Missing(v.to_vec(), 20).to_string();
        assert_eq!(say(&[3]), "shard 3/20 is missing (give all 20 shard files)");
        assert_eq!(say(&[3, 4]), "shards 3-4 of 20 are missing (give all 20 shard files)");
        assert_eq!(
            say(&[3, 7, 12, 13, 14, 15]),
            "shards 3, 7 and 12-15 of 20 are missing (give all 20 shard files)"
        );
    }
}
