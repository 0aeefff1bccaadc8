//! A `gcsim codes --shard I/K` partial result: the outcomes of the sets of
//! finished workers one shard decoded, merged by `gcsim merge` into what the
//! single `gcsim codes` run writes.
//!
//! Format (JSON, `format = "gcsim-codes-shard"`, `version = 1`):
//!
//! ```text
//! {
//!   "format": "gcsim-codes-shard", "version": 1, "gcsim": "0.1.0",
//!   "shard": {"index": 2, "count": 3},       // 1-based index
//!   "code": "crc s=3", "limit": 1000000, "seed": 0,
//!   "head": {"gradient": { the output row, its results zero }},  // or "matmul"
//!   "matrix": "1a2b3c4d",                    // CRC-32 of the encoding matrix
//!   "sets": 299, "first": 99, "count": 100,  // sets 99 to 198 (0-based) of 299
//!   "decodable": "base64", "residual": "base64", "condition": "base64",
//!   "end_to_end": "base64",                  // shard 1 only; empty in the others
//!   "checksum": "1a2b3c4d"
//! }
//! ```
//!
//! The sets are those the single run decodes, in its order (see
//! [`check::outcomes`] and [`matmul::outcomes`]): every straggler pattern,
//! or the random ones drawn in order from the run's seed, so a set's outcome
//! is the same in a shard as in the whole run. Shard I of K decodes the
//! contiguous share `S·(I−1)/K` to `S·I/K − 1` of the S sets; shard 1 also
//! runs the end-to-end check. Every outcome is kept (the median condition
//! number needs them all): `decodable` one byte per set, `residual` and
//! `condition` little-endian doubles, each in base64, every bit kept.
//! `matrix` tells apart runs of different matrices (another `--code` file);
//! `checksum` is as in [`crate::shard`].

use std::ops::Range;

use base64::Engine;
use faer::Mat;
use serde::{Deserialize, Serialize};

use super::ShardId;
use super::units::{PartError, Sealed, UnitsError, check_cover, read_part};
use crate::codes::Code;
use crate::codes::check::{self, CodesRow, Outcome};
use crate::codes::matmul::{self, MatmulRow};

/// The format name in every codes shard file.
pub const FORMAT: &str = "gcsim-codes-shard";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// The sets shard `index` (0-based) of `count` decodes, of `sets`.
pub fn sets_of(sets: u64, index: u64, count: u64) -> Range<u64> {
    let at = |i: u64| (sets as u128 * i as u128 / count as u128) as u64;
    at(index)..at(index + 1)
}

/// The output row of a checked code: a gradient code's or a matmul code's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckedRow {
    /// A gradient (or matrix-vector) code.
    Gradient(CodesRow),
    /// A matrix-multiplication code.
    Matmul(MatmulRow),
}

impl CheckedRow {
    /// This head with every set's outcome (in order) and the end-to-end error.
    pub fn finish(self, outcomes: &[Outcome], end_to_end: f64) -> Self {
        match self {
            CheckedRow::Gradient(row) => CheckedRow::Gradient(row.finish(outcomes, end_to_end)),
            CheckedRow::Matmul(row) => CheckedRow::Matmul(row.finish(outcomes, end_to_end)),
        }
    }
}

/// The CRC-32 (8 hex digits) of a matrix's entries, column by column, as
/// little-endian doubles.
pub fn matrix_checksum(m: &Mat<f64>) -> String {
    let mut hasher = crc32fast::Hasher::new();
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            hasher.update(&m[(i, j)].to_le_bytes());
        }
    }
    format!("{:08x}", hasher.finalize())
}

fn encode(values: impl Iterator<Item = f64>) -> String {
    let bytes: Vec<u8> = values.flat_map(f64::to_le_bytes).collect();
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

/// What identifies the run a shard is part of, besides the split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodesRun {
    /// The code, as the verdict names it (`crc s=3`).
    pub code: String,
    /// `--limit`.
    pub limit: u64,
    /// `--seed`.
    pub seed: u64,
    /// The output row, its results zero.
    pub head: CheckedRow,
    /// [`matrix_checksum`] of the encoding matrix.
    pub matrix: String,
    /// Sets the whole run decodes.
    pub sets: u64,
}

