//! A plan's partial result: the rows of the cluster sizes one shard of
//! `gcsim plan --shard I/K` evaluated, merged by `gcsim merge` into the
//! ranking the single process writes.
//!
//! Format (JSON, `format = "gcsim-plan-shard"`, `version = 2`):
//!
//! ```text
//! {
//!   "format": "gcsim-plan-shard", "version": 2, "gcsim": "0.1.0",
//!   "shard": {"index": 2, "count": 3},             // 1-based index
//!   "plan": { the plan's JSON config, and what only its table shows },
//!   "sizes": [16, 32, 64, 128],                    // --n, one unit each
//!   "assignment": [1, 1, 1, 0],                    // 0-based shard of each size
//!   "units": [{"index": 3, "rows": [{"n": 128, "scheme": "crc", ...,
//!              "objective": bits, ..., "configuration": "crc s=3"}, ...]}],
//!   "checksum": "1a2b3c4d"
//! }
//! ```
//!
//! Each cluster size is a study of its own (exact laws, or a simulation on
//! its own common random numbers), so a shard evaluates whole sizes and
//! their rows are the single process's. Rows are stored unranked, numbers
//! as IEEE 754 bit patterns; the merge concatenates the sizes in the order
//! of `--n` and ranks them with [`super::rank`], as [`super::plan`] does.
//! `checksum` is as in [`crate::shard`]: a file whose numbers were edited is
//! refused by name.

use serde::{Deserialize, Serialize};

use super::PlanRow;
use crate::scheme::SchemeKind;
use crate::shard::ShardId;
use crate::shard::units::{PartError, Sealed, UnitsError, check_cover, read_part};

/// The format name in every plan shard file.
pub const FORMAT: &str = "gcsim-plan-shard";
/// The format version this build writes and reads.
pub const VERSION: u32 = 2;

/// A plan row with every number as its bits, unranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowRecord {
    n: usize,
    scheme: SchemeKind,
    s: usize,
    m: Option<usize>,
    k: usize,
    objective: u64,
    objective_low: Option<u64>,
    objective_high: Option<u64>,
    mean: u64,
    p99: u64,
    speedup: Option<u64>,
    load: u64,
    message: u64,
    method: String,
    parts: Option<usize>,
    /// The configuration in words ([`PlanRow::configuration`]).
    configuration: String,
    timeout: Option<u64>,
    /// iterations per hour, run hours, GPU-hours, cost, storage bytes, bytes per iteration.
    costs: [Option<u64>; 6],
    /// The aggregation's name, where the rows show one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    aggregation: Option<String>,
    /// The collective's buckets, where the rows show them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    buckets: Option<usize>,
    /// Under a layout, its GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gpus: Option<usize>,
}

impl From<&PlanRow> for RowRecord {
    fn from(r: &PlanRow) -> Self {
        let bits = |x: Option<f64>| x.map(f64::to_bits);
        Self {
            n: r.n,
            scheme: r.scheme,
            s: r.s,
            m: r.m,
            k: r.k,
            objective: r.objective.to_bits(),
            objective_low: bits(r.objective_low),
            objective_high: bits(r.objective_high),
            mean: r.mean.to_bits(),
            p99: r.p99.to_bits(),
            speedup: bits(r.speedup),
            load: r.load.to_bits(),
            message: r.message.to_bits(),
            method: r.method.to_string(),
            parts: r.parts,
            configuration: r.configuration.clone(),
            timeout: bits(r.timeout),
            costs: [
                bits(r.iterations_per_hour),
                bits(r.run_hours),
                bits(r.gpu_hours),
                bits(r.cost),
                bits(r.storage_bytes),
                bits(r.bytes_per_iteration),
            ],
            aggregation: r.aggregation.map(String::from),
            buckets: r.buckets,
            gpus: r.gpus,
        }
    }
}

impl RowRecord {
    /// The row, unranked; `None` for a method this build does not write.
    fn row(&self) -> Option<PlanRow> {
        let num = |x: Option<u64>| x.map(f64::from_bits);
        let method = ["exact", "simulated"].into_iter().find(|m| *m == self.method)?;
        let aggregation = match &self.aggregation {
            Some(a) => Some(
                ["master", "ring", "tree", "halving-doubling", "hierarchical"]
                    .into_iter()
                    .find(|name| name == a)?,
            ),
            None => None,
        };
        let [iph, run, gpu, cost, storage, sent] = self.costs;
        Some(PlanRow {
            rank: 0,
            n: self.n,
            scheme: self.scheme,
            s: self.s,
            m: self.m,
            k: self.k,
            objective: f64::from_bits(self.objective),
            objective_low: num(self.objective_low),
            objective_high: num(self.objective_high),
            mean: f64::from_bits(self.mean),
            p99: f64::from_bits(self.p99),
            speedup: num(self.speedup),
            load: f64::from_bits(self.load),
            message: f64::from_bits(self.message),
            method,
            parts: self.parts,
            configuration: self.configuration.clone(),
            timeout: num(self.timeout),
            aggregation,
            buckets: self.buckets,
            iterations_per_hour: num(iph),
            run_hours: num(run),
            gpu_hours: num(gpu),
            cost: num(cost),
            storage_bytes: num(storage),
            bytes_per_iteration: num(sent),
            // Its bytes are recorded above, computed from it.
            collective_gradients: None,
            gpus: self.gpus,
        })
    }
}

