//! The merge of shard files as they are read: each file is checked against
//! the first (same study, same split, shards not seen before, the units its
//! shards run, counts that add up) and folded in, then dropped.
//!
//! Where the run is split by trials ([`Split::Values`]), the union keeps the
//! values, and the engine runs on them once all are in. Where it is split
//! by chunks, tallies add and ranges widen at once (integer sums and
//! minima, in any order the same); the power sums of each block (one
//! [`Moments`] per configuration per 2²⁰ trials) and of each chunk of a
//! block held in part are kept, and once all are in, chunks fold in index
//! order into their block and blocks into the total, which makes the
//! floating-point sums the single run's, bit for bit. Memory is one file
//! and what the union keeps.
//!
//! The union of some of a run's shards is itself a file of the same kind
//! ([`Union::into_file`], `merge --partial`), which merges on with the
//! other shards: the final merge is the same however the shards were
//! grouped.

use std::ops::Range;

use super::coverage::{Coverage, Held};
use super::runs::{MergeError, ShardPart, Split};
use super::{ShardError, ShardFile};
use crate::engine::pass::PassTotals;
use crate::engine::{
    BLOCK_CHUNKS, Options, Outcome, Progress, Started, TrialPlan, block_count, block_trials, chunk_count, chunk_trials,
    outcome_of_values,
};
use crate::report::RunConfig;
use crate::stats::Moments;
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
    /// What the files read hold: blocks, chunks and values, in the order read.
    part: ShardPart,
    /// The input that set the number of configurations and windows, if any
    /// has: the one blamed when they do not fit the study.
    shaped_by: Option<usize>,
    /// The shards of that input, kept for its error messages.
    kept: Vec<(usize, Coverage)>,
}

/// What the shards of a coverage hold: where the run is split by trials,
/// their runs of trials; else the blocks they cover whole and the chunks of
/// the blocks they cover in part.
#[derive(Debug, Default, PartialEq)]
struct Units {
    trials: Vec<Range<u64>>,
    blocks: Vec<u64>,
    chunks: Vec<u64>,
}

impl Units {
    /// The units the shards of `coverage` run, of `study`.
    fn of(study: &Study, coverage: &Coverage) -> Self {
        let (trials, count) = (study.trials(), coverage.count());
        let split = Split::of(study, count);
        let mut ranges: Vec<Range<u64>> = Vec::new();
        for &(a, b) in coverage.runs() {
            let range = split.range(trials, a - 1, count).start..split.range(trials, b - 1, count).end;
            match ranges.last_mut() {
                Some(last) if last.end == range.start => last.end = range.end,
                _ => ranges.push(range),
            }
        }
        let mut this = Self::default();
        for range in ranges.into_iter().filter(|r| !r.is_empty()) {
            match split {
                Split::Values => this.trials.push(range),
                Split::Blocks | Split::Chunks => {
                    let all = chunk_count(trials);
                    for block in range.start / BLOCK_CHUNKS..range.end.div_ceil(BLOCK_CHUNKS) {
                        let whole = block * BLOCK_CHUNKS..((block + 1) * BLOCK_CHUNKS).min(all);
                        if range.start <= whole.start && whole.end <= range.end {
                            this.blocks.push(block);
                        } else {
                            this.chunks
                                .extend(whole.start.max(range.start)..whole.end.min(range.end));
                        }
                    }
                }
            }
        }
        this
    }
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
            part: ShardPart {
                index: 0,
                count: coverage.count(),
                blocks: Vec::new(),
                chunks: Vec::new(),
                range: Vec::new(),
                tallies: Vec::new(),
                values: Vec::new(),
            },
            shaped_by: None,
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

