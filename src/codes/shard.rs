//! `gcsim codes --shard I/K --out part-I.json`: decode this shard's share
//! of the straggler patterns (or worker sets); `gcsim merge` of the parts
//! writes what the single `gcsim codes` writes (see
//! [`gcsim::shard::codes`]).

use anyhow::{Context, Result, bail};

use gcsim::engine::Progress;
use gcsim::shard::ShardId;
use gcsim::shard::codes::{self as parts, CheckedRow, CodesRun, CodesShardFile};

use super::{Checked, CodesArgs, CodesJob, write_result};
use crate::Status;
use crate::flags::{COLUMNS, PARTIAL, PLOT, SHARD};
use crate::merge::{MergeArgs, first_text, shard_files};
use crate::notes::note;
use crate::output::Output;
use crate::progress::Bar;

/// The output of a codes shard: its partial result, as JSON, to --out;
/// refused when there are fewer sets than shards.
pub(super) fn shard_output(run: &CodesRun, shard: ShardId, args: &CodesArgs) -> Result<Output> {
    if shard.count > run.sets {
        bail!(
            "{SHARD} {}/{}: {} decodes {} sets of workers, split into at most {} shards (each decodes at least one): give K <= {}",
            shard.index,
            shard.count,
            run.code,
            run.sets,
            run.sets,
            run.sets
        );
    }
    crate::common::partial_output(shard, args.out.as_deref(), &[], args.format)
}

/// Decodes the sets of shard `shard` and writes them to the job's file.
pub(super) fn write_shard(job: &CodesJob, pool: &rayon::ThreadPool, shard: ShardId) -> Result<Status> {
    let (limit, seed) = (job.limit, job.seed);
    let decodings = match &job.code {
        Checked::Gradient(code) => parts::gradient_decodings(code, limit, shard),
        Checked::Matmul(code) => {
            let sets = parts::matmul_run(code, limit, seed).sets;
            let range = parts::sets_of(sets, shard.index - 1, shard.count);
            range.end - range.start
        }
    };
    let bar = Bar::counting(job.quiet, decodings, "decoding", "worker sets");
    bar.pass(1, decodings);
    let file = pool.install(|| match &job.code {
        Checked::Gradient(code) => parts::gradient_shard(code, limit, seed, shard, &|| bar.advance(1)),
        Checked::Matmul(code) => parts::matmul_shard(code, limit, seed, shard, &|| bar.advance(1)),
    });
    bar.finish();
    let dest = job.output.file.as_ref().context("a shard needs --out")?;
    dest.write(|out| serde_json::to_writer(out, &file).map_err(std::io::Error::other))?;
    note!(
        "wrote shard {}/{} (sets {} to {} of {}) to {}; combine all {} with gcsim merge",
        shard.index,
        shard.count,
        file.first + 1,
        file.first + file.count,
        file.run.sets,
        dest.path().display(),
        shard.count
    );
    Ok(Status::Success)
}

/// Whether the files `gcsim merge` was given are codes shards (by the first
/// file's `format`).
pub fn given(args: &MergeArgs) -> Result<bool> {
    Ok(first_text(args)?.is_some_and(|(_, text)| CodesShardFile::is_codes_shard(&text)))
}

/// A `gcsim codes` run put together from its shards, and where it goes.
pub struct CodesMergeJob {
    run: CodesRun,
    row: CheckedRow,
    output: Output,
}

impl TryFrom<MergeArgs> for CodesMergeJob {
    type Error = anyhow::Error;

    fn try_from(args: MergeArgs) -> Result<Self> {
        if let Some(p) = &args.plot {
            bail!(
                "{PLOT} {}: the parts of a codes check hold no sweep to draw",
                p.display()
            );
        }
        if args.partial {
            bail!("{PARTIAL} merges the trial shards of run and sweep; merge a codes check's parts all at once");
        }
        if !args.columns.is_empty() {
            bail!("{COLUMNS}: gcsim codes writes every column; drop it");
        }
        let mut files = Vec::new();
        for path in &shard_files(&args.files)? {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read the shard"))?;
            files.push((name.clone(), CodesShardFile::parse(&name, &text)?));
        }
        let (run, row) = parts::merge(files)?;
        let output = Output::resolve(args.format, args.out.as_deref())?;
        Ok(Self { run, row, output })
    }
}

impl CodesMergeJob {
    /// Writes the merged checks, as `gcsim codes` writes them, with its exit status.
    pub fn execute(self) -> Result<Status> {
        write_result(self.row, &self.run.code, self.run.limit, self.run.seed, &self.output)
    }
}
