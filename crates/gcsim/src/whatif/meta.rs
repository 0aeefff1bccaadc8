//! The job's parallel layout: from the what-if artifact's metadata file
//! (YAML), from a `dp=…,pp=…` string, or from the trace alone.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::WhatIfError;
use super::table::OpTrace;

/// The artifact's metadata file (`metatypes.py:JobMeta`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetaFile {
    trial_name: Option<String>,
    run_id: Option<i64>,
    dp_size: u32,
    pp_size: u32,
    tp_size: u32,
    dsp_size: u32,
    vpp_size: u32,
    world_size: u32,
}

/// What the user said of the layout; unset sizes come from the trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayoutSpec {
    /// The job's name (the metadata's `trial_name`).
    pub name: Option<String>,
    /// Data-parallel size.
    pub dp: Option<u32>,
    /// Pipeline stages.
    pub pp: Option<u32>,
    /// Tensor-parallel size.
    pub tp: Option<u32>,
    /// Context-parallel size (the artifact's `dsp_size`).
    pub cp: Option<u32>,
    /// Model chunks per stage (interleaved pipeline).
    pub vpp: Option<u32>,
    /// World size; must be dp·pp·tp·cp.
    pub world: Option<u32>,
    /// Where the sizes came from, for messages.
    pub source: String,
}

/// The layout the analysis runs on, checked against the trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// The job's name, if the metadata gave one.
    pub name: Option<String>,
    /// Data-parallel size.
    pub dp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Tensor-parallel size (not modelled: one rank per (dp rank, stage) is recorded).
    pub tp: u32,
    /// Context-parallel size (not modelled, except that the gradient
    /// collectives exist when dp·cp > 1).
    pub cp: u32,
    /// Model chunks per stage.
    pub vpp: u32,
    /// Ranks in the job.
    pub world: u32,
    /// Ranks the trace records.
    pub ranks_in_trace: u32,
}

impl LayoutSpec {
    /// Reads the artifact's metadata YAML.
    pub fn from_yaml(path: &Path) -> Result<Self, WhatIfError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| WhatIfError::new(format!("{file}: cannot read the metadata: {e}")))?;
        let meta: MetaFile = serde_yaml_ng::from_str(&text).map_err(|e| {
            WhatIfError::new(format!(
                "{file}: {e}; the metadata has the keys trial_name, run_id, dp_size, pp_size, tp_size, dsp_size, vpp_size, world_size"
            ))
        })?;
        let _ = meta.run_id;
        let sizes = [
            ("dp_size", meta.dp_size),
            ("pp_size", meta.pp_size),
            ("tp_size", meta.tp_size),
            ("dsp_size", meta.dsp_size),
            ("vpp_size", meta.vpp_size),
            ("world_size", meta.world_size),
        ];
        if let Some((key, _)) = sizes.iter().find(|(_, v)| *v == 0) {
            return Err(WhatIfError::new(format!(
                "{file}: {key} is 0; accepted: a size of 1 or more"
            )));
        }
        Ok(LayoutSpec {
            name: meta.trial_name,
            dp: Some(meta.dp_size),
            pp: Some(meta.pp_size),
            tp: Some(meta.tp_size),
            cp: Some(meta.dsp_size),
            vpp: Some(meta.vpp_size),
            world: Some(meta.world_size),
            source: file,
        })
    }

    /// Parses `dp=D,pp=P[,tp=T][,cp=C][,vpp=V]` (`--layout`).
    pub fn parse(text: &str) -> Result<Self, WhatIfError> {
        let mut spec = LayoutSpec {
            source: "--layout".into(),
            ..Default::default()
        };
        let accepted = "accepted: dp=D,pp=P,tp=T,cp=C,vpp=V (any of them, each a size of 1 or more)";
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| WhatIfError::new(format!("--layout: {part:?} is not KEY=SIZE; {accepted}")))?;
            let size = value
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| WhatIfError::new(format!("--layout: {key}={value} is not a size; {accepted}")))?;
            let slot = match key.trim() {
                "dp" => &mut spec.dp,
                "pp" => &mut spec.pp,
                "tp" => &mut spec.tp,
                "cp" | "dsp" => &mut spec.cp,
                "vpp" => &mut spec.vpp,
                other => {
                    return Err(WhatIfError::new(format!(
                        "--layout: unknown size {other:?}; {accepted}"
                    )));
                }
            };
            *slot = Some(size);
        }
        Ok(spec)
    }

    /// The layout, checked against what the trace records: its dp ranks,
    /// stages and model chunks must be the sizes given, and its ranks must
    /// fit the world size.
    pub fn resolve(&self, trace: &OpTrace) -> Result<Layout, WhatIfError> {
        let max = |v: &[u32]| v.iter().copied().max().unwrap_or(0) + 1;
        let dp = max(&trace.dp_rank);
        let pp = max(&trace.stage);
        let vpp = trace.mc.iter().copied().max().unwrap_or(0).max(0) as u32 + 1;
        let source = &self.source;
        for (key, given, found) in [("dp", self.dp, dp), ("pp", self.pp, pp), ("vpp", self.vpp, vpp)] {
            if let Some(g) = given.filter(|&g| g != found) {
                return Err(WhatIfError::new(format!(
                    "{source}: {key} is {g} but the trace {} records {found} (from its {} column)",
                    trace.file,
                    match key {
                        "dp" => "dp_rank",
                        "pp" => "stage",
                        _ => "mc",
                    }
                )));
            }
        }
        let tp = self.tp.unwrap_or(1);
        let cp = self.cp.unwrap_or(1);
        let world = u64::from(dp) * u64::from(pp) * u64::from(tp) * u64::from(cp);
        if let Some(w) = self.world.filter(|&w| u64::from(w) != world) {
            return Err(WhatIfError::new(format!(
                "{source}: world_size is {w} but dp·pp·tp·cp = {dp}·{pp}·{tp}·{cp} = {world}"
            )));
        }
        let world = u32::try_from(world)
            .map_err(|_| WhatIfError::new(format!("{source}: the world size {world} is too large")))?;
        if let Some(i) = trace.rank.iter().position(|&r| r >= world) {
            return Err(WhatIfError::new(format!(
                "{}: column rank is {} but the job has {world} ranks ({source})",
                trace.locate(i),
                trace.rank[i]
            )));
        }
        let mut ranks = trace.rank.clone();
        ranks.sort_unstable();
        ranks.dedup();
        Ok(Layout {
            name: self.name.clone(),
            dp,
            pp,
            tp,
            cp,
            vpp,
            world,
            ranks_in_trace: ranks.len() as u32,
        })
    }
}