    /// Checks that a shard's part holds what its coverage says: the trials'
    /// values, or the blocks and chunks, its runs cover, each with every
    /// configuration's count of trials, windows that count no more than
    /// those trials, and the shape of the parts folded before it.
    fn check(
        &self,
        part: &ShardPart,
        coverage: &Coverage,
        wrong: &dyn Fn(String) -> MergeError,
    ) -> Result<(), MergeError> {
        let trials = self.study.trials();
        let slots = self.study.schemes().len() + 1;
        let expected = Units::of(&self.study, coverage);
        let whose = if coverage.plural() {
            "the --shard of each"
        } else {
            "its --shard"
        };
        let held_trials: Vec<Range<u64>> = part
            .values
            .iter()
            .map(|(first, v)| *first..first.saturating_add((v.len() / slots) as u64))
            .collect();
        if held_trials != expected.trials || part.values.iter().any(|(_, v)| v.len() % slots != 0) {
            return Err(wrong(format!("its trials' values are not those {whose} runs")));
        }
        if !part.blocks.iter().map(|b| b.0).eq(expected.blocks.iter().copied())
            || !part.chunks.iter().map(|c| c.0).eq(expected.chunks.iter().copied())
        {
            return Err(wrong(format!("its blocks are not the ones {whose} runs")));
        }
        let windows = !part.range.is_empty() || !part.tallies.is_empty();
        if !part.values.is_empty() && windows {
            return Err(wrong("it holds values and windows both".into()));
        }
        let mut covered_trials = 0u64;
        let units = part
            .blocks
            .iter()
            .map(|(b, m)| (format!("block {b}"), block_trials(trials, *b), m));
        let chunks = part
            .chunks
            .iter()
            .map(|(c, m)| (format!("chunk {c}"), chunk_trials(trials, *c), m));
        for (unit, expected, moments) in units.chain(chunks) {
            if moments.len() != part.range.len() {
                return Err(wrong(format!("{unit} has the wrong number of configurations")));
            }
            if moments.iter().any(|m| m.count() != expected || m.infinite() > expected) {
                return Err(wrong(format!("{unit}'s counts are not its {expected} trials")));
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
        if self.shaped_by.is_some() && part.values.is_empty() {
            let fits = part.range.len() == self.part.range.len()
                && part.tallies.len() == self.part.tallies.len()
                && part
                    .tallies
                    .iter()
                    .zip(&self.part.tallies)
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
        if let Err(what) = super::runs::check_split(&self.study, coverage.count()) {
            return Err(wrong(format!("a split into {} shards: {what}", coverage.count())));
        }
        let part = file.part().map_err(&wrong)?;
        drop(file);
        self.check(&part, &coverage, &wrong)?;
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
        if part.values.is_empty() {
            if self.shaped_by.is_none() {
                self.shaped_by = Some(input);
                self.kept.push((input, coverage));
                self.part.range = part.range;
                self.part.tallies = part.tallies;
            } else {
                for (r, pr) in self.part.range.iter_mut().zip(&part.range) {
                    *r = (r.0.min(pr.0), r.1.max(pr.1));
                }
                for (t, pt) in self.part.tallies.iter_mut().zip(&part.tallies) {
                    t.merge(pt);
                }
            }
        }
        self.part.blocks.extend(part.blocks);
        self.part.chunks.extend(part.chunks);
        self.part.values.extend(part.values);
        // Blocks whose chunks are all in now fold, so that what is held
        // stays one entry per block.
        self.canonical();
        Ok(())
    }

    /// Puts what the union holds in the form one file of its shards holds:
    /// everything in index order, consecutive trials' values joined, and the
    /// chunks of each block held whole folded into the block, in order.
    fn canonical(&mut self) {
        let part = &mut self.part;
        part.values.sort_by_key(|v| v.0);
        let slots = (self.study.schemes().len() + 1) as u64;
        let mut joined: Vec<(u64, Vec<f64>)> = Vec::new();
        for (first, values) in std::mem::take(&mut part.values) {
            match joined.last_mut() {
                Some((f, v)) if *f + v.len() as u64 / slots == first => v.extend(values),
                _ => joined.push((first, values)),
            }
        }
        part.values = joined;
        part.chunks.sort_by_key(|c| c.0);
        let all = chunk_count(self.study.trials());
        let mut kept = Vec::new();
        let mut chunks = std::mem::take(&mut part.chunks).into_iter().peekable();
        while let Some((c, moments)) = chunks.next() {
            let block = c / BLOCK_CHUNKS;
            let whole = block * BLOCK_CHUNKS..((block + 1) * BLOCK_CHUNKS).min(all);
            let mut run = vec![(c, moments)];
            while let Some(next) = chunks.next_if(|n| n.0 / BLOCK_CHUNKS == block) {
                run.push(next);
            }
            let complete = run.len() as u64 == whole.end - whole.start;
            if complete {
                let mut sums = vec![Moments::ZERO; run[0].1.len()];
                for (_, m) in &run {
                    for (s, m) in sums.iter_mut().zip(m) {
                        s.merge(m);
                    }
                }
                part.blocks.push((block, sums));
            } else {
                kept.extend(run);
            }
        }
        part.chunks = kept;
        part.blocks.sort_by_key(|b| b.0);
    }

    /// The file of this union: a partial merge that later merges extend.
    pub fn into_file(mut self) -> ShardFile {
        self.canonical();
        let coverage = self.held.coverage(self.count).expect("a union holds at least one file");
        ShardFile::partial(&self.study, &self.config, &coverage, &self.part)
    }

    /// The outcome of the whole run, once every shard is in, the single
    /// run's bit for bit: from every trial's values where the run is split
    /// by trials; else the pilot is recomputed (a pure function of the
    /// seed), chunks and blocks fold in index order, and any quantile
    /// refinement pass runs here.
    pub fn finish(mut self, progress: &dyn Progress) -> Result<Outcome, MergeError> {
        let missing = self.missing();
        if !missing.is_empty() {
            return Err(MergeError::Missing(missing, self.count));
        }
        self.canonical();
        if Split::of(&self.study, self.count) == Split::Values {
            let rows: Vec<f64> = std::mem::take(&mut self.part.values)
                .into_iter()
                .flat_map(|v| v.1)
                .collect();
            return Ok(outcome_of_values(&self.study, &rows, progress));
        }
        let plan = TrialPlan::new(&self.study);
        let run = Started::new(&plan, &self.study, &Options::default(), progress);
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
        let pass = run.first_pass_spec();
        let mut totals = PassTotals::new(&pass);
        let fits = self.part.range.len() == totals.range.len()
            && self.part.tallies.len() == totals.tallies.len()
            && self
                .part
                .tallies
                .iter()
                .zip(&totals.tallies)
                .all(|(a, t)| a.counts.len() == t.counts.len() && a.bin_range.bins() == t.bin_range.bins());
        if !fits {
            return Err(blame(self.shaped_by, "wrong number of configurations, windows or bins"));
        }
        debug_assert!(self.part.chunks.is_empty() && self.part.blocks.len() as u64 == block_count(self.study.trials()));
        for (_, moments) in &self.part.blocks {
            for (t, m) in totals.moments.iter_mut().zip(moments) {
                t.merge(m);
            }
        }
        for (r, u) in totals.range.iter_mut().zip(&self.part.range) {
            *r = (r.0.min(u.0), r.1.max(u.1));
        }
        for (t, u) in totals.tallies.iter_mut().zip(&self.part.tallies) {
            t.merge(u);
        }
        let outcome = run.finish(totals, progress);
        progress.finish();
        Ok(outcome)
    }
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

    /// Seven shards of 4.2 million trials of seven configurations (too many
    /// values to keep: split by chunks, five blocks, the shards' ends inside
    /// blocks), folded one at a time: what the union keeps grows by each
    /// file's blocks and chunks only (its tallies and ranges are those of
    /// one file), a partial merge of shards 1 and 3 stands for them, and the
    /// result is the single run's.
    #[test]
    fn a_union_keeps_blocks_not_files() {
        let crc = |s| {
            Scheme::new(
                SchemeKind::Crc,
                8,
                Params {
                    s: Some(s),
                    ..Params::default()
                },
            )
            .unwrap()
        };
        let schemes = (1..=6).map(crc).collect();
        let study = Study::new(8, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, 4_200_000, 5).unwrap();
        assert_eq!(Split::of(&study, 7), Split::Chunks);
        assert_eq!(Split::of(&study, 5), Split::Blocks);
        let files: Vec<ShardFile> = (0..7)
            .map(|i| ShardFile::new(&study, &config(), &simulate_shard(&study, i, 7, &Silent)))
            .collect();
        assert!(files.iter().all(|f| f.values.is_empty() && !f.chunks.is_empty()));
        let windows = files[0].tallies.len();
        let bins: usize = files[0].tallies.iter().map(|t| t.counts.len()).sum();
        let partial = {
            let mut u = Union::new("1.json", files[0].clone()).unwrap();
            u.add("3.json", files[2].clone()).unwrap();
            assert_eq!(u.missing(), vec![(2, 2), (4, 7)]);
            u.into_file()
        };
        let mut union = Union::new("p.json", partial).unwrap();
        for (i, name) in [
            (3, "4.json"),
            (1, "2.json"),
            (6, "7.json"),
            (4, "5.json"),
            (5, "6.json"),
        ] {
            union.add(name, files[i].clone()).unwrap();
            assert_eq!(union.part.tallies.len(), windows);
            assert_eq!(union.part.tallies.iter().map(|t| t.counts.len()).sum::<usize>(), bins);
        }
        union.canonical();
        assert_eq!(union.part.blocks.len(), 5);
        assert!(union.part.chunks.is_empty());
        assert_eq!(union.names.len(), 6);
        assert!(union.missing().is_empty());
        assert_eq!(union.finish(&Silent).unwrap(), simulate(&study, &Silent));
    }

    /// A run whose values are kept splits into as many shards as it has
    /// trials, and into fewer, each merging to the single run, whatever the
    /// order the files come in.
    #[test]
    fn a_run_of_kept_values_splits_down_to_one_trial_a_shard() {
        let crc = Scheme::new(
            SchemeKind::Crc,
            6,
            Params {
                s: Some(1),
                ..Params::default()
            },
        )
        .unwrap();
        let study = Study::new(6, Dist::exp(1.0).unwrap(), LoadModel::Fixed, vec![crc], 9, 2).unwrap();
        assert_eq!(Split::of(&study, 9), Split::Values);
        let single = simulate(&study, &Silent);
        for k in [1, 2, 4, 9] {
            let files: Vec<ShardFile> = (0..k)
                .map(|i| ShardFile::new(&study, &config(), &simulate_shard(&study, i, k, &Silent)))
                .collect();
            let mut union = Union::new("last.json", files[k as usize - 1].clone()).unwrap();
            for (i, f) in files.iter().enumerate().take(k as usize - 1) {
                union.add(&format!("{i}.json"), f.clone()).unwrap();
            }
            assert_eq!(union.finish(&Silent).unwrap(), single, "{k} shards");
        }
        assert!(super::super::runs::check_split(&study, 10).is_err());
    }
}
