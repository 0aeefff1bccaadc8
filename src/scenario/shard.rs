//! The partial results of `gcsim scenario FILE --shard I/K` and their
//! `--merge` (see [`gcsim_figures::scenario::shard`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use gcsim::shard::ShardId;
use gcsim_figures::scenario::Scenario;
use gcsim_figures::scenario::shard::{ItemRecord, ScenarioShardFile, merge, part_file, parts_dir};

use super::super::output::write_atomically;

/// Where a scenario's parts go: `<out-dir>/<name>-shards/`, beside its
/// directory `dir` (`<out-dir>/<name>`), so that its own files are the
/// whole run's.
fn parts_of(dir: &Path, scenario: &Scenario) -> PathBuf {
    dir.with_file_name(parts_dir(&scenario.name))
}

/// Writes shard `shard`'s records.
pub(super) fn write_part(
    dir: &Path,
    scenario: &Scenario,
    shard: ShardId,
    print: String,
    assignment: Vec<u64>,
    records: Vec<ItemRecord>,
) -> Result<()> {
    let parts = parts_of(dir, scenario);
    std::fs::create_dir_all(&parts).with_context(|| format!("--out-dir: cannot create {}", parts.display()))?;
    let path = parts.join(part_file(shard));
    let file = ScenarioShardFile::new(shard, print, assignment, records);
    write_atomically(&path, |out| {
        serde_json::to_writer(out, &file).map_err(std::io::Error::other)
    })?;
    super::super::notes::note!("wrote shard {}/{} to {}", shard.index, shard.count, path.display());
    Ok(())
}

/// Reads every part in `<out-dir>/<name>-shards/`, checks that they are
/// all the shards of this scenario once each and that their files are in
/// `dir`, and returns every table's record in file order.
pub(super) fn read_parts(dir: &Path, scenario: &Scenario, print: &str) -> Result<Vec<ItemRecord>> {
    let parts = parts_of(dir, scenario);
    let entries = std::fs::read_dir(&parts).with_context(|| {
        format!(
            "--merge: cannot list {} (the shards write their parts there: give --out-dir as the shards had it)",
            parts.display()
        )
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("--merge: {} holds no parts (.json files)", parts.display());
    }
    let mut files = Vec::new();
    for path in &paths {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read the part"))?;
        files.push((name.clone(), ScenarioShardFile::parse(&name, &text)?));
    }
    let records = merge(scenario, print, &files)?;
    for r in &records {
        if let Some(missing) = scenario
            .outputs_of(r.item)
            .into_iter()
            .map(|f| dir.join(f))
            .find(|p| !p.is_file())
        {
            bail!(
                "--merge: {} is missing, though its shard ran: give --out-dir as the shards had it (on a file system they share), or rerun that shard",
                missing.display()
            );
        }
    }
    Ok(records)
}
