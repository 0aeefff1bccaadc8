//! Shards by configuration: a command whose work falls into independent
//! units (a plan's cluster sizes, a scenario's studies) gives each of K
//! shards whole units, and the merge puts every unit's result back in
//! place. A unit is computed exactly as the single process computes it, so
//! the merged output is the single run's, byte for byte.
//!
//! Units go to shards by their estimated cost, largest first, each to the
//! shard with the least work so far (ties: the smaller unit index to the
//! smaller shard index), the longest-processing-time rule (Graham 1969). With
//! equal costs this is round robin: unit u to shard (u mod K) + 1.

use serde::Serialize;
use thiserror::Error;

use super::ShardId;
use super::runs::MergeError;

/// The 0-based shard of each unit, for `count` shards and the units'
/// estimated costs. More shards than units leaves some shards empty.
pub fn assign(costs: &[u128], count: u64) -> Vec<u64> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0u128; count.max(1) as usize];
    let mut shard_of = vec![0u64; costs.len()];
    for u in order {
        let (least, _) = load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(&b.0)))
            .expect("at least one shard");
        load[least] = load[least].saturating_add(costs[u]);
        shard_of[u] = least as u64;
    }
    shard_of
}

/// The CRC-32 (8 hex digits) of a value's compact JSON with every object's
/// keys sorted: the checksum of a partial-result file, computed with its
/// checksum field empty.
pub fn checksum<T: Serialize>(value: &T) -> String {
    // Through a `Value`, whose keys are sorted: a canonical form that does
    // not depend on the order in which fields are written.
    let value = serde_json::to_value(value).expect("a partial result serialises");
    let bytes = serde_json::to_vec(&value).expect("a JSON value serialises");
    format!("{:08x}", crc32fast::hash(&bytes))
}

/// Whether `text` is a JSON object whose `format` is `format`: how `merge`
/// tells the kinds of part files apart before reading one.
pub fn has_format(text: &str, format: &str) -> bool {
    text.contains(format) && serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v["format"] == format)
}

