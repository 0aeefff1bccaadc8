//! The run configuration and the report that carries it beside the rows.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Row;
use crate::comm::Decoder;
use crate::scheme::SchemeKind;

/// The subcommands whose results are rows of [`super::Row`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Command {
    /// `gcsim run`: one configuration.
    Run,
    /// `gcsim sweep`: schemes over ranges of their parameters.
    Sweep,
    /// A study of a scenario file.
    Scenario,
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Command::Run => "run",
            Command::Sweep => "sweep",
            Command::Scenario => "scenario",
        })
    }
}

/// How the rows' values were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Monte Carlo trials.
    MonteCarlo,
    /// Exact values of the iteration-time law (`--analytic`), no trials.
    Analytic,
}

/// Everything that determines a result, written beside the rows (JSON
/// `config`, the table's header). The thread count is not in it: it does not
/// change the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// gcsim version that produced the result.
    pub gcsim: String,
    /// The subcommand that produced the result.
    pub command: Command,
    /// Simulated, or exact values only.
    pub mode: Mode,
    /// Number of workers (the first, where a sweep has several).
    pub n: usize,
    /// `--n` as given where a sweep runs several cluster sizes (`16,32,64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<String>,
    /// Worker-time law for one uncoded share, in `--dist` syntax.
    pub dist: String,
    /// Load model name.
    pub load_model: String,
    /// Compute time per unit of work, for the `affine` load model.
    pub unit_time: Option<f64>,
    /// Schemes requested, in order.
    pub schemes: Vec<SchemeKind>,
    /// `--s` as given, if any.
    pub s: Option<String>,
    /// `--m` as given, if any.
    pub m: Option<String>,
    /// `--k` as given, if any.
    pub k: Option<String>,
    /// `--d` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d: Option<String>,
    /// `--code` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// `--timeout` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// `--speculate-after` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculate_after: Option<String>,
    /// `--speculate-factor` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculate_factor: Option<String>,
    /// `--parts` as given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<String>,
    /// `--p` as given, if any (polynomial, matdot, entangled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<String>,
    /// `--q` as given, if any (polynomial, entangled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<String>,
    /// Monte Carlo trials per configuration.
    pub trials: u64,
    /// Master seed; trial t draws from its own stream of it.
    pub seed: u64,
    /// How percentiles are defined.
    pub quantile_definition: String,
    /// Parameter values a scheme does not admit, skipped with the reason.
    pub skipped: Vec<String>,
    /// What the reader must know to read the rows (e.g. infinite means).
    pub warnings: Vec<String>,
    /// `<scenario>/<label>` for a study run from a scenario file.
    pub study: Option<String>,
    /// The communication and decoding model, e.g. `comm-time=0.5 link=shared decode-time=0`.
    #[serde(default)]
    pub comm: String,
    /// The unit of every time (`s`, `ms`, `us`), where known: `--time-unit`,
    /// or seconds for a trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_unit: Option<crate::units::TimeUnit>,
    /// The cost view's inputs (`--iterations-per-run`, `--gpu-hour-price`,
    /// `--dataset-size`, `--gradient-size`), where any was given.
    #[serde(default, skip_serializing_if = "crate::units::CostModel::is_empty")]
    pub costs: crate::units::CostModel,
    /// `threshold` or `rank` (see [`Decoder`]).
    pub decoder: String,
    /// The generator of the codes that have several, where one was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// Consecutive iterations per trial, whose total is a trial's value.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub iterations: u64,
    /// Bootstrap replicates of a trace's recorded steps whose spread widens
    /// `std_err` and the interval of the mean (`--trace-bootstrap`; see
    /// [`crate::engine::bootstrap`]), where they ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_bootstrap: Option<usize>,
    /// The all-reduce collective that sums the gradients, e.g. `ring
    /// latency=5e-6 bandwidth=25000000000 gradient-size=1400000000
    /// buckets=1`; absent under the master.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<String>,
    /// The hybrid-parallel job, e.g. `dp=2,pp=4,tp=1 microbatches=8
    /// schedule=1f1b backward-ratio=2 p2p-time=0`; absent for a flat
    /// cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<String>,
    /// `--microbatches` as given where a sweep runs several (`1,2,4,8`):
    /// each row then names its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microbatches: Option<String>,
}

