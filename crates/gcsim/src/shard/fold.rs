//! The merge of shard files as they are read, in memory bounded by one file
//! and the result: each file is checked against the first (same study,
//! same split, shards not seen before, the blocks its shards run, counts
//! that add up) and folded in, then dropped. Tallies add and ranges widen
//! at once (integer sums and minima, in any order the same); each block's
//! power sums (one [`Moments`] per configuration per 2²⁰ trials) are kept,
//! and fold in block-index order once all are in, which makes the
//! floating-point sums the single run's, bit for bit.
//!
//! The union of some of a run's shards is itself a file of the same kind
//! ([`Union::into_file`], `merge --partial`), which merges on with the
//! other shards: the final merge is the same however the shards were
//! grouped.

use super::coverage::{Coverage, Held};
use super::runs::{MergeError, ShardPart, shard_blocks};
use super::{ShardError, ShardFile};
use crate::engine::pass::PassTotals;
use crate::engine::{Options, Outcome, Progress, Started, TrialPlan, block_count, block_trials};
use crate::report::RunConfig;
use crate::stats::Moments;
use crate::stats::quantile::Tally;
use crate::study::Study;

/// The union of the shard files read so far.
#[derive(Debug, Clone)]
pub struct Union {
    study: Study,
    config: RunConfig,
    /// Number of shards of the split.
    count: u64,
    /// The shards read, with the input (an index into `names`) that held each.
    held: Held,
    /// Every input's name, in the order read.
    names: Vec<String>,
    /// Power sums of every block read, in the order read.
    blocks: Vec<(u64, Vec<Moments>)>,
    /// Smallest and largest value per configuration.
    range: Vec<(f64, f64)>,
    /// First-pass window tallies, added.
    tallies: Vec<Tally>,
    /// The input that set the number of configurations and windows, if any
    /// has: the one blamed when they do not fit the study.
    shaped_by: Option<usize>,
    /// An input with no blocks: right only when the pilot is the whole run.
    hollow: Option<usize>,
    /// The shards of each input, kept for its error messages only while it
    /// is the one that shaped the union or is hollow.
    kept: Vec<(usize, Coverage)>,
}

impl Union {
    /// The union of one file, `name`, read with [`ShardFile::parse`].
    pub fn new(name: &str, file: ShardFile) -> Result<Self, MergeError> {
        let coverage = file.coverage().map_err(|reason| malformed(name, reason))?;
        let mut union = Self {
            study: file.study.clone(),
            config: file.config.clone(),
            count: coverage.count(),
            held: Held::default(),
            names: Vec::new(),
            blocks: Vec::new(),
            range: Vec::new(),
            tallies: Vec::new(),
            shaped_by: None,
            hollow: None,
            kept: Vec::new(),
        };
        union.fold(name, file, coverage)?;
        Ok(union)
    }

    /// Adds the file `name`: it must be of the same run and split, and hold
    /// none of the shards read before.
    pub fn add(&mut self, name: &str, file: ShardFile) -> Result<(), MergeError> {
        if file.study != self.study || file.config != self.config {
            return Err(ShardError::Different(self.names[0].clone(), name.to_string()).into());
        }
        let coverage = file.coverage().map_err(|reason| malformed(name, reason))?;
        if coverage.count() != self.count {
            return Err(MergeError::Counts {
                first: self.names[0].clone(),
                file: name.to_string(),
                count: self.count,
                found: coverage.count(),
            });
        }
        self.fold(name, file, coverage)
    }

    /// The study of the run.
    pub fn study(&self) -> &Study {
        &self.study
    }

    /// The output configuration of the run.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// The shards of the split not read yet, as runs of 1-based indices.
    pub fn missing(&self) -> Vec<(u64, u64)> {
        self.held.missing(self.count)
    }

