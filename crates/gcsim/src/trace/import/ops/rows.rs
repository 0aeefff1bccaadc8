//! A job's per-op rows, from each rank's steps and op ranges: each file
//! placed in the layout by its rank, each op in its step, numbered as the
//! what-if artifact numbers them (`seq_id` per op type, `mb_id` per chunk,
//! `gmc` the global chunk), with each step's times counted from its first
//! op.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::path::PathBuf;

use super::{RankEvents, read};
use crate::trace::TimeUnit;
use crate::trace::import::ImportError;
use crate::whatif::{LayoutSpec, OpType};

/// One row of a per-op trace, in the artifact's columns.
#[derive(Debug, Clone, PartialEq)]
pub struct OpRow {
    /// Data-parallel rank.
    pub dp_rank: u32,
    /// Pipeline stage.
    pub stage: u32,
    /// Global rank.
    pub rank: u32,
    /// Training step (the profiler's step number).
    pub step: u64,
    /// Op type.
    pub optype: OpType,
    /// Start, seconds from the step's first op on any rank.
    pub start_ts: f64,
    /// Duration, seconds.
    pub duration: f64,
    /// Place among the rank's ops of this type in the step, by start.
    pub seq_id: u32,
    /// Model chunk on the rank (-1 where it does not apply).
    pub mc: i32,
    /// Global model chunk, `stage + pp·mc`, for compute ops (else -1).
    pub gmc: i32,
    /// Microbatch, for compute ops (else -1).
    pub mb_id: i32,
}

/// The rows of a per-op trace, with notes on how they were read.
#[derive(Debug, Clone, Default)]
pub struct OpsImported {
    /// The rows, by step, dp rank, stage, op type and `seq_id`.
    pub rows: Vec<OpRow>,
    notes: Vec<String>,
}

impl OpsImported {
    /// The notes, in the order they were made.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Distinct steps and distinct ranks.
    pub fn shape(&self) -> (usize, usize) {
        let steps: BTreeSet<u64> = self.rows.iter().map(|r| r.step).collect();
        let ranks: BTreeSet<u32> = self.rows.iter().map(|r| r.rank).collect();
        (steps.len(), ranks.len())
    }

    /// Writes the rows as CSV with the artifact's columns; times in seconds
    /// with the digits that read back as the same double.
    pub fn write_csv(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,gmc,mb_id"
        )?;
        for r in &self.rows {
            writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{}",
                r.dp_rank,
                r.stage,
                r.rank,
                r.step,
                r.optype.name(),
                r.start_ts,
                r.duration,
                r.seq_id,
                r.mc,
                r.gmc,
                r.mb_id
            )?;
        }
        Ok(())
    }
}

/// The sizes a rank is placed by.
struct Sizes {
    dp: u64,
    pp: u64,
    /// tp·cp: the ranks of one (dp rank, stage), consecutive in Megatron-LM's
    /// default order tp-cp-dp-pp (tensor-parallel rank fastest).
    inner: u64,
    world: u64,
}

impl Sizes {
    fn new(layout: &LayoutSpec) -> Result<Sizes, ImportError> {
        let (Some(dp), Some(pp)) = (layout.dp, layout.pp) else {
            return Err(ImportError::Ops(
                "--layout must give dp= and pp= (and tp=, cp= when they are not 1): a rank is placed by them".into(),
            ));
        };
        let inner = u64::from(layout.tp.unwrap_or(1)) * u64::from(layout.cp.unwrap_or(1));
        let (dp, pp) = (u64::from(dp), u64::from(pp));
        let world = (dp * pp).checked_mul(inner).ok_or_else(|| {
            ImportError::Ops("--layout: dp·pp·tp·cp is beyond 2⁶⁴ ranks; give the job's sizes".into())
        })?;
        Ok(Sizes { dp, pp, inner, world })
    }

    /// (dp rank, stage) of `rank`.
    fn place(&self, rank: u64) -> (u32, u32) {
        (
            ((rank / self.inner) % self.dp) as u32,
            (rank / (self.inner * self.dp)) as u32,
        )
    }
}

/// One kept file: its name, rank, place, clock offset and events.
struct RankFile {
    name: String,
    rank: u64,
    place: (u32, u32),
    base_ns: u64,
    events: RankEvents,
}