/// A part of format `format` (`gcsim-plan-shard`) and version `version`,
/// read from `text`, the file named `file`: the head first, so that a file
/// of another kind, version or gcsim release is named as such rather than
/// by its first unexpected field; then its checksum.
pub fn read_part<T: Sealed>(file: &str, text: &str, format: &'static str, version: u32) -> Result<T, PartError> {
    let malformed = |reason: String| PartError::malformed(file, format, reason);
    let head: serde_json::Value = serde_json::from_str(text).map_err(|e| malformed(format!("not JSON ({e})")))?;
    match head.get("format").and_then(serde_json::Value::as_str) {
        Some(f) if f == format => {}
        Some(other) => return Err(malformed(format!("format is `{other}`, not `{format}`"))),
        None => return Err(malformed(format!("no \"format\": \"{format}\""))),
    }
    if head.get("version").and_then(serde_json::Value::as_u64) != Some(u64::from(version)) {
        return Err(malformed(format!(
            "another format version; this gcsim reads version {version}"
        )));
    }
    let gcsim = head.get("gcsim").and_then(serde_json::Value::as_str).unwrap_or("?");
    if gcsim != env!("CARGO_PKG_VERSION") {
        return Err(malformed(format!(
            "written by gcsim {gcsim}; merge with the gcsim that wrote it ({} here)",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let part: T = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    let mut bare = part.clone();
    let given = std::mem::take(bare.checksum_mut());
    if given != checksum(&bare) {
        return Err(PartError::Checksum { file: file.to_string() });
    }
    Ok(part)
}

/// A partial-result file that carries the checksum of the rest of it.
pub trait Sealed: Serialize + serde::de::DeserializeOwned + Clone {
    /// The checksum field.
    fn checksum_mut(&mut self) -> &mut String;

    /// This file with its checksum computed (over the file with it empty).
    fn sealed(mut self) -> Self {
        self.checksum_mut().clear();
        let sum = checksum(&self);
        *self.checksum_mut() = sum;
        self
    }
}

/// Why a part cannot be read.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PartError {
    /// Not a part of this format, version or release, or not its fields.
    #[error("{file}: not a {} file: {reason}", format.replace('-', " "))]
    Malformed {
        /// The file.
        file: String,
        /// The format it should have (`gcsim-plan-shard`).
        format: &'static str,
        /// What is wrong, on one line.
        reason: String,
    },
    /// The checksum does not match the contents.
    #[error("{file}: the checksum does not match the contents (the file was edited or damaged); rerun its shard")]
    Checksum {
        /// The file.
        file: String,
    },
}

impl PartError {
    /// `file` is not a well-formed part of `format`, for `reason`.
    pub fn malformed(file: &str, format: &'static str, reason: String) -> Self {
        PartError::Malformed {
            file: file.to_string(),
            format,
            reason: crate::param::one_line(&reason),
        }
    }
}

/// Why the parts of a sharded command do not make one whole.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitsError {
    /// Parts of different commands or of different splits.
    #[error("{0} and {1} are parts of different {2}; merge the parts of one command")]
    Different(String, String, &'static str),
    /// The same shard in two files.
    #[error("{0} and {1} are both shard {2}/{3}; give each shard once")]
    Duplicate(String, String, u64, u64),
    /// Shards absent.
    #[error("{0}")]
    Missing(String),
    /// A part holding units its shard does not compute.
    #[error(
        "{file}: shard {index}/{count} holds units {found:?}, but --shard {index}/{count} computes units {expected:?}; rerun that shard"
    )]
    Units {
        /// The file.
        file: String,
        /// 1-based shard index.
        index: u64,
        /// Number of shards.
        count: u64,
        /// The units it holds (0-based).
        found: Vec<usize>,
        /// The units its shard computes (0-based).
        expected: Vec<usize>,
    },
}

/// Checks that `parts` (file name, shard, units held) are the K shards of
/// one split, each once, each holding exactly the units `shard_of` gives
/// it; returns the index of each shard's part, by 0-based shard.
pub fn check_cover(parts: &[(String, ShardId, Vec<usize>)], shard_of: &[u64]) -> Result<Vec<usize>, UnitsError> {
    let Some((first, head, _)) = parts.first() else {
        return Err(UnitsError::Missing("no partial results given".into()));
    };
    let count = head.count;
    let mut seen: Vec<Option<usize>> = vec![None; count as usize];
    for (i, (file, id, units)) in parts.iter().enumerate() {
        if id.count != count || id.index == 0 || id.index > count {
            return Err(UnitsError::Different(
                first.clone(),
                file.clone(),
                "splits (--shard I/K)",
            ));
        }
        let slot = &mut seen[id.index as usize - 1];
        if let Some(j) = slot {
            return Err(UnitsError::Duplicate(
                parts[*j].0.clone(),
                file.clone(),
                id.index,
                count,
            ));
        }
        *slot = Some(i);
        let expected: Vec<usize> = (0..shard_of.len()).filter(|&u| shard_of[u] + 1 == id.index).collect();
        if *units != expected {
            return Err(UnitsError::Units {
                file: file.clone(),
                index: id.index,
                count,
                found: units.clone(),
                expected,
            });
        }
    }
    // Runs of consecutive absent shards, as the merge names them.
    let mut absent: Vec<(u64, u64)> = Vec::new();
    for i in (1..=count).filter(|&i| seen[i as usize - 1].is_none()) {
        match absent.last_mut() {
            Some(run) if run.1 + 1 == i => run.1 = i,
            _ => absent.push((i, i)),
        }
    }
    if !absent.is_empty() {
        return Err(UnitsError::Missing(MergeError::Missing(absent, count).to_string()));
    }
    Ok(seen.into_iter().map(|s| s.expect("every shard seen")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_costs_go_round_robin_and_large_ones_are_spread() {
        assert_eq!(assign(&[1; 5], 2), [0, 1, 0, 1, 0]);
        assert_eq!(assign(&[1; 2], 4), [0, 1]);
        // 16, 32, 64, 128 workers: the largest alone, the others together.
        assert_eq!(assign(&[16, 32, 64, 128], 2), [1, 1, 1, 0]);
        assert_eq!(assign(&[], 3), Vec::<u64>::new());
    }

    #[test]
    fn the_cover_names_missing_duplicate_and_wrong_parts() {
        let id = |index, count| ShardId { index, count };
        let shard_of = assign(&[1; 4], 3);
        let part = |f: &str, i, units: Vec<usize>| (f.to_string(), id(i, 3), units);
        let all = vec![part("a", 1, vec![0, 3]), part("b", 2, vec![1]), part("c", 3, vec![2])];
        assert_eq!(check_cover(&all, &shard_of), Ok(vec![0, 1, 2]));
        let missing = check_cover(&all[..1], &shard_of).unwrap_err().to_string();
        assert_eq!(missing, "shards 2-3 of 3 are missing (give all 3 shard files)");
        let twice = vec![all[0].clone(), part("d", 1, vec![0, 3])];
        assert_eq!(
            check_cover(&twice, &shard_of).unwrap_err().to_string(),
            "a and d are both shard 1/3; give each shard once"
        );
        let wrong = vec![part("e", 2, vec![1, 2])];
        assert!(matches!(check_cover(&wrong, &shard_of), Err(UnitsError::Units { .. })));
    }
}
