//! Shard files: the partial result of `--shard I/K`, merged by `gcsim merge`.
//!
//! Format (JSON, `format = "gcsim-shard"`, `version = 8` for a shard,
//! `9` for a partial merge):
//!
//! ```text
//! {
//!   "format": "gcsim-shard", "version": 8, "gcsim": "0.1.0",
//!   "shard": {"index": 3, "count": 10},          // 1-based index
//!        // version 9 (`merge --partial`): the shards it is the union of,
//!        // as ascending runs of 1-based indices:
//!        // "shard": {"indices": [[1, 10], [12, 12]], "count": 20}
//!   "study": {"n": 100, "workers": {"iid": "exp:rate=1"}, "load_model": "fixed",
//!             "unit_time": null, "trials": 1000000000, "seed": 0,
//!             "schemes": [{"scheme": "crc", "s": 0, "m": null, "k": null}, ...],
//!             "comm_time": 0.0, "comm_dist": null, "link": "dedicated",
//!             "decode_time": 0.0, "decoder": "threshold"},
//!   "config": { the run's JSON config, as a single run writes it },
//!   "blocks": [{"index": 7, "sums": [[count, s1_bits, s2_bits, infinite], ...]}, ...],
//!   "chunks": [{"index": 1030, "sums": [...]}, ...],  // of blocks run in part
//!   "values": [{"first": 0, "trials": 250, "values": "base64"}],  // or, for a
//!        // run whose values fit in 64 MiB, these alone, with no blocks,
//!        // chunks, range or tallies
//!   "range":  [[min_bits, max_bits], ...],          // one per configuration + uncoded
//!   "tallies": [{"below": 0, "counts": [...], "min_in": bits, "max_in": bits,
//!                "bin_range": [[min_bits, min_count, max_bits, max_count], ...]}, ...],
//!   "checksum": "1a2b3c4d"
//! }
//! ```
//!
//! `bin_range` (each bin's smallest and largest value, and how many times
//! each came) is present only for trace and replay workers, whose times
//! repeat: a percentile that falls on a repeated value, or in a bin of two
//! values, is then read exactly from the first pass. Older versions (1:
//! before `bin_range`; 2: before the count of infinite values; 3: before
//! the checksum; 4 and 5: before the ends' counts; 6 and 7: before chunks
//! and values) are refused, and so are files another gcsim
//! release wrote (a merge recomputes the pilot, which must be the same).
//!
//! `checksum` is the CRC-32 (hex) of the file's compact JSON with the
//! checksum empty and every object's keys sorted: a file whose numbers were edited is refused by name,
//! before any of them is used. The merge checks the counts too: each
//! block's and chunk's count is its number of trials, and every shard holds
//! exactly the blocks, chunks or trials `--shard I/K` assigns it (see
//! [`runs::Split`]).
//!
//! `blocks` hold the power sums Σ(v−r), Σ(v−r)² of each block of 2²⁰ trials
//! this shard ran whole (about the pilot median r), `chunks` those of each
//! chunk of 8192 trials of a block it ran in part, and how many of its values were
//! +∞ (trials the rank decoder never decoded); `tallies` the first-pass
//! percentile windows' counts. Floating-point values are stored as their IEEE
//! 754 bit patterns (`f64::to_bits`), so infinities survive and every bit is
//! kept. Blocks fold in index order and counts add, so the merged result is
//! the single run's, byte for byte.

pub mod codes;
pub mod coverage;
pub mod fold;
pub mod runs;
pub mod units;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::report::RunConfig;
use crate::stats::Moments;
use crate::stats::quantile::{BinRange, BinRanges, Tally};
use crate::study::Study;
use coverage::Coverage;
use runs::ShardPart;
use units::Sealed;

/// The format name in every shard file.
pub const FORMAT: &str = "gcsim-shard";
/// The format version of a shard's file, which this build writes and reads.
pub const VERSION: u32 = 8;
/// The format version of a partial merge's file (`shard` holds `indices`).
pub(crate) const PARTIAL_VERSION: u32 = 9;