/// Reads every file and makes the job's per-op rows under `layout`
/// (`--layout dp=D,pp=P[,tp=T][,cp=C][,vpp=V]`).
pub fn import(files: &[PathBuf], layout: &LayoutSpec) -> Result<OpsImported, ImportError> {
    let sizes = Sizes::new(layout)?;
    let mut imported = OpsImported::default();
    let kept = kept_files(files, &sizes, &mut imported)?;
    let base = kept.iter().map(|f| f.base_ns).min().unwrap_or(0);
    let mut pending = Vec::new();
    let (mut outside, mut on_cpu, mut on_gpu, mut unlinked) = (0, 0, 0, 0);
    for file in &kept {
        let offset = (file.base_ns - base) as f64 / 1000.0;
        let mut steps = file.events.steps.clone();
        steps.sort_by(|a, b| a.1.total_cmp(&b.1));
        unlinked += file.events.unlinked;
        for op in &file.events.ops {
            // The last step starting at or before the op (steps by start).
            let Some(&(step, _, end)) = steps[..steps.partition_point(|s| s.1 <= op.start)].last() else {
                outside += 1;
                continue;
            };
            if op.start >= end {
                outside += 1;
                continue;
            }
            let (start, dur) = match op.external.and_then(|id| file.events.gpu.get(&id)) {
                Some(&(s, e)) => {
                    on_gpu += 1;
                    (s, e - s)
                }
                None => {
                    on_cpu += 1;
                    (op.start, op.dur)
                }
            };
            for &optype in &op.name.types {
                pending.push(Pending {
                    file: file.rank,
                    place: file.place,
                    step,
                    optype,
                    start: start + offset,
                    dur,
                    chunk: op.name.chunk,
                    microbatch: op.name.microbatch,
                });
            }
        }
    }
    if outside > 0 {
        imported
            .notes
            .push(format!("{outside} op ranges outside every ProfilerStep#N were skipped"));
    }
    if unlinked > 0 {
        imported.notes.push(format!(
            "{unlinked} GPU copies of op ranges have no args.\"External id\" and were not matched to their CPU range"
        ));
    }
    imported.notes.push(format!(
        "{on_gpu} ops timed on the GPU (their gpu_user_annotation span), {on_cpu} on the CPU (no GPU work)"
    ));
    let pending = whole_steps(pending, kept.len(), &mut imported)?;
    chunks(&pending, layout)?;
    imported.rows = number(pending, sizes.pp as i32);
    Ok(imported)
}

/// Reads the files and keeps, for each (dp rank, stage), the lowest rank's
/// files: a per-op trace records one rank per (dp rank, stage), and its
/// tensor- and context-parallel peers run the same ops.
fn kept_files(files: &[PathBuf], sizes: &Sizes, imported: &mut OpsImported) -> Result<Vec<RankFile>, ImportError> {
    let mut all = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let name = path.display().to_string();
        if files[..i].contains(path) {
            return Err(ImportError::Ranks(format!(
                "{name} is named twice; give each file once"
            )));
        }
        let (header, events) = read(path)?;
        let rank = header.rank.ok_or_else(|| {
            ImportError::Ops(format!(
                "{name}: no distributedInfo.rank; a per-op trace places each file in the layout by its rank (torch.distributed writes it)"
            ))
        })?;
        if let Some(w) = header.world_size.filter(|&w| w != sizes.world) {
            return Err(ImportError::Ops(format!(
                "{name}: distributedInfo.world_size is {w} but --layout gives dp·pp·tp·cp = {}",
                sizes.world
            )));
        }
        if rank >= sizes.world {
            return Err(ImportError::Ops(format!(
                "{name}: distributedInfo.rank is {rank} but --layout gives {} ranks",
                sizes.world
            )));
        }
        all.push(RankFile {
            name,
            rank,
            place: sizes.place(rank),
            base_ns: header.base_ns.unwrap_or(0),
            events,
        });
    }
    let mut lowest: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for f in &all {
        let slot = lowest.entry(f.place).or_insert(f.rank);
        *slot = (*slot).min(f.rank);
    }
    for stage in 0..sizes.pp as u32 {
        for dp in 0..sizes.dp as u32 {
            if !lowest.contains_key(&(dp, stage)) {
                let first = (u64::from(stage) * sizes.dp + u64::from(dp)) * sizes.inner;
                let ranks = match sizes.inner {
                    1 => format!("rank {first}"),
                    n => format!("ranks {first}..{}", first + n - 1),
                };
                return Err(ImportError::Ops(format!(
                    "no file records dp rank {dp} of stage {stage} ({ranks} under --layout); give one file per (dp rank, stage) at least"
                )));
            }
        }
    }
    let before = all.len();
    all.retain(|f| lowest[&f.place] == f.rank);
    if all.len() < before {
        imported.notes.push(format!(
            "kept the lowest rank of each (dp rank, stage); {} files of its tensor- or context-parallel peers were skipped",
            before - all.len()
        ));
    }
    for (i, f) in all.iter().enumerate() {
        let other = all[..i]
            .iter()
            .find(|g| g.rank == f.rank && g.events.steps.iter().any(|s| f.events.steps.iter().any(|t| t.0 == s.0)));
        if let Some(g) = other {
            return Err(ImportError::Ops(format!(
                "{} and {} both record a step of rank {}; give each profiling cycle once",
                g.name, f.name, f.rank
            )));
        }
    }
    Ok(all)
}