/// A codes shard file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodesShardFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written.
    pub version: u32,
    /// gcsim version that wrote it.
    pub gcsim: String,
    /// Which shard.
    pub shard: ShardId,
    /// The run.
    #[serde(flatten)]
    pub run: CodesRun,
    /// The first set this shard decoded (0-based).
    pub first: u64,
    /// How many.
    pub count: u64,
    /// Per set, 1 if it decoded, else 0 (base64 bytes).
    pub decodable: String,
    /// Per set, its relative residual (base64 doubles).
    pub residual: String,
    /// Per set, the condition number (base64 doubles).
    pub condition: String,
    /// The end-to-end error (one base64 double) in shard 1; empty in the others.
    pub end_to_end: String,
    /// CRC-32 of the compact JSON with this field empty, as 8 hex digits.
    pub checksum: String,
}

impl Sealed for CodesShardFile {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl CodesShardFile {
    /// The file of shard `shard` of `run`, which decoded the sets from
    /// `first` with `outcomes`, and ran the end-to-end check if it is shard 1.
    pub fn new(shard: ShardId, run: CodesRun, first: u64, outcomes: &[Outcome], end_to_end: Option<f64>) -> Self {
        let bytes: Vec<u8> = outcomes.iter().map(|o| u8::from(o.decodable)).collect();
        Self {
            format: FORMAT.into(),
            version: VERSION,
            gcsim: env!("CARGO_PKG_VERSION").into(),
            shard,
            run,
            first,
            count: outcomes.len() as u64,
            decodable: base64::engine::general_purpose::STANDARD.encode(bytes),
            residual: encode(outcomes.iter().map(|o| o.residual)),
            condition: encode(outcomes.iter().map(|o| o.condition)),
            end_to_end: encode(end_to_end.into_iter()),
            checksum: String::new(),
        }
        .sealed()
    }

    /// Reads a codes shard file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, PartError> {
        read_part(file, text, FORMAT, VERSION)
    }

    /// Whether `text` is a codes shard file (by its `format`).
    pub fn is_codes_shard(text: &str) -> bool {
        crate::shard::units::has_format(text, FORMAT)
    }

    /// The outcomes this file holds, if they decode to `count` of each.
    fn outcomes(&self) -> Option<Vec<Outcome>> {
        let decodable = base64::engine::general_purpose::STANDARD.decode(&self.decodable).ok()?;
        let (residual, condition) = (decode(&self.residual)?, decode(&self.condition)?);
        let count = self.count as usize;
        if decodable.len() != count || residual.len() != count || condition.len() != count {
            return None;
        }
        decodable
            .iter()
            .zip(residual.iter().zip(&condition))
            .map(|(&d, (&residual, &condition))| {
                (d <= 1).then_some(Outcome {
                    decodable: d == 1,
                    residual,
                    condition,
                })
            })
            .collect()
    }
}

