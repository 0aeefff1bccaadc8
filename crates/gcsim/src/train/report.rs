//! A training study's output: the rows and verdict as a table, CSV or JSON,
//! the trajectories as CSV, and the loss against wall-clock time as a
//! figure.

use std::io::{self, Write};

use serde::Serialize;

use super::problem::{Problem, metric_name};
use super::run::Trained;
use super::setup::{Recipe, Setup};
use super::summary::{Targets, TrainRow, Verdict};
use crate::export::{Columns, Digits, Export, short, short_cell, write_aligned, write_columns};
use crate::param::{Naming, Param};
use crate::scheme::{SchemeKind, Strategy};
use crate::study::Study;

/// What was trained, on what, and how: the JSON output's `config`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct TrainConfig {
    /// gcsim's version.
    pub gcsim: String,
    /// `train`, or `scenario`.
    pub command: String,
    /// `<scenario>/<label>`, for a training study of a scenario file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub study: Option<String>,
    /// `least-squares` or `logistic`.
    pub problem: String,
    /// The data: a file's path (as given on the command line, or resolved
    /// against a scenario file's directory) or the synthetic spec.
    pub data: String,
    /// Rows and features (before the intercept) of the training set.
    pub train_rows: usize,
    /// Held-out rows.
    pub test_rows: usize,
    /// Features, before the intercept column.
    pub features: usize,
    /// The share of rows held out.
    pub test_fraction: f64,
    /// L2 regularisation λ.
    pub l2: f64,
    /// The base step η.
    pub step: f64,
    /// Where η came from: the step given (`--step`, or `step` in a
    /// scenario), or 1/L.
    pub step_source: String,
    /// The step schedule.
    pub schedule: String,
    /// Iterations (updates) per run.
    pub iterations: u64,
    /// Independent runs per configuration.
    pub repeats: u64,
    /// The targets.
    pub targets: Targets,
    /// The test metric's name.
    pub metric: String,
    /// Workers.
    pub n: usize,
    /// The worker law.
    pub dist: String,
    /// The load model.
    pub load_model: String,
    /// Its unit time, for affine.
    pub unit_time: Option<f64>,
    /// The communication model.
    pub comm: String,
    /// The unit of every time, where known (`--time-unit`, or seconds for a trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_unit: Option<crate::units::TimeUnit>,
    /// The decoder.
    pub decoder: String,
    /// The master seed.
    pub seed: u64,
    /// Notes on the model (how updates are formed).
    pub notes: Vec<String>,
}

impl TrainConfig {
    /// What training `study` on `setup`, prepared from `recipe`, runs
    /// towards `targets`, for `command`; `name` spells the parameters the
    /// notes and the step's source name.
    pub fn new(command: &str, study: &Study, recipe: &Recipe, setup: &Setup, targets: Targets, name: Naming) -> Self {
        let (train, test) = (&setup.train, &setup.test);
        TrainConfig {
            gcsim: env!("CARGO_PKG_VERSION").into(),
            command: command.into(),
            study: None,
            problem: recipe.problem.name().into(),
            data: recipe.data.to_string(),
            train_rows: train.rows(),
            test_rows: test.rows(),
            // Less the intercept column.
            features: train.d - 1,
            test_fraction: recipe.test_fraction,
            l2: recipe.l2,
            step: setup.step,
            step_source: if recipe.step.is_some() {
                name(Param::Step)
            } else {
                "1/L".into()
            },
            schedule: recipe.schedule.to_string(),
            iterations: study.iterations(),
            repeats: study.trials(),
            targets,
            metric: metric_name(recipe.problem).into(),
            n: study.n(),
            dist: study.workers().to_string(),
            load_model: study.load_model().name().into(),
            unit_time: study.load_model().unit_time(),
            comm: study.comm().to_string(),
            time_unit: study.workers().is_measured().then_some(crate::units::TimeUnit::Seconds),
            decoder: study.decoder().name().into(),
            seed: recipe.seed,
            notes: notes(study, name),
        }
    }
}

/// How the configurations of `study` form their updates, for the notes.
fn notes(study: &Study, name: Naming) -> Vec<String> {
    let has = |f: &dyn Fn(SchemeKind) -> bool| study.schemes().iter().any(|s| f(s.kind()));
    let mut notes = Vec::new();
    if has(&|k| k == SchemeKind::Ignore) {
        notes.push("ignore: the update is the sum over the received partitions scaled by n/(n-s)".into());
    }
    if has(&|k| k == SchemeKind::Timeout) {
        notes.push("timeout: the update is the sum over the arrived partitions scaled by n/(arrived)".into());
    }
    if has(&|k| matches!(k, SchemeKind::ApproxRegular | SchemeKind::Custom)) {
        notes.push(
            "approx-regular and inexact custom codes: the optimal least-squares decoding of the first n-s messages"
                .into(),
        );
    }
    if has(&|k| k == SchemeKind::KBatchSync) {
        notes.push("k-batch-sync: a mini-batch is its worker's partition; the update is n/K times the K mini-batches' gradients".into());
    }
    if study
        .schemes()
        .iter()
        .any(|s| matches!(s.strategy(), Some(Strategy::Async { .. })))
    {
        notes.push("k-async, k-batch-async: an iteration is an update, n/K times the K stale gradients; straggler states step once per update".into());
    }
    if has(&|k| k == SchemeKind::Mds) {
        notes.push(format!(
            "mds: the master decodes X*w and forms the gradient itself (its time is not modelled; see {})",
            name(Param::DecodeTime)
        ));
    }
    notes
}