/// An op placed in its step, before numbering.
struct Pending {
    file: u64,
    place: (u32, u32),
    step: u64,
    optype: OpType,
    /// Microseconds on the job's common clock.
    start: f64,
    dur: f64,
    chunk: Option<u32>,
    microbatch: Option<u32>,
}

/// Keeps the steps in which every kept rank recorded an op; a step some
/// rank missed (a profiling window cut differently) cannot be replayed.
fn whole_steps(pending: Vec<Pending>, ranks: usize, imported: &mut OpsImported) -> Result<Vec<Pending>, ImportError> {
    let mut seen: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for p in &pending {
        seen.entry(p.step).or_default().insert(p.file);
    }
    let partial: Vec<u64> = seen.iter().filter(|(_, r)| r.len() < ranks).map(|(&s, _)| s).collect();
    if partial.len() == seen.len() {
        return Err(ImportError::Ops(
            "no step has op ranges on every rank; record each op with torch.profiler.record_function(\"forward-compute\") and the other op types (see gcsim trace import --help) on every rank, inside the steps prof.step() closes".into(),
        ));
    }
    if !partial.is_empty() {
        imported.notes.push(format!(
            "steps without ops on every rank were dropped: {}",
            partial.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(pending.into_iter().filter(|p| !partial.contains(&p.step)).collect())
}

/// Checks the ranges' `mc=` against `vpp=`: an interleaved pipeline
/// needs every compute range to name its chunk.
fn chunks(pending: &[Pending], layout: &LayoutSpec) -> Result<(), ImportError> {
    let named = pending.iter().filter_map(|p| p.chunk).max().map(|c| c + 1);
    if named.is_some_and(|n| n > 1) && pending.iter().any(|p| p.optype.is_compute() && p.chunk.is_none()) {
        return Err(ImportError::Ops(
            "some compute ranges name their model chunk (mc=C) and some do not; in an interleaved pipeline each must"
                .into(),
        ));
    }
    match (layout.vpp, named) {
        (Some(v), Some(n)) if v != n => Err(ImportError::Ops(format!(
            "--layout vpp={v} but the op ranges name chunks up to mc={}",
            n - 1
        ))),
        (Some(v), None) if v > 1 => Err(ImportError::Ops(format!(
            "--layout vpp={v} needs each compute range to name its model chunk, e.g. record_function(\"forward-compute mc=1\")"
        ))),
        _ => Ok(()),
    }
}

/// Numbers the ops and counts each step's times from its first op.
fn number(mut pending: Vec<Pending>, pp: i32) -> Vec<OpRow> {
    pending.sort_by(|a, b| {
        (a.step, a.place.1, a.place.0, a.optype)
            .cmp(&(b.step, b.place.1, b.place.0, b.optype))
            .then(a.start.total_cmp(&b.start))
    });
    let mut first: BTreeMap<u64, f64> = BTreeMap::new();
    for p in &pending {
        let t = first.entry(p.step).or_insert(p.start);
        *t = t.min(p.start);
    }
    let mut seq: BTreeMap<(u64, u64, OpType), u32> = BTreeMap::new();
    let mut microbatch: BTreeMap<(u64, u64, OpType, u32), u32> = BTreeMap::new();
    let seconds = |us: f64| TimeUnit::Microseconds.to_seconds(us);
    let mut rows = Vec::with_capacity(pending.len());
    for p in pending {
        let per_chunk =
            p.optype.is_compute() || matches!(p.optype, OpType::GradsReduceScatter | OpType::ParamsAllGather);
        let mc = match p.chunk {
            Some(c) => c as i32,
            None if per_chunk => 0,
            None => -1,
        };
        let next = |counter: &mut u32| {
            let n = *counter;
            *counter += 1;
            n
        };
        let seq_id = next(seq.entry((p.step, p.file, p.optype)).or_default());
        let (gmc, mb_id) = if p.optype.is_compute() {
            let order = next(microbatch.entry((p.step, p.file, p.optype, mc as u32)).or_default());
            (p.place.1 as i32 + pp * mc, p.microbatch.unwrap_or(order) as i32)
        } else {
            (-1, p.microbatch.map_or(-1, |m| m as i32))
        };
        rows.push(OpRow {
            dp_rank: p.place.0,
            stage: p.place.1,
            rank: p.file as u32,
            step: p.step,
            optype: p.optype,
            start_ts: seconds(p.start - first[&p.step]),
            duration: seconds(p.dur),
            seq_id,
            mc,
            gmc,
            mb_id,
        });
    }
    rows.sort_by_key(|r| (r.step, r.dp_rank, r.stage, r.optype, r.seq_id));
    rows
}
