//! `gcsim train --shard I/K --out part-I.json`: train this shard's share of
//! the repeats; `gcsim merge` of the parts writes what the single `gcsim
//! train` writes (see [`gcsim::train::shard`]).

use anyhow::{Context, Result, bail};

use gcsim::engine::Progress;

use gcsim::export::Format;
use gcsim::shard::ShardId;
use gcsim::study::Study;
use gcsim::train::report::TrainConfig;
use gcsim::train::run::Trainer;
use gcsim::train::shard::{TrainShardFile, repeats_of};
use gcsim::train::summary::TrainRow;

use super::{TrainArgs, summarise};
use crate::Status;
use crate::flags::{CURVES, PARTIAL, PLOT, SHARD, named};
use crate::job::Engine;
use crate::merge::{MergeArgs, first_text, shard_files};
use crate::notes::note;
use crate::output::Output;
use crate::progress::Bar;

/// The output of a training shard: its partial result, as JSON, to --out;
/// refused with the flags that write finished results (they go to the merge).
pub(super) fn shard_output(args: &TrainArgs, shard: ShardId) -> Result<Output> {
    if shard.count > args.repeats {
        bail!(
            "{SHARD} {}/{}: {} repeats split into at most {} shards (each trains at least one repeat): give K <= {} (or more --repeats)",
            shard.index,
            shard.count,
            args.repeats,
            args.repeats,
            args.repeats
        );
    }
    for (flag, given) in [(CURVES, args.curves.is_some()), (PLOT, args.plot.is_some())] {
        if given {
            bail!("{SHARD} writes a partial result of some repeats; drop {flag} (train without {SHARD} writes it)");
        }
    }
    crate::common::partial_output(shard, args.out.as_deref(), &args.columns, args.format)
}

/// Trains the repeats of shard `shard` and writes them to the output's file.
pub(super) fn write_shard(
    study: &Study,
    trainer: &Trainer,
    config: &TrainConfig,
    output: &Output,
    engine: Engine,
    shard: ShardId,
) -> Result<Status> {
    let repeats = repeats_of(study.trials(), shard.index - 1, shard.count);
    let count = repeats.end - repeats.start;
    let bar = Bar::counting(engine.quiet, count, "training", "repeats");
    bar.pass(1, count);
    let runs = engine
        .pool()?
        .install(|| trainer.run_repeats(repeats.clone(), &|done| bar.advance(done)));
    bar.finish();
    let file = TrainShardFile::new(shard, study, config, repeats.start, &runs);
    let dest = output.file.as_ref().context("a shard needs --out")?;
    dest.write(|out| serde_json::to_writer(out, &file).map_err(std::io::Error::other))?;
    note!(
        "wrote shard {}/{} (repeats {} to {} of {}) to {}; combine all {} with gcsim merge",
        shard.index,
        shard.count,
        repeats.start + 1,
        repeats.end,
        study.trials(),
        dest.path().display(),
        shard.count
    );
    Ok(Status::Success)
}

/// Whether the files `gcsim merge` was given are training shards (by the
/// first file's `format`).
pub fn given(args: &MergeArgs) -> Result<bool> {
    Ok(first_text(args)?.is_some_and(|(_, text)| TrainShardFile::is_train_shard(&text)))
}

/// A training study put together from its shards, and where it goes.
pub struct TrainMergeJob {
    report: gcsim::train::report::TrainReport,
    output: Output,
}

impl TryFrom<MergeArgs> for TrainMergeJob {
    type Error = anyhow::Error;

    fn try_from(args: MergeArgs) -> Result<Self> {
        if let Some(p) = &args.plot {
            bail!(
                "{PLOT} {}: the parts of a training study hold its runs, not a sweep; draw its loss curves with train --plot",
                p.display()
            );
        }
        if args.partial {
            bail!("{PARTIAL} merges the trial shards of run and sweep; merge a training study's parts all at once");
        }
        let mut files = Vec::new();
        for path in &shard_files(&args.files)? {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read the shard"))?;
            files.push((name.clone(), TrainShardFile::parse(&name, &text)?));
        }
        let (_, config, trained) = gcsim::train::shard::merge(files)?;
        let problem = config
            .problem
            .parse()
            .map_err(|e| anyhow::anyhow!("the training study's problem: {e}"))?;
        let targets = config.targets;
        let output = Output::resolve(args.format, args.out.as_deref())?.with_columns::<TrainRow>(&args.columns)?;
        let report = summarise(
            &trained,
            problem,
            &targets,
            config,
            ("", &named(gcsim::param::Param::Step)),
        );
        Ok(Self { report, output })
    }
}

impl TrainMergeJob {
    /// Writes the merged training study, as `gcsim train` writes it.
    pub fn execute(self) -> Result<Status> {
        if let Some(path) = self.output.write(&self.report)? {
            note!("wrote {}", path.display());
        }
        if self.output.format == Format::Csv
            && let Some(line) = self.report.verdict_line()
        {
            note!("{line}");
        }
        Ok(Status::Success)
    }
}