/// The whole result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainReport {
    /// What was run.
    pub config: TrainConfig,
    /// One row per configuration.
    pub rows: Vec<TrainRow>,
    /// Which configuration reached the targets first.
    pub verdict: Option<Verdict>,
}

impl TrainReport {
    /// The verdict as one sentence.
    pub fn verdict_line(&self) -> Option<String> {
        let c = &self.config;
        if !c.targets.any() {
            return None;
        }
        let d = &Digits::TABLE;
        let Some(v) = &self.verdict else {
            return Some("first to target: none (no configuration reached it in every repeat; raise --iterations or relax the target)".into());
        };
        let mut line = format!(
            "first to target: {} at {} (mean of {} repeats)",
            v.first,
            short(v.time, d),
            c.repeats
        );
        if let (Some(next), Some(lead)) = (&v.next, v.lead) {
            let interval = match (v.lead_ci_low, v.lead_ci_high) {
                (Some(lo), Some(hi)) => format!(", 95% CI {} to {}", short(lo, d), short(hi, d)),
                _ => String::new(),
            };
            line.push_str(&format!(
                "; {} ahead of {next} (paired over repeats{interval})",
                short(lead, d)
            ));
        }
        Some(line)
    }
}

impl TrainReport {
    /// The `#` lines above the table: the problem, the cluster, the run.
    fn write_table_header(&self, out: &mut dyn Write) -> io::Result<()> {
        let c = &self.config;
        let d = &Digits::TABLE;
        writeln!(
            out,
            "# gcsim train: {} on {} ({} training rows, {} test rows, {} features), n={} workers, dist {}, load {}, {}",
            c.problem, c.data, c.train_rows, c.test_rows, c.features, c.n, c.dist, c.load_model, c.comm
        )?;
        let target = |name: &str, v: Option<f64>| v.map(|v| format!("{name} {}", short(v, d)));
        let targets: Vec<String> = [
            target("loss <=", c.targets.loss),
            target(
                &format!("{} {}", c.metric, if c.problem == "logistic" { ">=" } else { "<=" }),
                c.targets.metric,
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        writeln!(
            out,
            "# {} iterations x {} repeats, step {} ({}), schedule {}, l2 {}, seed {}; target: {}; {}",
            c.iterations,
            c.repeats,
            short(c.step, d),
            c.step_source,
            c.schedule,
            c.l2,
            c.seed,
            if targets.is_empty() {
                "none".to_string()
            } else {
                targets.join(" and ")
            },
            crate::units::sentence(c.time_unit)
        )?;
        for note in &c.notes {
            writeln!(out, "# note: {note}")?;
        }
        Ok(())
    }

    /// The `#` lines below the table: how to read time_to_target, the verdict.
    fn write_table_footer(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.rows.iter().any(|r| r.reached.is_some_and(|x| x > 0.0 && x < 1.0)) {
            writeln!(
                out,
                "# where reached < 1, time_to_target and its interval are over the repeats that reached it (conditional on reaching it: biased low)"
            )?;
        }
        if let Some(line) = self.verdict_line() {
            writeln!(out, "# {line}")?;
        }
        Ok(())
    }
}

impl Export for TrainReport {
    type Row = TrainRow;

    fn rows(&self) -> &[TrainRow] {
        &self.rows
    }

    fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        self.write_table_header(out)?;
        let (c, d) = (&self.config, &Digits::TABLE);
        let mut cells = vec![
            [
                "strategy",
                "exact",
                "reached",
                "time_to_target",
                "95% CI",
                "iterations",
                "time/iter",
                "final_loss",
                c.metric.as_str(),
                "diverged",
                "stalled",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for r in &self.rows {
            let ci = match (r.time_to_target_ci_low, r.time_to_target_ci_high) {
                (Some(lo), Some(hi)) => format!("{} - {}", short(lo, d), short(hi, d)),
                _ => "-".into(),
            };
            cells.push(vec![
                r.strategy.clone(),
                if r.exact { "yes" } else { "no" }.into(),
                short_cell(r.reached, d),
                short_cell(r.time_to_target, d),
                ci,
                short_cell(r.iterations_to_target, d),
                short_cell(r.time_per_iteration, d),
                short_cell(r.final_loss, d),
                short_cell(r.final_metric, d),
                short(r.diverged, d),
                short(r.stalled, d),
            ]);
        }
        write_aligned(&cells, 1, out)?;
        self.write_table_footer(out)
    }

    fn write_table_of(&self, columns: &Columns, out: &mut dyn Write) -> io::Result<()> {
        self.write_table_header(out)?;
        write_columns(self, columns, &Digits::TABLE, false, out)?;
        self.write_table_footer(out)
    }
}

/// Writes every trajectory as CSV: strategy, repeat, iteration, time, loss
/// and the test metric (named by `problem`).
pub fn write_curves(trained: &[Trained], problem: Problem, out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["strategy", "repeat", "iteration", "time", "loss", metric_name(problem)])?;
    for t in trained {
        let label = t.scheme.to_string();
        for (r, run) in t.runs.iter().enumerate() {
            for i in 0..run.time.len() {
                w.write_record([
                    label.clone(),
                    r.to_string(),
                    i.to_string(),
                    run.time[i].to_string(),
                    run.loss[i].to_string(),
                    run.metric[i].to_string(),
                ])?;
            }
        }
    }
    w.flush()
}
