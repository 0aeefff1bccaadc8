//! Running a validated study and writing its report: what `run` and `sweep` share.

use std::io::{self, IsTerminal, Write};

use anyhow::{Context, Result};

use gcsim::engine;
use gcsim::export::{self, Format};
use gcsim::report::{self, Report, Row, RunConfig};
use gcsim::study::Study;

use super::UsageError;
use super::common::{CommonArgs, Output};
use super::figure::{Figure, FigureKind, SURVIVAL_POINTS};
use super::progress::Bar;

/// A study ready to run, with its description and where its results go.
pub struct Job {
    /// What to simulate.
    pub study: Study,
    /// What the output says was run.
    pub config: RunConfig,
    /// Where the results go.
    pub output: Output,
    /// Threads, progress, `--analytic`.
    pub common: CommonArgs,
    /// The figure to draw, if any.
    pub figure: Option<Figure>,
}

impl Job {
    /// The rows: exact values under `--analytic`, else a simulation.
    fn rows(&mut self) -> Result<(Vec<Row>, Option<engine::Outcome>)> {
        if self.common.analytic {
            self.config.mode = "analytic";
            self.config.quantile_definition = "exact quantiles of the iteration-time law";
            let (rows, missing) = report::analytic_rows(&self.study);
            let missing: Vec<String> = missing.iter().map(|s| s.to_string()).collect();
            if rows.is_empty() {
                return Err(UsageError(format!(
                    "--analytic: no exact law for {} under --load-model {} with --dist {}; run without --analytic to simulate",
                    missing.join(", "),
                    self.study.load_model(),
                    self.study.dist()
                ))
                .into());
            }
            if !missing.is_empty() {
                let note = format!("{} (no exact law; run without --analytic)", missing.join("; "));
                eprintln!("note: skipped {note}");
                self.config.skipped.push(note);
            }
            return Ok((rows, None));
        }
        let bar = Bar::new(self.common.quiet, self.study.trials());
        let pool = self.common.pool()?;
        let options = engine::Options {
            survival_points: match self.figure.as_ref().map(|f| f.kind) {
                Some(FigureKind::Survival) => SURVIVAL_POINTS,
                _ => 0,
            },
        };
        let plan = engine::TrialPlan::new(&self.study, engine::RulePath::Fast);
        let outcome = pool.install(|| engine::simulate_full(&plan, &self.study, &bar, &options));
        if outcome.passes > 1 {
            eprintln!(
                "note: the percentiles needed {} passes over the trials to reach their resolution",
                outcome.passes
            );
        }
        Ok((report::rows(&self.study, &outcome), Some(outcome)))
    }

    /// Simulates (or evaluates), then writes the report to the file and/or stdout.
    pub fn execute(mut self) -> Result<()> {
        for note in &self.config.skipped {
            eprintln!("note: skipped {note}");
        }
        let (rows, outcome) = self.rows()?;
        self.config.warnings.extend(report::infinite_mean_warnings(&rows));
        for warning in &self.config.warnings {
            eprintln!("warning: {warning}");
        }
        let report = Report {
            rows,
            config: self.config,
        };
        let stdout = io::stdout();
        match self.output.file {
            Some((path, mut tmp)) => {
                export::write(&report, self.output.format, tmp.as_file_mut())
                    .and_then(|()| tmp.as_file_mut().sync_all())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                tmp.persist(&path)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                if stdout.is_terminal() {
                    export::write(&report, Format::Table, &mut stdout.lock())?;
                }
                let rows = report.rows.len();
                eprintln!(
                    "wrote {rows} row{} to {}",
                    if rows == 1 { "" } else { "s" },
                    path.display()
                );
            }
            None => {
                let mut out = io::BufWriter::new(stdout.lock());
                export::write(&report, self.output.format, &mut out)?;
                out.flush()?;
            }
        }
        if let Some(figure) = &self.figure {
            figure.draw(&self.study, &report.config, &report.rows, outcome.as_ref())?;
        }
        Ok(())
    }
}
