//! Shards: the split of a run's trials into K parts that separate processes
//! compute, and the merge of their parts into the single run's outcome, bit
//! for bit (the pilot is a pure function of the seed; blocks of 2²⁰ trials
//! fold in index order; window tallies add).

use super::coverage::{is_plural, name_runs};
use crate::engine::{Options, Progress, Started, TrialPlan};
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
pub(crate) fn shard_blocks(blocks: u64, index: u64, count: u64) -> std::ops::Range<u64> {
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

/// Why shard files cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A file that cannot be used, or files of different studies.
    #[error(transparent)]
    File(#[from] crate::shard::ShardError),
    /// Shards of different splits.
    #[error("{first} and {file} are shards of different splits (into {count} and {found} shards)")]
    Counts {
        /// The first file read.
        first: String,
        /// The file of another split.
        file: String,
        /// The first file's number of shards.
        count: u64,
        /// This file's.
        found: u64,
    },
    /// Shards given twice: in `file`, and before it in `earlier`.
    #[error("{file}: {} given twice ({})", subject(.shards, *.count, "is", "are"), also(.file, .earlier))]
    Repeated {
        /// The file read last.
        file: String,
        /// The shards it repeats, as runs of 1-based indices.
        shards: Vec<(u64, u64)>,
        /// Number of shards.
        count: u64,
        /// The files read before that hold them.
        earlier: Vec<String>,
    },
    /// Shards are absent (runs of 1-based indices, ascending).
    #[error("{} missing (give all {count} shard files)", subject(.0, *.1, "is", "are"), count = .1)]
    Missing(Vec<(u64, u64)>, u64),
    /// A file's contents do not fit the study.
    #[error("{file}: {} not fit the study: {what}", subject(.shards, *.count, "does", "do"))]
    Inconsistent {
        /// The file.
        file: String,
        /// The shards it stands for, as runs of 1-based indices.
        shards: Vec<(u64, u64)>,
        /// Number of shards.
        count: u64,
        /// What is wrong.
        what: String,
    },
}

/// `shard 3/20 is` or `shards 3, 7 and 12-15 of 20 are`.
fn subject(runs: &[(u64, u64)], count: u64, one: &str, many: &str) -> String {
    let verb = if is_plural(runs) { many } else { one };
    format!("{} {verb}", name_runs(runs, count))
}

/// `also in a.json`, `also in a.json and 3 other files`, or that the
/// file itself was given twice.
fn also(file: &str, earlier: &[String]) -> String {
    match earlier {
        [one] if one == file => "the same file is given twice".into(),
        [one] => format!("also in {one}"),
        [first, rest @ ..] => format!("also in {first} and {} other files", rest.len()),
        [] => "also in an earlier file".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_shards_are_named_as_runs() {
        let say = |v: &[(u64, u64)]| MergeError::Missing(v.to_vec(), 20).to_string();
        assert_eq!(say(&[(3, 3)]), "shard 3/20 is missing (give all 20 shard files)");
        assert_eq!(say(&[(3, 4)]), "shards 3-4 of 20 are missing (give all 20 shard files)");
        assert_eq!(
            say(&[(3, 3), (7, 7), (12, 15)]),
            "shards 3, 7 and 12-15 of 20 are missing (give all 20 shard files)"
        );
    }
}