fn one() -> u64 {
    1
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

impl RunConfig {
    /// The columns the rows carry beyond the fixed ones: the cost view's,
    /// where its flags gave them, then a collective's.
    pub fn extra_columns(&self) -> Vec<&'static str> {
        let mut columns = self.costs.columns(self.time_unit);
        if self.aggregation.is_some() {
            columns.extend(["aggregation", "participants", "collective_time"]);
        }
        if self.parallel.is_some() {
            columns.extend(["bubble_fraction", "stage_busy"]);
        }
        if self.microbatches.is_some() {
            columns.push("microbatches");
        }
        columns
    }

    /// The hybrid-parallel job as headers and captions name it: a sweep
    /// over microbatch counts names them all (`microbatches=1,2,4`).
    pub fn parallel_described(&self) -> Option<String> {
        let p = self.parallel.as_ref()?;
        Some(match &self.microbatches {
            Some(list) => p
                .split(' ')
                .map(|kv| match kv.strip_prefix("microbatches=") {
                    Some(_) => format!("microbatches={list}"),
                    None => kv.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" "),
            None => p.clone(),
        })
    }

    /// The parameters that describe the study, one `key=value` each, for headers.
    pub(crate) fn header_fields(&self) -> Vec<(&'static str, String)> {
        let mut f = Vec::new();
        if let Some(study) = &self.study {
            f.push(("study", study.clone()));
        }
        f.extend([
            ("n", self.sizes.clone().unwrap_or_else(|| self.n.to_string())),
            ("dist", self.dist.clone()),
            ("load-model", self.load_model.clone()),
        ]);
        if let Some(c) = self.unit_time {
            f.push(("unit-time", c.to_string()));
        }
        let schemes: Vec<&str> = self.schemes.iter().map(|s| s.name()).collect();
        f.push(("scheme", schemes.join(",")));
        for (k, v) in [
            ("s", &self.s),
            ("m", &self.m),
            ("k", &self.k),
            ("d", &self.d),
            ("code", &self.code),
            ("timeout", &self.timeout),
            ("speculate-after", &self.speculate_after),
            ("speculate-factor", &self.speculate_factor),
            ("parts", &self.parts),
            ("p", &self.p),
            ("q", &self.q),
        ] {
            if let Some(v) = v {
                f.push((k, v.clone()));
            }
        }
        if !self.comm.is_empty() && self.comm != crate::comm::Comm::default().to_string() {
            f.push(("comm", self.comm.clone()));
        }
        if self.decoder != Decoder::Threshold.name() {
            f.push(("decoder", self.decoder.clone()));
        }
        if let Some(g) = &self.generator {
            f.push(("generator", g.clone()));
        }
        if let Some(a) = &self.aggregation {
            f.push(("aggregation", a.clone()));
        }
        if let Some(p) = self.parallel_described() {
            f.push(("parallel", p));
        }
        if self.iterations > 1 {
            f.push(("iterations", self.iterations.to_string()));
        }
        if let Some(b) = self.trace_bootstrap {
            f.push(("trace-bootstrap", b.to_string()));
        }
        if self.mode == Mode::Analytic {
            f.push(("mode", "analytic".to_string()));
        } else {
            f.push(("trials", self.trials.to_string()));
            f.push(("seed", self.seed.to_string()));
        }
        f
    }
}

/// A complete result: the configuration and its rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// What was run.
    pub config: RunConfig,
    /// One row per configuration.
    pub rows: Vec<Row>,
}
