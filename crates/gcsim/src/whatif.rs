//! What-if analysis of a measured training job (Lin et al., "Understanding
//! Stragglers in Large Model Training Using What-if Analysis", OSDI 2025):
//! replay a per-op trace on the job's dependency graph, replay it again with
//! every op at its type's typical duration (the ideal), and attribute the
//! difference to op types, data-parallel ranks, pipeline stages and steps.
//!
//! - [`OpTrace`] reads the trace (Parquet or CSV, the artifact's schema);
//! - [`LayoutSpec`] the job's layout (the artifact's metadata YAML or a
//!   `dp=…,pp=…` string), checked against the trace;
//! - [`Graph`] is the dependency template, [`Lanes`] the replay;
//! - [`Analysis`] is the slowdown S and its attributions;
//! - [`StepTimelines`] one step's replay and ideal run, op by op.

mod analysis;
mod columns;
mod graph;
mod meta;
mod optype;
mod parquet;
mod replay;
mod report;
mod table;
mod timeline;

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};
use thiserror::Error;

pub use analysis::{Analysis, AttributionRow, HybridFit, Ideal, Removal};
pub use columns::required_columns;
pub use graph::{Graph, Node, Unit};
pub use meta::{Layout, LayoutSpec};
pub use optype::OpType;
pub use replay::{Lanes, Timeline};
pub use table::OpTrace;
pub use timeline::{StepRun, StepTimelines, TimedOp, check_step};

/// A trace or layout the analysis cannot use: one line naming the file, row
/// and column, or the flag, and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct WhatIfError(String);

impl WhatIfError {
    pub(crate) fn new(message: String) -> Self {
        WhatIfError(message)
    }
}

/// Values keyed by op type, rank, stage or step, in a chosen order (largest
/// first), serialised as a JSON object with string keys in that order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked<K>(pub Vec<(K, f64)>);

impl<K: fmt::Display + Clone> Ranked<K> {
    /// The entries sorted by value, largest first; ties keep their order.
    pub fn descending(mut entries: Vec<(K, f64)>) -> Self {
        entries.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ranked(entries)
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.0.iter().find(|(k, _)| k.to_string() == key).map(|e| e.1)
    }
}

impl<K: fmt::Display> Serialize for Ranked<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(&k.to_string(), v)?;
        }
        map.end()
    }
}

/// Per step, in a chosen order: values keyed by op type, rank or stage;
/// serialised as a JSON object keyed by step.
#[derive(Debug, Clone, PartialEq)]
pub struct PerStep<K>(pub Vec<(i64, Ranked<K>)>);

impl<K: fmt::Display> Serialize for PerStep<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (step, values) in &self.0 {
            map.serialize_entry(&step.to_string(), values)?;
        }
        map.end()
    }
}