/// The rows of one cluster size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitRecord {
    /// Its 0-based position in `--n`.
    pub index: usize,
    /// Its rows, unranked, in the order the plan evaluated them.
    pub rows: Vec<RowRecord>,
}

/// A plan shard file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanShardFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written.
    pub version: u32,
    /// gcsim version that wrote it.
    pub gcsim: String,
    /// Which shard.
    pub shard: ShardId,
    /// The plan's arguments as its output shows them (opaque here; the
    /// merge checks that every part has the same).
    pub plan: serde_json::Value,
    /// The cluster sizes, one unit each.
    pub sizes: Vec<usize>,
    /// The 0-based shard of each size.
    pub assignment: Vec<u64>,
    /// The sizes this shard evaluated.
    pub units: Vec<UnitRecord>,
    /// CRC-32 of the compact JSON with this field empty, as 8 hex digits.
    pub checksum: String,
}

/// Why plan shard files cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum PlanShardError {
    /// Not a readable part of this format, version and release.
    #[error(transparent)]
    Part(#[from] PartError),
    /// The parts do not make one plan.
    #[error(transparent)]
    Units(#[from] UnitsError),
}

impl Sealed for PlanShardFile {
    fn checksum_mut(&mut self) -> &mut String {
        &mut self.checksum
    }
}

impl PlanShardFile {
    /// The file of shard `shard` of a plan of `sizes`, assigned as
    /// `assignment`, holding the rows of its own sizes (`units[i]`: the rows
    /// of size i, empty for the sizes of other shards).
    pub fn new(
        shard: ShardId,
        plan: serde_json::Value,
        sizes: &[usize],
        assignment: &[u64],
        units: &[Vec<PlanRow>],
    ) -> Self {
        let units = units
            .iter()
            .enumerate()
            .filter(|(i, _)| assignment[*i] + 1 == shard.index)
            .map(|(index, rows)| UnitRecord {
                index,
                rows: rows.iter().map(RowRecord::from).collect(),
            })
            .collect();
        Self {
            format: FORMAT.into(),
            version: VERSION,
            gcsim: env!("CARGO_PKG_VERSION").into(),
            shard,
            plan,
            sizes: sizes.to_vec(),
            assignment: assignment.to_vec(),
            units,
            checksum: String::new(),
        }
        .sealed()
    }

    /// Whether `text` is a file of this format (by its `format` field alone).
    pub fn is_plan_shard(text: &str) -> bool {
        crate::shard::units::has_format(text, FORMAT)
    }

    /// Reads a plan shard file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, PlanShardError> {
        let part: Self = read_part(file, text, FORMAT, VERSION)?;
        if part.assignment.len() != part.sizes.len()
            || part.units.iter().any(|u| u.rows.iter().any(|r| r.row().is_none()))
        {
            return Err(PartError::malformed(file, FORMAT, "its units do not fit its sizes".into()).into());
        }
        Ok(part)
    }
}

/// Checks that `files` (name, part) are every shard of one plan, once
/// each, and returns the plan's arguments and the rows of every cluster
/// size, unranked, in the order of `--n`.
pub fn merge(files: &[(String, PlanShardFile)]) -> Result<(serde_json::Value, Vec<PlanRow>), PlanShardError> {
    let Some((first_name, first)) = files.first() else {
        return Err(UnitsError::Missing("no plan shard files given".into()).into());
    };
    for (name, f) in &files[1..] {
        if f.shard.count != first.shard.count {
            return Err(UnitsError::Different(first_name.clone(), name.clone(), "splits (--shard I/K)").into());
        }
        if f.plan != first.plan || f.sizes != first.sizes || f.assignment != first.assignment {
            return Err(UnitsError::Different(first_name.clone(), name.clone(), "plans").into());
        }
    }
    let held: Vec<(String, ShardId, Vec<usize>)> = files
        .iter()
        .map(|(name, f)| (name.clone(), f.shard, f.units.iter().map(|u| u.index).collect()))
        .collect();
    check_cover(&held, &first.assignment)?;
    let mut units: Vec<Option<&UnitRecord>> = vec![None; first.sizes.len()];
    for (_, f) in files {
        for u in &f.units {
            units[u.index] = Some(u);
        }
    }
    let rows = units
        .into_iter()
        .flat_map(|u| u.expect("every size covered").rows.iter())
        .map(|r| r.row().expect("checked by parse"))
        .collect();
    Ok((first.plan.clone(), rows))
}