/// Why a shard file cannot be used.
#[derive(Debug, Error)]
pub enum ShardError {
    /// Not JSON of this format.
    #[error("{file}: not a gcsim shard file: {reason}")]
    Malformed {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// Another format version.
    #[error(
        "{file}: shard format version {found}; this gcsim reads version {VERSION} (a shard) and {PARTIAL_VERSION} (a partial merge)"
    )]
    Version {
        /// The file.
        file: String,
        /// The version found.
        found: String,
    },
    /// Written by another gcsim release.
    #[error(
        "{file}: written by gcsim {found}; this is gcsim {ours}, and a merge recomputes part of the run: merge with the gcsim that wrote the shards",
        ours = env!("CARGO_PKG_VERSION")
    )]
    Release {
        /// The file.
        file: String,
        /// The release that wrote it.
        found: String,
    },
    /// The checksum does not match the contents.
    #[error("{file}: the checksum does not match the contents (the file was edited or damaged); rerun its shard")]
    Checksum {
        /// The file.
        file: String,
    },
    /// Shards of different studies.
    #[error("{0} and {1} are shards of different configurations or seeds")]
    Different(String, String),
}

/// Which part of the trials a shard ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardId {
    /// 1-based index.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl ShardId {
    /// The shard of this task of a Slurm job array (`sbatch --array=1-20`):
    /// index `SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN` + 1 of
    /// `SLURM_ARRAY_TASK_COUNT`, from `var` (the environment). The array's
    /// indices must be consecutive (`--array=0-19` or `1-20`, no step, no
    /// list), so that every task is one shard and every shard one task.
    pub fn from_slurm(var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let get = |name: &str| -> Result<u64, String> {
            let value = var(name).ok_or_else(|| {
                format!("`slurm` takes the shard from {name}, which is not set: run it in a task of `sbatch --array=1-K`, or give I/K")
            })?;
            value.trim().parse().map_err(|_| {
                format!(
                    "`slurm`: {name} is `{}`, not a whole number",
                    crate::param::one_line(&value)
                )
            })
        };
        let (id, count, min, max) = (
            get("SLURM_ARRAY_TASK_ID")?,
            get("SLURM_ARRAY_TASK_COUNT")?,
            get("SLURM_ARRAY_TASK_MIN")?,
            get("SLURM_ARRAY_TASK_MAX")?,
        );
        if !(min..=max).contains(&id) {
            return Err(format!(
                "`slurm`: SLURM_ARRAY_TASK_ID {id} is outside SLURM_ARRAY_TASK_MIN..SLURM_ARRAY_TASK_MAX ({min}..{max}); run it in a task of the array, or give I/K"
            ));
        }
        if count == 0 || max - min + 1 != count {
            return Err(format!(
                "`slurm`: the job array has {count} tasks with indices {min} to {max}; give it consecutive indices (e.g. --array=1-{count}), one task per shard"
            ));
        }
        Ok(Self {
            index: id - min + 1,
            count,
        })
    }
}

/// Which shards a file stands for: `index` in a shard's file (version 6),
/// `indices` in a partial merge's (version 7); see [`ShardFile::coverage`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Covers {
    /// The shard (1-based), in version 6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// The shards, as ascending runs `[first, last]` of 1-based indices, in version 7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indices: Option<Vec<(u64, u64)>>,
    /// Number of shards.
    pub count: u64,
}

/// The power sums of one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockSums {
    /// Block index (block b holds trials b·2²⁰ to (b+1)·2²⁰ − 1).
    pub index: u64,
    /// `[count, s1 bits, s2 bits, +∞ values]` per configuration, then uncoded.
    pub sums: Vec<[u64; 4]>,
}

/// The values of a run of consecutive trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueRun {
    /// The first trial (0-based).
    pub first: u64,
    /// How many trials.
    pub trials: u64,
    /// Every trial's values (each trial's configurations in order, then
    /// uncoded), as little-endian IEEE 754 doubles in base64.
    pub values: String,
}

impl ValueRun {
    fn new(first: u64, values: &[f64], slots: usize) -> Self {
        use base64::Engine;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Self {
            first,
            trials: (values.len() / slots.max(1)) as u64,
            values: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The values, if the text decodes to 8 bytes per value.
    fn decode(&self) -> Result<Vec<f64>, String> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.values)
            .map_err(|e| format!("the values of trials from {} are not base64 ({e})", self.first))?;
        if bytes.len() % 8 != 0 {
            return Err(format!(
                "the values of trials from {} are not whole doubles",
                self.first
            ));
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("eight bytes")))
            .collect())
    }
}

/// One window's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TallyRecord {
    /// Values below the window.
    pub below: u64,
    /// Values in each bin.
    pub counts: Vec<u64>,
    /// Smallest value inside, as bits.
    pub min_in: u64,
    /// Largest value inside, as bits.
    pub max_in: u64,
    /// Each bin's smallest value as bits, its count, its largest value as
    /// bits and its count (trace and replay workers only; absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bin_range: Vec<(u64, u64, u64, u64)>,
}