    /// Checks that a shard's part holds what its coverage says: the blocks
    /// its runs cover, each with every configuration's count of trials,
    /// windows that count no more than those trials, and the shape of the
    /// parts folded before it.
    fn check(
        &self,
        part: &ShardPart,
        coverage: &Coverage,
        blocks: u64,
        wrong: &dyn Fn(String) -> MergeError,
    ) -> Result<(), MergeError> {
        let trials = self.study.trials();
        let mut covered_trials = 0u64;
        if !part.blocks.iter().map(|b| b.0).eq(blocks_of(coverage, blocks)) {
            return Err(wrong(format!(
                "its blocks are not the ones {} runs",
                if coverage.plural() {
                    "the --shard of each"
                } else {
                    "its --shard"
                }
            )));
        }
        let slots = part.range.len();
        for (b, moments) in &part.blocks {
            if moments.len() != slots {
                return Err(wrong(format!("block {b} has the wrong number of configurations")));
            }
            let expected = block_trials(trials, *b);
            if moments.iter().any(|m| m.count() != expected || m.infinite() > expected) {
                return Err(wrong(format!("block {b}'s counts are not its {expected} trials")));
            }
            covered_trials += expected;
        }
        for t in &part.tallies {
            let held = t.counts.iter().try_fold(t.below, |a, &c| a.checked_add(c));
            if held.is_none_or(|h| h > covered_trials) {
                return Err(wrong(format!(
                    "a window counts more values than {} trials",
                    if coverage.plural() {
                        "the shards have"
                    } else {
                        "the shard has"
                    }
                )));
            }
        }
        if self.shaped_by.is_some() {
            let fits = part.range.len() == self.range.len()
                && part.tallies.len() == self.tallies.len()
                && part
                    .tallies
                    .iter()
                    .zip(&self.tallies)
                    .all(|(p, t)| p.counts.len() == t.counts.len() && p.bin_range.bins() == t.bin_range.bins());
            if !fits {
                let first = &self.names[self.shaped_by.unwrap_or(0)];
                return Err(wrong(format!(
                    "its numbers of configurations, windows or bins are not those of {first}"
                )));
            }
        }
        Ok(())
    }

    /// Checks `file` against the study and folds it in.
    fn fold(&mut self, name: &str, file: ShardFile, coverage: Coverage) -> Result<(), MergeError> {
        let wrong = |what: String| MergeError::Inconsistent {
            file: name.to_string(),
            shards: coverage.runs().to_vec(),
            count: coverage.count(),
            what,
        };
        let trials = self.study.trials();
        let blocks = block_count(trials);
        if coverage.count() > blocks {
            return Err(wrong(format!(
                "a split into {} shards of {blocks} blocks of 2^20 trials (each shard runs whole blocks)",
                coverage.count()
            )));
        }
        let part = file.part();
        drop(file);
        let hollow = part.blocks.is_empty() && part.range.is_empty() && part.tallies.is_empty();
        if !hollow {
            self.check(&part, &coverage, blocks, &wrong)?;
        }
        let input = self.names.len();
        if let Err(repeated) = self.held.take(&coverage, input) {
            return Err(MergeError::Repeated {
                file: name.to_string(),
                shards: repeated.shards,
                count: self.count,
                earlier: repeated.holders.into_iter().map(|i| self.names[i].clone()).collect(),
            });
        }
        self.names.push(name.to_string());
        if hollow {
            if self.hollow.is_none() {
                self.hollow = Some(input);
                self.kept.push((input, coverage));
            }
            return Ok(());
        }
        if self.shaped_by.is_none() {
            self.shaped_by = Some(input);
            self.kept.push((input, coverage));
            self.range = part.range;
            self.tallies = part.tallies;
        } else {
            for (r, pr) in self.range.iter_mut().zip(&part.range) {
                *r = (r.0.min(pr.0), r.1.max(pr.1));
            }
            for (t, pt) in self.tallies.iter_mut().zip(&part.tallies) {
                t.merge(pt);
            }
        }
        self.blocks.extend(part.blocks);
        Ok(())
    }

    /// The file of this union: a partial merge (version 7) that later
    /// merges extend. Its blocks are in index order.
    pub fn into_file(mut self) -> ShardFile {
        self.blocks.sort_by_key(|b| b.0);
        let coverage = self.held.coverage(self.count).expect("a union holds at least one file");
        ShardFile::partial(
            &self.study,
            &self.config,
            &coverage,
            &self.blocks,
            &self.range,
            &self.tallies,
        )
    }

