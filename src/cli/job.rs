//! Running a validated study and writing its report: what `run` and `sweep` share.

use std::io::{self, IsTerminal, Write};

use anyhow::{Context, Result, bail};

use gcsim::engine;
use gcsim::export::{self, Format};
use gcsim::report::{self, Report, Row, RunConfig};
use gcsim::study::Study;

use super::common::{CommonArgs, Output};
use super::progress::Bar;

/// A study ready to run, with its description and where its results go.
pub struct Job {
    /// What to simulate.
    pub study: Study,
    /// What the output says was run.
    pub config: RunConfig,
    /// Where the results go.
    pub output: Output,
    /// Threads, progress.
    pub common: CommonArgs,
}

impl Job {
    /// Simulates, then writes the report to the file and/or stdout.
    pub fn execute(self) -> Result<()> {
        for note in &self.config.skipped {
            eprintln!("note: skipped {note}");
        }
        let bar = Bar::new(self.common.quiet, self.study.trials());
        let pool = self.common.pool()?;
        let outcome = pool.install(|| engine::simulate(&self.study, &bar));
        if outcome.passes > 1 {
            eprintln!(
                "note: the percentiles needed {} passes over the trials to reach their resolution",
                outcome.passes
            );
        }
        let report = Report {
            rows: report::rows(&self.study, &outcome),
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
        Ok(())
    }
}