/// A shard file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written.
    pub version: u32,
    /// gcsim version that wrote it.
    pub gcsim: String,
    /// Which shard, or which shards a partial merge stands for.
    pub shard: Covers,
    /// The study, every field of it (read back through the study's validation).
    pub study: Study,
    /// The output configuration of the whole run.
    pub config: RunConfig,
    /// Power sums of the blocks this shard ran whole.
    pub blocks: Vec<BlockSums>,
    /// Power sums of each chunk of 8192 trials this shard ran of a block it
    /// ran in part (`index` is the chunk's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<BlockSums>,
    /// Where the run is split by trials: the values of the trials it ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ValueRun>,
    /// Smallest and largest value per configuration, as bits.
    pub range: Vec<[u64; 2]>,
    /// First-pass window tallies.
    pub tallies: Vec<TallyRecord>,
    /// CRC-32 of the compact JSON with this field empty, as 8 hex digits.
    pub checksum: String,
}

impl Sealed for ShardFile {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl ShardFile {
    /// The file of a finished shard.
    pub fn new(study: &Study, config: &RunConfig, part: &ShardPart) -> Self {
        let shard = Covers {
            index: Some(part.index + 1),
            indices: None,
            count: part.count,
        };
        Self::of(VERSION, shard, study, config, part)
    }

    /// The file of a partial merge: the union of the shards of `coverage`,
    /// whose parts are gathered in `part` (blocks, chunks and values in
    /// index order).
    pub fn partial(study: &Study, config: &RunConfig, coverage: &Coverage, part: &ShardPart) -> Self {
        let shard = Covers {
            index: None,
            indices: Some(coverage.runs().to_vec()),
            count: coverage.count(),
        };
        Self::of(PARTIAL_VERSION, shard, study, config, part)
    }

    fn of(version: u32, shard: Covers, study: &Study, config: &RunConfig, part: &ShardPart) -> Self {
        let sums = |units: &[(u64, Vec<Moments>)]| -> Vec<BlockSums> {
            units
                .iter()
                .map(|(index, moments)| BlockSums {
                    index: *index,
                    sums: moments
                        .iter()
                        .map(|m| {
                            let (c, s1, s2) = m.sums();
                            [c, s1.to_bits(), s2.to_bits(), m.infinite()]
                        })
                        .collect(),
                })
                .collect()
        };
        let slots = study.schemes().len() + 1;
        Self {
            format: FORMAT.into(),
            version,
            gcsim: env!("CARGO_PKG_VERSION").into(),
            shard,
            study: study.clone(),
            config: config.clone(),
            blocks: sums(&part.blocks),
            chunks: sums(&part.chunks),
            values: part
                .values
                .iter()
                .map(|(first, v)| ValueRun::new(*first, v, slots))
                .collect(),
            range: part.range.iter().map(|r| [r.0.to_bits(), r.1.to_bits()]).collect(),
            tallies: part
                .tallies
                .iter()
                .map(|t| TallyRecord {
                    below: t.below,
                    counts: t.counts.clone(),
                    min_in: t.min_in.to_bits(),
                    max_in: t.max_in.to_bits(),
                    bin_range: t
                        .bin_range
                        .dense()
                        .iter()
                        .map(|r| (r.lo.to_bits(), r.lo_count, r.hi.to_bits(), r.hi_count))
                        .collect(),
                })
                .collect(),
            checksum: String::new(),
        }
        .sealed()
    }

    /// Reads a shard file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, ShardError> {
        let malformed = |reason: String| ShardError::Malformed {
            file: file.to_string(),
            // serde's messages quote the text they refused, newlines and all.
            reason: crate::param::one_line(&reason),
        };
        // The head first, so that a file from another release or of another
        // kind is named as such rather than by its first unexpected field.
        let head: serde_json::Value = serde_json::from_str(text).map_err(|e| malformed(format!("not JSON ({e})")))?;
        match head.get("format").and_then(serde_json::Value::as_str) {
            Some(FORMAT) => {}
            Some(other) => return Err(malformed(format!("format is `{other}`, not `{FORMAT}`"))),
            None => {
                return Err(malformed(format!(
                    "no \"format\": \"{FORMAT}\" (shard files are written by run or sweep --shard I/K --out FILE.json)"
                )));
            }
        }
        let version = head.get("version");
        let read = [VERSION, PARTIAL_VERSION].map(u64::from);
        if !version
            .and_then(serde_json::Value::as_u64)
            .is_some_and(|v| read.contains(&v))
        {
            return Err(ShardError::Version {
                file: file.to_string(),
                found: version.map_or_else(|| "(none)".to_string(), |v| v.to_string()),
            });
        }
        let file_ = file.to_string();
        let shard: Self = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        if shard.gcsim != env!("CARGO_PKG_VERSION") {
            return Err(ShardError::Release {
                file: file_,
                found: shard.gcsim,
            });
        }
        if shard.checksum != shard.clone().sealed().checksum {
            return Err(ShardError::Checksum { file: file_ });
        }
        shard
            .coverage()
            .map_err(|reason| malformed(format!("\"shard\": {reason}")))?;
        Ok(shard)
    }

