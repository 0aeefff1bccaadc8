//! `gcsim plan --shard I/K --out part-I.json`: evaluate this shard's share
//! of the cluster sizes; `gcsim merge` of the parts writes what the single
//! `gcsim plan` writes (see [`gcsim::plan::shard`]).

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use gcsim::plan::shard::PlanShardFile;
use gcsim::plan::{self, Objective, PlanRow};
use gcsim::shard::ShardId;
use gcsim::shard::units::assign;

use super::super::Status;
use super::super::flags::{PARTIAL, PLOT};
use super::super::merge::{MergeArgs, first_text, shard_files};
use super::super::notes::note;
use super::super::output::Output;
use super::super::progress::Bar;
use super::super::usage;
use super::{PlanConfig, PlanJob, PlanReport};

/// What a plan shard records of its plan: the JSON config and the table's
/// row count, which every part must share.
#[derive(Serialize, Deserialize)]
struct PlanRecord {
    config: PlanConfig,
    top: usize,
}

impl PlanJob {
    /// Evaluates the cluster sizes this shard is assigned and writes them,
    /// unranked, to --out.
    pub(super) fn write_shard(self, shard: ShardId) -> Result<Status> {
        let costs = plan::unit_costs(&self.req).map_err(usage)?;
        let assignment = assign(&costs, shard.count);
        let mine = |i: usize| assignment[i] + 1 == shard.index;
        let quiet = self.engine.quiet;
        let units = self
            .engine
            .pool()?
            .install(|| {
                plan::plan_units(&self.req, &mine, &|study, options| {
                    let bar = Bar::new(quiet, study.trials());
                    gcsim::engine::simulate_full(&gcsim::engine::TrialPlan::new(study), study, &bar, options)
                })
            })
            .map_err(usage)?;
        let record = PlanRecord {
            config: self.config,
            top: self.top,
        };
        let plan_value = serde_json::to_value(&record).context("the plan's configuration")?;
        let file = PlanShardFile::new(shard, plan_value, &self.req.ns, &assignment, &units);
        let dest = self.output.file.context("a shard needs --out")?;
        dest.write(|out| serde_json::to_writer(out, &file).map_err(std::io::Error::other))?;
        let sizes: Vec<String> = file.units.iter().map(|u| self.req.ns[u.index].to_string()).collect();
        note!(
            "wrote shard {}/{} (n = {} of {} cluster sizes) to {}; combine all {} with gcsim merge",
            shard.index,
            shard.count,
            if sizes.is_empty() {
                "none".to_string()
            } else {
                sizes.join(",")
            },
            self.req.ns.len(),
            dest.path().display(),
            shard.count
        );
        Ok(Status::Success)
    }
}

/// Whether the files `gcsim merge` was given are plan shards (by the
/// first file's `format`).
pub fn given(args: &MergeArgs) -> Result<bool> {
    let Some((first, text)) = first_text(args)? else {
        return Ok(false);
    };
    if gcsim::shard::units::has_format(&text, gcsim_figures::scenario::shard::FORMAT) {
        bail!(
            "{}: a part of a sharded scenario: merge them with gcsim scenario FILE --merge --out-dir DIR (the --out-dir the shards had)",
            first.display()
        );
    }
    Ok(PlanShardFile::is_plan_shard(&text))
}

/// A plan put together from its shards, and where it goes.
pub struct PlanMergeJob {
    report: PlanReport,
    output: Output,
}

impl TryFrom<MergeArgs> for PlanMergeJob {
    type Error = anyhow::Error;

    fn try_from(args: MergeArgs) -> Result<Self> {
        if let Some(p) = &args.plot {
            bail!("{PLOT} {}: a plan has no figure; drop {PLOT}", p.display());
        }
        if args.partial {
            bail!(
                "{PARTIAL} merges the trial shards of run and sweep; a plan's parts hold finished rows: merge them all at once"
            );
        }
        let mut files = Vec::new();
        for path in &shard_files(&args.files)? {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read the shard"))?;
            files.push((name.clone(), PlanShardFile::parse(&name, &text)?));
        }
        let (plan_value, rows) = plan::shard::merge(&files)?;
        let first = &files[0].0;
        let record: PlanRecord = serde_json::from_value(plan_value)
            .with_context(|| format!("{first}: the plan's configuration is not one this gcsim writes"))?;
        let objective: Objective = record
            .config
            .objective
            .parse()
            .map_err(|e| anyhow::anyhow!("{first}: the plan's objective: {e}"))?;
        let config = record.config;
        let output = Output::resolve(args.format, args.out.as_deref())?
            .with_columns_and::<PlanRow>(&args.columns, &config.extra_columns())?;
        let rows = plan::rank(rows, &objective);
        Ok(Self {
            report: PlanReport {
                recommendation: plan::recommendation(&rows, &objective),
                config,
                rows,
                top: record.top,
            },
            output,
        })
    }
}

impl PlanMergeJob {
    /// Writes the merged plan, as `gcsim plan` writes it.
    pub fn execute(self) -> Result<Status> {
        super::write_plan(&self.report, &self.output)
    }
}
