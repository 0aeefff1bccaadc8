//! A training study's partial result: the runs of the repeats one shard of
//! `gcsim train --shard I/K` trained, merged by `gcsim merge` into what the
//! single process writes.
//!
//! Format (JSON, `format = "gcsim-train-shard"`, `version = 1`):
//!
//! ```text
//! {
//!   "format": "gcsim-train-shard", "version": 1, "gcsim": "0.1.0",
//!   "shard": {"index": 2, "count": 3},             // 1-based index
//!   "study": { the study, as a shard of `run` records it },
//!   "config": { the training study's JSON config },
//!   "first": 4, "repeats": 3,                      // repeats 4, 5 and 6 (0-based)
//!   "runs": [[{"time": "base64", "loss": "base64", "metric": "base64",
//!              "diverged": null, "stalled": false}, ...], ...],  // per repeat, per configuration
//!   "checksum": "1a2b3c4d"
//! }
//! ```
//!
//! Each repeat is trained from its own streams, so its runs are the same in
//! a shard as in the whole study: shard I of K runs the contiguous share of
//! the R repeats `R·(I−1)/K` to `R·I/K − 1`, and the merge puts the repeats
//! back in order. Trajectories are little-endian doubles in base64, every
//! bit kept; `checksum` is as in [`crate::shard`].

use std::ops::Range;

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::report::TrainConfig;
use super::run::{Trained, Trajectory, gather};
use crate::shard::ShardId;
use crate::shard::units::{PartError, Sealed, UnitsError, check_cover, read_part};
use crate::study::Study;

/// The format name in every training shard file.
pub const FORMAT: &str = "gcsim-train-shard";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// The repeats shard `index` (0-based) of `count` trains, of `repeats`.
pub fn repeats_of(repeats: u64, index: u64, count: u64) -> Range<u64> {
    let at = |i: u64| (repeats as u128 * i as u128 / count as u128) as u64;
    at(index)..at(index + 1)
}

/// One trajectory, its numbers as base64 doubles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryRecord {
    time: String,
    loss: String,
    metric: String,
    diverged: Option<u64>,
    stalled: bool,
}

fn encode(values: &[f64]) -> String {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn decode(text: &str) -> Option<Vec<f64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).ok()?;
    (bytes.len() % 8 == 0).then(|| {
        bytes
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("eight bytes")))
            .collect()
    })
}

impl From<&Trajectory> for TrajectoryRecord {
    fn from(t: &Trajectory) -> Self {
        Self {
            time: encode(&t.time),
            loss: encode(&t.loss),
            metric: encode(&t.metric),
            diverged: t.diverged,
            stalled: t.stalled,
        }
    }
}

impl TrajectoryRecord {
    /// The trajectory, if its numbers decode to series of one length.
    fn trajectory(&self) -> Option<Trajectory> {
        let (time, loss, metric) = (decode(&self.time)?, decode(&self.loss)?, decode(&self.metric)?);
        (time.len() == loss.len() && loss.len() == metric.len()).then_some(Trajectory {
            time,
            loss,
            metric,
            diverged: self.diverged,
            stalled: self.stalled,
        })
    }
}

/// A training shard file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainShardFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written.
    pub version: u32,
    /// gcsim version that wrote it.
    pub gcsim: String,
    /// Which shard.
    pub shard: ShardId,
    /// The study (read back through its validation).
    pub study: Study,
    /// The training study's JSON config.
    pub config: TrainConfig,
    /// The first repeat this shard trained (0-based).
    pub first: u64,
    /// How many.
    pub repeats: u64,
    /// Per repeat, per configuration, its run.
    pub runs: Vec<Vec<TrajectoryRecord>>,
    /// CRC-32 of the compact JSON with this field empty, as 8 hex digits.
    pub checksum: String,
}

impl Sealed for TrainShardFile {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl TrainShardFile {
    /// The file of shard `shard`, which trained the repeats from `first`:
    /// `runs` holds each repeat's runs, in the study's order of configurations.
    pub fn new(shard: ShardId, study: &Study, config: &TrainConfig, first: u64, runs: &[Vec<Trajectory>]) -> Self {
        Self {
            format: FORMAT.into(),
            version: VERSION,
            gcsim: env!("CARGO_PKG_VERSION").into(),
            shard,
            study: study.clone(),
            config: config.clone(),
            first,
            repeats: runs.len() as u64,
            runs: runs
                .iter()
                .map(|r| r.iter().map(TrajectoryRecord::from).collect())
                .collect(),
            checksum: String::new(),
        }
        .sealed()
    }

    /// Reads a training shard file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, PartError> {
        read_part(file, text, FORMAT, VERSION)
    }

    /// Whether `text` is a training shard file (by its `format`).
    pub fn is_train_shard(text: &str) -> bool {
        crate::shard::units::has_format(text, FORMAT)
    }
}

/// Why training shard files do not make one study.
#[derive(Debug, thiserror::Error)]
pub enum TrainMergeError {
    /// The parts do not cover the split once each.
    #[error(transparent)]
    Units(#[from] UnitsError),
    /// A file's runs do not fit its study.
    #[error("{file}: shard {index}/{count} {what}; rerun that shard")]
    Runs {
        /// The file.
        file: String,
        /// 1-based shard index.
        index: u64,
        /// Number of shards.
        count: u64,
        /// What is wrong.
        what: String,
    },
}

/// The study, its config and every configuration's runs, from the shard
/// files of one training study (each with its name).
pub fn merge(files: Vec<(String, TrainShardFile)>) -> Result<(Study, TrainConfig, Vec<Trained>), TrainMergeError> {
    let Some((first_name, head)) = files.first() else {
        return Err(UnitsError::Missing("no partial results given".into()).into());
    };
    let (study, config, count) = (head.study.clone(), head.config.clone(), head.shard.count);
    for (name, f) in &files[1..] {
        if f.study != study || f.config != config {
            return Err(UnitsError::Different(first_name.clone(), name.clone(), "training studies").into());
        }
    }
    let total = study.trials();
    if count == 0 || count > total {
        return Err(TrainMergeError::Runs {
            file: first_name.clone(),
            index: head.shard.index,
            count,
            what: format!("is of a split into {count} shards of {total} repeats (1 to {total} shards)"),
        });
    }
    let shard_of: Vec<u64> = (0..count)
        .flat_map(|i| repeats_of(total, i, count).map(move |_| i))
        .collect();
    let parts: Vec<(String, ShardId, Vec<usize>)> = files
        .iter()
        .map(|(name, f)| {
            let held = f.first..f.first.saturating_add(f.repeats).min(total);
            (name.clone(), f.shard, held.map(|r| r as usize).collect())
        })
        .collect();
    let order = check_cover(&parts, &shard_of)?;
    let configs = study.schemes().len();
    let mut per_repeat = Vec::with_capacity(total as usize);
    for i in order {
        let (name, f) = &files[i];
        let wrong = |what: &str| TrainMergeError::Runs {
            file: name.clone(),
            index: f.shard.index,
            count,
            what: what.to_string(),
        };
        if f.runs.len() as u64 != f.repeats || f.runs.iter().any(|r| r.len() != configs) {
            return Err(wrong("does not hold one run per repeat and configuration"));
        }
        for runs in &f.runs {
            let runs: Option<Vec<Trajectory>> = runs.iter().map(TrajectoryRecord::trajectory).collect();
            per_repeat.push(runs.ok_or_else(|| wrong("holds a run whose numbers do not decode"))?);
        }
    }
    Ok((study.clone(), config, gather(&study, per_repeat)))
}