    /// The shards this file stands for: `index` in version 6, `indices` in
    /// version 7, each within 1 to `count`.
    pub fn coverage(&self) -> Result<Coverage, String> {
        let Covers { index, indices, count } = &self.shard;
        match (self.version, index, indices) {
            (VERSION, Some(i), None) => Coverage::one(*i, *count),
            (PARTIAL_VERSION, None, Some(runs)) => Coverage::from_runs(runs.clone(), *count),
            (VERSION, ..) => Err(format!(
                "a shard's file (version {VERSION}) has \"index\" and no \"indices\""
            )),
            _ => Err(format!(
                "a partial merge's file (version {PARTIAL_VERSION}) has \"indices\" and no \"index\""
            )),
        }
    }

    /// The engine's view of this shard (of a partial merge: its first shard
    /// is `index`; [`Self::coverage`] says which it stands for), or what in
    /// its values does not decode.
    pub fn part(&self) -> Result<ShardPart, String> {
        let sums = |units: &[BlockSums]| -> Vec<(u64, Vec<Moments>)> {
            units
                .iter()
                .map(|b| {
                    let sums = b
                        .sums
                        .iter()
                        .map(|s| Moments::from_sums(s[0], f64::from_bits(s[1]), f64::from_bits(s[2]), s[3]));
                    (b.index, sums.collect())
                })
                .collect()
        };
        let values = self
            .values
            .iter()
            .map(|run| Ok((run.first, run.decode()?)))
            .collect::<Result<Vec<_>, String>>()?;
        let first = self
            .shard
            .index
            .or_else(|| Some(self.shard.indices.as_ref()?.first()?.0));
        Ok(ShardPart {
            index: first.unwrap_or(0).saturating_sub(1),
            count: self.shard.count,
            blocks: sums(&self.blocks),
            chunks: sums(&self.chunks),
            values,
            range: self
                .range
                .iter()
                .map(|r| (f64::from_bits(r[0]), f64::from_bits(r[1])))
                .collect(),
            tallies: self
                .tallies
                .iter()
                .map(|t| Tally {
                    below: t.below,
                    counts: t.counts.clone(),
                    min_in: f64::from_bits(t.min_in),
                    max_in: f64::from_bits(t.max_in),
                    bin_range: BinRanges::from_dense(
                        &t.bin_range
                            .iter()
                            .map(|&(lo, lo_count, hi, hi_count)| BinRange {
                                lo: f64::from_bits(lo),
                                lo_count,
                                hi: f64::from_bits(hi),
                                hi_count,
                            })
                            .collect::<Vec<_>>(),
                    ),
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: u64, min: u64, max: u64, count: u64) -> Result<ShardId, String> {
        ShardId::from_slurm(|name| {
            Some(match name {
                "SLURM_ARRAY_TASK_ID" => id,
                "SLURM_ARRAY_TASK_MIN" => min,
                "SLURM_ARRAY_TASK_MAX" => max,
                "SLURM_ARRAY_TASK_COUNT" => count,
                _ => return None,
            })
            .map(|v| v.to_string())
        })
    }

    #[test]
    fn slurm_tasks_number_the_shards_from_one() {
        let id = |index, count| Ok(ShardId { index, count });
        assert_eq!(task(5, 1, 20, 20), id(5, 20));
        assert_eq!(task(1, 1, 20, 20), id(1, 20));
        assert_eq!(task(0, 0, 19, 20), id(1, 20));
        assert_eq!(task(19, 0, 19, 20), id(20, 20));
        assert_eq!(task(107, 100, 109, 10), id(8, 10));
        assert!(task(21, 1, 20, 20).is_err());
        assert!(task(3, 1, 5, 3).unwrap_err().contains("consecutive indices"));
        assert!(
            ShardId::from_slurm(|_| None)
                .unwrap_err()
                .contains("SLURM_ARRAY_TASK_ID, which is not set")
        );
        let bad = ShardId::from_slurm(|_| Some("x".into())).unwrap_err();
        assert!(bad.contains("SLURM_ARRAY_TASK_ID is `x`, not a whole number"), "{bad}");
    }
}