    /// The outcome of the whole run, once every shard is in, the single
    /// run's bit for bit: the pilot is recomputed (a pure function of the
    /// seed), blocks fold in index order, and any quantile refinement pass
    /// runs here.
    pub fn finish(mut self, progress: &dyn Progress) -> Result<Outcome, MergeError> {
        let missing = self.missing();
        if !missing.is_empty() {
            return Err(MergeError::Missing(missing, self.count));
        }
        let plan = TrialPlan::new(&self.study);
        let run = Started::new(&plan, &self.study, &Options::default(), progress);
        if run.pilot_is_whole_run() {
            let outcome = run.whole_run_outcome(progress);
            progress.finish();
            return Ok(outcome);
        }
        let blame = |input: Option<usize>, what: &str| {
            let (i, coverage) = self
                .kept
                .iter()
                .find(|k| Some(k.0) == input)
                .expect("a blamed input is kept");
            MergeError::Inconsistent {
                file: self.names[*i].clone(),
                shards: coverage.runs().to_vec(),
                count: self.count,
                what: what.to_string(),
            }
        };
        if self.hollow.is_some() {
            return Err(blame(
                self.hollow,
                "it holds no blocks, but the run is longer than its pilot",
            ));
        }
        let pass = run.first_pass_spec();
        let mut totals = PassTotals::new(&pass);
        let fits = self.range.len() == totals.range.len()
            && self.tallies.len() == totals.tallies.len()
            && self
                .tallies
                .iter()
                .zip(&totals.tallies)
                .all(|(a, t)| a.counts.len() == t.counts.len() && a.bin_range.bins() == t.bin_range.bins());
        if !fits {
            return Err(blame(self.shaped_by, "wrong number of configurations, windows or bins"));
        }
        self.blocks.sort_by_key(|b| b.0);
        for (_, moments) in &self.blocks {
            for (t, m) in totals.moments.iter_mut().zip(moments) {
                t.merge(m);
            }
        }
        for (r, u) in totals.range.iter_mut().zip(&self.range) {
            *r = (r.0.min(u.0), r.1.max(u.1));
        }
        for (t, u) in totals.tallies.iter_mut().zip(&self.tallies) {
            t.merge(u);
        }
        let outcome = run.finish(totals, progress);
        progress.finish();
        Ok(outcome)
    }
}

/// The blocks the shards of `coverage` run, in index order: shards `a` to
/// `b` run one contiguous share of the `blocks`.
fn blocks_of(coverage: &Coverage, blocks: u64) -> impl Iterator<Item = u64> + '_ {
    let count = coverage.count();
    coverage
        .runs()
        .iter()
        .flat_map(move |&(a, b)| shard_blocks(blocks, a - 1, count).start..shard_blocks(blocks, b - 1, count).end)
}

/// A file whose `shard` field is not one [`ShardFile::parse`] accepts.
fn malformed(file: &str, reason: String) -> MergeError {
    ShardError::Malformed {
        file: file.to_string(),
        reason: format!("\"shard\": {reason}"),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::engine::{Silent, simulate};
    use crate::load::LoadModel;
    use crate::scheme::{Params, Scheme, SchemeKind};
    use crate::shard::runs::simulate_shard;

    /// A run's output configuration, as a shard file carries it (merge
    /// only compares it between files).
    fn config() -> RunConfig {
        let text = include_str!("../../../../tests/fuzz-regressions/shard-n-zero.json");
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        serde_json::from_value(v["config"].clone()).unwrap()
    }

    /// Four shards of 4.2 million trials (five blocks), folded one at a
    /// time: what the union keeps grows by each file's blocks only (its
    /// tallies and ranges are those of one file), a partial merge of
    /// shards 1 and 3 stands for them, and the result is the single run's.
    #[test]
    fn a_union_keeps_blocks_not_files() {
        let crc = Scheme::new(
            SchemeKind::Crc,
            8,
            Params {
                s: Some(2),
                ..Params::default()
            },
        )
        .unwrap();
        let study = Study::new(8, Dist::exp(1.0).unwrap(), LoadModel::Fixed, vec![crc], 4_200_000, 5).unwrap();
        let files: Vec<ShardFile> = (0..4)
            .map(|i| ShardFile::new(&study, &config(), &simulate_shard(&study, i, 4, &Silent)))
            .collect();
        let windows = files[0].tallies.len();
        let bins: usize = files[0].tallies.iter().map(|t| t.counts.len()).sum();
        let partial = {
            let mut u = Union::new("1.json", files[0].clone()).unwrap();
            u.add("3.json", files[2].clone()).unwrap();
            assert_eq!(u.missing(), vec![(2, 2), (4, 4)]);
            u.into_file()
        };
        let mut union = Union::new("p.json", partial).unwrap();
        for (i, name) in [(3, "4.json"), (1, "2.json")] {
            union.add(name, files[i].clone()).unwrap();
            assert_eq!(union.tallies.len(), windows);
            assert_eq!(union.tallies.iter().map(|t| t.counts.len()).sum::<usize>(), bins);
        }
        assert_eq!(union.blocks.len(), 5);
        assert_eq!(union.names.len(), 3);
        assert!(union.missing().is_empty());
        assert_eq!(union.finish(&Silent).unwrap(), simulate(&study, &Silent));
    }
}