/// Why codes shard files do not make one run.
#[derive(Debug, thiserror::Error)]
pub enum CodesMergeError {
    /// The parts do not cover the split once each.
    #[error(transparent)]
    Units(#[from] UnitsError),
    /// A file's sets do not fit its shard.
    #[error("{file}: shard {index}/{count} {what}; rerun that shard")]
    Sets {
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

/// The run and its finished row, from the shard files of one `gcsim codes`
/// run (each with its name), given in any order.
pub fn merge(files: Vec<(String, CodesShardFile)>) -> Result<(CodesRun, CheckedRow), CodesMergeError> {
    let Some((first_name, head)) = files.first() else {
        return Err(UnitsError::Missing("no partial results given".into()).into());
    };
    let (run, count) = (head.run.clone(), head.shard.count);
    for (name, f) in &files[1..] {
        if f.run != run {
            return Err(UnitsError::Different(first_name.clone(), name.clone(), "codes checks").into());
        }
    }
    if count == 0 || count > run.sets {
        return Err(CodesMergeError::Sets {
            file: first_name.clone(),
            index: head.shard.index,
            count,
            what: format!(
                "is of a split into {count} shards of {} sets (1 to {} shards)",
                run.sets, run.sets
            ),
        });
    }
    // Each shard is one unit here; its sets are checked below.
    let shard_of: Vec<u64> = (0..count).collect();
    let parts: Vec<(String, ShardId, Vec<usize>)> = files
        .iter()
        .map(|(name, f)| (name.clone(), f.shard, vec![f.shard.index.saturating_sub(1) as usize]))
        .collect();
    let order = check_cover(&parts, &shard_of)?;
    let mut outcomes = Vec::with_capacity(run.sets as usize);
    let mut end_to_end = f64::NAN;
    for i in order {
        let (name, f) = &files[i];
        let wrong = |what: String| CodesMergeError::Sets {
            file: name.clone(),
            index: f.shard.index,
            count,
            what,
        };
        let expected = sets_of(run.sets, f.shard.index - 1, count);
        if f.first != expected.start || f.first.checked_add(f.count) != Some(expected.end) {
            return Err(wrong(format!(
                "holds sets {} to {}, but --shard {}/{count} decodes sets {} to {} of {}",
                f.first + 1,
                f.first.saturating_add(f.count),
                f.shard.index,
                expected.start + 1,
                expected.end,
                run.sets
            )));
        }
        outcomes.extend(
            f.outcomes()
                .ok_or_else(|| wrong("holds outcomes that do not decode".into()))?,
        );
        let e2e = decode(&f.end_to_end).unwrap_or_default();
        match (f.shard.index, e2e.as_slice()) {
            (1, &[e]) => end_to_end = e,
            (1, _) => return Err(wrong("does not hold the end-to-end error".into())),
            (_, []) => {}
            _ => return Err(wrong("holds an end-to-end error, which only shard 1 computes".into())),
        }
    }
    let row = run.head.clone().finish(&outcomes, end_to_end);
    Ok((run, row))
}

/// The [`CodesRun`] of checking a gradient code with `limit` and `seed`.
pub fn gradient_run(code: &Code, limit: u64, seed: u64) -> CodesRun {
    CodesRun {
        code: code.scheme().to_string(),
        limit,
        seed,
        head: CheckedRow::Gradient(CodesRow::head(code, limit)),
        matrix: matrix_checksum(code.encoding()),
        sets: check::patterns(code, limit),
    }
}

/// The [`CodesRun`] of checking a matmul code with `limit` and `seed`.
pub fn matmul_run(code: &matmul::MatmulCode, limit: u64, seed: u64) -> CodesRun {
    CodesRun {
        code: code.scheme().to_string(),
        limit,
        seed,
        head: CheckedRow::Matmul(MatmulRow::head(code, limit)),
        matrix: matrix_checksum(code.encoding()),
        sets: matmul::decodings(code, limit),
    }
}

/// The decodings shard `shard` of the checks of a gradient code makes: its
/// sets, and in shard 1 the end-to-end sets.
pub fn gradient_decodings(code: &Code, limit: u64, shard: ShardId) -> u64 {
    let sets = sets_of(check::patterns(code, limit), shard.index - 1, shard.count);
    let e2e = if shard.index == 1 { check::E2E_SETS as u64 } else { 0 };
    sets.end - sets.start + e2e
}

/// Shard `shard` of the checks of a gradient code with `limit` and `seed`:
/// its sets' outcomes, and in shard 1 the end-to-end error; `done` is
/// called after each decoding ([`gradient_decodings`] in all).
pub fn gradient_shard(code: &Code, limit: u64, seed: u64, shard: ShardId, done: &(dyn Fn() + Sync)) -> CodesShardFile {
    let run = gradient_run(code, limit, seed);
    let sets = sets_of(run.sets, shard.index - 1, shard.count);
    let outcomes = check::outcomes(code, limit, seed, sets.clone(), done);
    let e2e = (shard.index == 1).then(|| check::end_to_end(code, check::E2E_SETS, seed, done));
    CodesShardFile::new(shard, run, sets.start, &outcomes, e2e)
}

/// Shard `shard` of the checks of a matmul code with `limit` and `seed`:
/// its sets' outcomes, and in shard 1 the product error; `done` is called
/// after each set decoded.
pub fn matmul_shard(
    code: &matmul::MatmulCode,
    limit: u64,
    seed: u64,
    shard: ShardId,
    done: &(dyn Fn() + Sync),
) -> CodesShardFile {
    let run = matmul_run(code, limit, seed);
    let sets = sets_of(run.sets, shard.index - 1, shard.count);
    let outcomes = matmul::outcomes(code, limit, seed, sets.clone(), done);
    let error = (shard.index == 1).then(|| code.product_error(matmul::PRODUCT_SETS, seed));
    CodesShardFile::new(shard, run, sets.start, &outcomes, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_cover_the_sets_once() {
        for (sets, k) in [(10, 3), (7, 7), (1_000_000, 6)] {
            let ranges: Vec<Range<u64>> = (0..k).map(|i| sets_of(sets, i, k)).collect();
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges[k as usize - 1].end, sets);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()));
        }
    }
}
