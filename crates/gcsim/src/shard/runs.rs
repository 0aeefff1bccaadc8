//! Shards: the split of a run's trials into K parts that separate processes
//! compute, and the merge of their parts into the single run's outcome, bit
//! for bit.
//!
//! A run whose values all fit in [`VALUE_BYTES`] is split by trials: shard
//! I of K simulates a contiguous share of the trials and keeps their
//! values, and the merge runs the engine on all of them, reading where it
//! would simulate (any K up to the number of trials). A longer run is split
//! by whole blocks of 2²⁰ trials where K allows, else by chunks of
//! [`CHUNK`] trials: each shard recomputes the pilot (a pure function of
//! the seed) and keeps the power sums of the blocks it covers whole and of
//! each chunk of a block it covers in part; the merge folds chunks in order
//! into their block and blocks in order into the total, as one process
//! does, and window tallies add.

use std::ops::Range;

use super::coverage::{is_plural, name_runs};
use crate::engine::{BLOCK_CHUNKS, CHUNK, Options, Progress, Started, TrialPlan, block_count, chunk_count};
use crate::stats::Moments;
use crate::stats::quantile::Tally;
use crate::study::Study;

/// A run whose values take at most this many bytes (8 per trial and
/// configuration, the baseline included) is split by trials, its shards
/// keeping their values (in files a third larger, as base64): the shards
/// share all the work, and the merge simulates nothing. A longer run is
/// split by blocks or chunks into files of kilobytes.
pub const VALUE_BYTES: u64 = 64 << 20;

/// How a run's trials are split into shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// By trials, each shard keeping its trials' values.
    Values,
    /// By whole blocks of 2²⁰ trials, each shard keeping their power sums.
    Blocks,
    /// By chunks of [`CHUNK`] trials, where there are more shards than
    /// blocks: each shard keeps the power sums of the blocks it runs whole
    /// and of the chunks of those it runs in part.
    Chunks,
}

impl Split {
    /// The split of `study`'s trials into `count` shards.
    pub fn of(study: &Study, count: u64) -> Self {
        if keeps_values(study) {
            Self::Values
        } else if count <= block_count(study.trials()) {
            Self::Blocks
        } else {
            Self::Chunks
        }
    }

    /// The units (trials, blocks or chunks) the split divides.
    fn units(self, trials: u64) -> u64 {
        match self {
            Self::Values => trials,
            Self::Blocks => block_count(trials),
            Self::Chunks => chunk_count(trials),
        }
    }

    /// What shard `index` (0-based) of `count` runs of a run of `trials`:
    /// a contiguous range of trials where the split keeps values, of
    /// chunks otherwise.
    pub fn range(self, trials: u64, index: u64, count: u64) -> Range<u64> {
        let units = self.units(trials);
        let at = |i: u64| (units as u128 * i as u128 / count as u128) as u64;
        match self {
            Self::Blocks => {
                let chunk = |b: u64| b.saturating_mul(BLOCK_CHUNKS).min(chunk_count(trials));
                chunk(at(index))..chunk(at(index + 1))
            }
            _ => at(index)..at(index + 1),
        }
    }

    /// The most shards `study` splits into: one trial, or one chunk, each.
    pub fn max_shards(study: &Study) -> u64 {
        if keeps_values(study) {
            study.trials()
        } else {
            chunk_count(study.trials())
        }
    }
}

/// Whether `study`'s values fit in [`VALUE_BYTES`].
fn keeps_values(study: &Study) -> bool {
    let slots = study.schemes().len() as u64 + 1;
    study.trials().saturating_mul(slots).saturating_mul(8) <= VALUE_BYTES
}

/// Why `study` cannot be split into `count` shards, if it cannot: each
/// shard must run at least one trial, or one chunk.
pub fn check_split(study: &Study, count: u64) -> Result<(), String> {
    let (trials, slots) = (study.trials(), study.schemes().len() as u64 + 1);
    let most = Split::max_shards(study);
    if count <= most {
        Ok(())
    } else if keeps_values(study) {
        Err(format!(
            "{trials} trials split into at most {trials} shards (each runs at least one trial)"
        ))
    } else {
        Err(format!(
            "{trials} trials of {slots} configurations keep too many values to split by trial ({} MiB > {} MiB), and split into chunks of {CHUNK} trials: at most {most} shards",
            trials.saturating_mul(slots).saturating_mul(8) >> 20,
            VALUE_BYTES >> 20
        ))
    }
}

/// The part of a run that shard `index` of `count` computes (see
/// [`crate::shard`], which writes it): where the run is split by trials,
/// its trials' values; else the power sums of the blocks it covers whole
/// and of the chunks of the blocks it covers in part, its window tallies
/// and value ranges.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardPart {
    /// 0-based shard index.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
    /// Power sums of each block this shard ran whole, by block index.
    pub blocks: Vec<(u64, Vec<Moments>)>,
    /// Power sums of each chunk this shard ran of a block it ran in part,
    /// by chunk index.
    pub chunks: Vec<(u64, Vec<Moments>)>,
    /// Smallest and largest value per slot.
    pub range: Vec<(f64, f64)>,
    /// First-pass window tallies.
    pub tallies: Vec<Tally>,
    /// Where the run is split by trials: the first trial of each run of
    /// consecutive trials held, and their values, trial by trial (each
    /// trial's slots in order).
    pub values: Vec<(u64, Vec<f64>)>,
}

/// Runs shard `index` of `count` of `study`: its trials' values, or the
/// pilot and then the first pass over this shard's chunks only.
pub fn simulate_shard(study: &Study, index: u64, count: u64, progress: &dyn Progress) -> ShardPart {
    let plan = TrialPlan::new(study);
    debug_assert_eq!(plan.slots(), study.schemes().len() + 1);
    let split = Split::of(study, count);
    let units = split.range(study.trials(), index, count);
    let mut part = ShardPart {
        index,
        count,
        blocks: Vec::new(),
        chunks: Vec::new(),
        range: Vec::new(),
        tallies: Vec::new(),
        values: Vec::new(),
    };
    match split {
        Split::Values => {
            progress.pass(1, units.end - units.start);
            part.values = vec![(units.start, plan.values_of(study.seed(), units, progress))];
        }
        Split::Blocks | Split::Chunks => {
            let run = Started::new(&plan, study, &Options::default(), progress);
            let first = run.first_pass(units, progress);
            (part.blocks, part.chunks) = (first.blocks, first.chunks);
            (part.range, part.tallies) = (first.totals.range, first.totals.tallies);
        }
    }
    progress.finish();
    part
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
