//! Running a validated study and writing its report: what `run`, `sweep` and
//! `scenario` share.

use std::io;

use anyhow::{Context, Result};

use gcsim::engine::bootstrap::replicate_trials;
use gcsim::engine::{self, Outcome};
use gcsim::report::{self, Report, Row, RunConfig};
use gcsim::shard::{ShardFile, ShardId};
use gcsim::study::Study;

use super::figure::{Figure, FigureKind, SURVIVAL_POINTS};
use super::flags::{
    AGGREGATION, ANALYTIC, BUCKETS, DIST, GPU_HOUR_PRICE, ITERATIONS, ITERATIONS_PER_RUN, LOAD_MODEL, OUT, PARALLEL,
    SHARD, TIMEOUT, TRIALS,
};
use super::notes::note;
use super::output::Output;
use super::progress::Bar;
use super::{Status, UsageError};

/// How to run the engine.
#[derive(Debug, Clone, Copy)]
pub struct Engine {
    /// Worker threads (all cores if `None`).
    pub threads: Option<usize>,
    /// No progress bar.
    pub quiet: bool,
}

impl Engine {
    /// The worker threads.
    pub fn pool(&self) -> Result<rayon::ThreadPool> {
        thread_pool(self.threads)
    }
}

/// The worker threads of `--threads` (all cores if `None`).
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    b.build().context("cannot start the worker threads")
}

/// The rows of `study`: exact values if `analytic`, else a simulation (with
/// survival curves if asked). Notes on stderr; the config records the mode.
pub fn evaluate(
    study: &Study,
    config: &mut RunConfig,
    analytic: bool,
    survival: bool,
    engine: Engine,
) -> Result<(Vec<Row>, Option<Outcome>)> {
    if analytic && study.iterations() > 1 {
        return Err(UsageError(format!(
            "{ANALYTIC}: the total of {ITERATIONS} {} iterations has no exact law here (its exact mean, {} times one iteration's, is in analytic_mean of a simulated run); run without {ANALYTIC}, or with {ITERATIONS} 1",
            study.iterations(),
            study.iterations()
        ))
        .into());
    }
    if analytic {
        config.mode = report::Mode::Analytic;
        config.quantile_definition = "exact quantiles of the iteration-time law".into();
        let (rows, missing) = report::analytic_rows(study);
        let missing: Vec<String> = missing.iter().map(|s| s.to_string()).collect();
        if rows.is_empty() {
            // Name the part of the model that has no exact law.
            let cause = if study.parallel().is_some() {
                format!("on the pipelines of {PARALLEL} (a max-plus expression of every rank's draws)")
            } else if let Some(cause) = collective_cause(study) {
                cause
            } else if study.comm().constant_shift(1.0).is_none() {
                format!(
                    "with the communication model {} (random transfer times, and a shared link with a transfer time, are simulated)",
                    study.comm()
                )
            } else {
                format!(
                    "under {LOAD_MODEL} {} with {DIST} {}",
                    study.load_model(),
                    study.workers()
                )
            };
            return Err(UsageError(format!(
                "{ANALYTIC}: no exact law for {} {cause}; run without {ANALYTIC} to simulate",
                missing.join(", "),
            ))
            .into());
        }
        if !missing.is_empty() {
            let note = format!("{} (no exact law; run without {ANALYTIC})", missing.join("; "));
            note!("note: skipped {note}");
            config.skipped.push(note);
        }
        return Ok((rows, None));
    }
    let bar = Bar::new(engine.quiet, study.trials());
    let options = engine::Options {
        survival_points: if survival { SURVIVAL_POINTS } else { 0 },
        deadline: None,
    };
    let plan = engine::TrialPlan::new(study);
    // One pool of `--threads` for the simulation and the rows' own passes.
    let pool = engine.pool()?;
    let outcome = pool.install(|| engine::simulate_full(&plan, study, &bar, &options));
    if outcome.passes > 1 {
        note!(
            "note: the percentiles needed {} passes over the trials to reach their resolution",
            outcome.passes
        );
    }
    let counting = Bar::counting(engine.quiet, 0, "errors and tallies", "trials");
    let mut rows = pool.install(|| report::rows_with_progress(study, &outcome, &counting));
    widen_for_trace(study, config, &mut rows, engine)?;
    Ok((rows, Some(outcome)))
}

/// Widens the rows' standard errors and intervals of the mean by the
/// uncertainty of a trace's recorded steps, from `--trace-bootstrap`
/// replicates (see [`gcsim::engine::bootstrap`]); nothing without them.
pub fn widen_for_trace(study: &Study, config: &RunConfig, rows: &mut [Row], engine: Engine) -> Result<()> {
    let Some(replicates) = config.trace_bootstrap else {
        return Ok(());
    };
    let var = engine.pool()?.install(|| {
        gcsim::engine::bootstrap::data_variance(
            study,
            replicates,
            &engine::Options::default(),
            &|replicate, options| {
                let bar = Bar::counting(engine.quiet, replicate.trials(), "trace bootstrap", "trials");
                engine::simulate_full(&engine::TrialPlan::new(replicate), replicate, &bar, options)
            },
            &|summary| (summary.mean.mean, summary.mean.ci95),
        )
    })?;
    if let Some(var) = var {
        report::widen_means(rows, &var);
    }
    Ok(())
}

/// The note that says how the intervals of `study` were made, where a
/// bootstrap over its trace's steps widened them.
pub fn bootstrap_note(study: &Study, config: &RunConfig) {
    if let (Some(steps), Some(replicates)) = (study.workers().recorded_steps(), config.trace_bootstrap) {
        note!(
            "note: {}",
            bootstrap_text(steps, replicates, study.trials(), study.iterations())
        );
    }
}

/// A study ready to run, with its description and where its results go.
pub struct Job {
    /// What to simulate.
    pub study: Study,
    /// The same study at other cluster sizes (`sweep --n 16,32,64`), whose
    /// rows follow the first's.
    pub sizes: Vec<Study>,
    /// What the output says was run.
    pub config: RunConfig,
    /// Where the results go.
    pub output: Output,
    /// Threads and progress.
    pub engine: Engine,
    /// Exact values only (`--analytic`).
    pub analytic: bool,
    /// Run one part of the trials and write it as a partial result (`--shard`).
    pub shard: Option<ShardId>,
    /// The figure to draw, if any.
    pub figure: Option<Figure>,
    /// Where to write one sampled iteration of a pipeline job
    /// (`--timeline`), if anywhere.
    pub timeline: Option<std::path::PathBuf>,
}

impl Job {
    /// Simulates (or evaluates), then writes the report to the file and/or
    /// stdout; under `--shard`, writes the partial result instead.
    pub fn execute(mut self) -> Result<Status> {
        for note in &self.config.skipped {
            note!("note: skipped {note}");
        }
        if let Some(shard) = self.shard {
            return self.execute_shard(shard);
        }
        bootstrap_note(&self.study, &self.config);
        let survival = self.figure.as_ref().is_some_and(|f| f.kind == FigureKind::Survival);
        let (mut rows, outcome) = evaluate(&self.study, &mut self.config, self.analytic, survival, self.engine)?;
        // Rows of a sweep over several microbatch counts say which.
        let several = self.config.microbatches.is_some();
        let microbatches = |study: &Study| study.parallel().map(|p| p.microbatches).filter(|_| several);
        for r in &mut rows {
            r.microbatches = microbatches(&self.study);
        }
        for study in &self.sizes {
            let (mut more, _) = evaluate(study, &mut self.config.clone(), self.analytic, false, self.engine)?;
            for r in &mut more {
                r.microbatches = microbatches(study);
            }
            rows.extend(more);
        }
        let report = finish_report(rows, self.config);
        write_report(&report, &self.output)?;
        if let Some(figure) = &self.figure {
            figure.draw(&self.study, &report.config, &report.rows, outcome.as_ref())?;
        }
        if let Some(path) = &self.timeline {
            write_timeline(&self.study, report.config.time_unit, path)?;
        }
        Ok(Status::Success)
    }

    fn execute_shard(self, shard: ShardId) -> Result<Status> {
        if let Err(why) = gcsim::shard::runs::check_split(&self.study, shard.count) {
            let most = gcsim::shard::runs::Split::max_shards(&self.study);
            return Err(super::usage(anyhow::anyhow!(
                "{SHARD} {}/{}: {why}: give K <= {most} (or more {TRIALS})",
                shard.index,
                shard.count
            )));
        }
        let bar = Bar::new(self.engine.quiet, self.study.trials());
        let part = self
            .engine
            .pool()?
            .install(|| gcsim::shard::runs::simulate_shard(&self.study, shard.index - 1, shard.count, &bar));
        let file = ShardFile::new(&self.study, &self.config, &part);
        let dest = self.output.file.with_context(|| format!("a shard needs {OUT}"))?;
        dest.write(|out| serde_json::to_writer(out, &file).map_err(io::Error::other))?;
        let split = gcsim::shard::runs::Split::of(&self.study, shard.count);
        let units = split.range(self.study.trials(), shard.index - 1, shard.count);
        let trials = match split {
            gcsim::shard::runs::Split::Values => units,
            _ => units.start * engine::CHUNK..(units.end * engine::CHUNK).min(self.study.trials()),
        };
        note!(
            "wrote shard {}/{} (trials {} to {} of {}) to {}; combine all {} with gcsim merge",
            shard.index,
            shard.count,
            trials.start + 1,
            trials.end,
            self.study.trials(),
            dest.path().display(),
            shard.count
        );
        Ok(Status::Success)
    }
}

/// Why a study under a collective has no exact law, where the collective
/// is why: several buckets, or a deadline's varying participants.
fn collective_cause(study: &Study) -> Option<String> {
    let c = study.aggregation().collective()?;
    if c.buckets > 1 {
        return Some(format!(
            "under {AGGREGATION} {} with {BUCKETS} {} (the iteration ends at a maximum over the buckets, a piecewise-linear function of the rule's time, which is simulated)",
            c.algorithm.name(),
            c.buckets
        ));
    }
    study.schemes().iter().any(|s| s.deadline().is_some()).then(|| {
        format!(
            "under {AGGREGATION} {} (a deadline's collective sums the workers in by {TIMEOUT}, a binomial number whose cost is added to min(T, the slowest worker's time): a mixture, not a shift of the deadline's law, which is simulated)",
            c.algorithm.name()
        )
    })
}

/// The report of finished rows: the cost columns filled, infinite-mean
/// warnings added and shown.
pub fn finish_report(mut rows: Vec<Row>, mut config: RunConfig) -> Report {
    if !config.costs.is_empty() {
        for r in &mut rows {
            r.apply_costs(&config.costs, config.time_unit);
        }
    }
    config.warnings.extend(report::infinite_mean_warnings(&rows));
    config.warnings.extend(report::interval_warnings(&rows));
    if let Some(r) = rows.iter().find(|r| {
        r.mean.is_finite()
            && [r.run_hours, r.gpu_hours, r.cost]
                .iter()
                .flatten()
                .any(|v| !v.is_finite())
    }) {
        config.warnings.push(format!(
            "{}: the run's hours or cost overflow float64 (inf) at a finite mean time; give a smaller {ITERATIONS_PER_RUN} or {GPU_HOUR_PRICE}",
            r.scheme
        ));
    }
    for warning in &config.warnings {
        eprintln!("warning: {warning}");
    }
    Report { rows, config }
}

/// Writes a report to its output and says where a file went.
pub fn write_report(report: &Report, output: &Output) -> Result<()> {
    if let Some(path) = output.write(report)? {
        let rows = report.rows.len();
        note!(
            "wrote {rows} row{} to {}",
            if rows == 1 { "" } else { "s" },
            path.display()
        );
    }
    Ok(())
}

/// How the intervals of a study on a trace of `steps` recorded steps are
/// made with `replicates` >= 2 bootstrap replicates.
pub fn bootstrap_text(steps: usize, replicates: usize, trials: u64, iterations: u64) -> String {
    format!(
        "intervals include the uncertainty of the trace's {steps} recorded steps: a bootstrap over steps ({replicates} replicates of {} trials{}; their variance less their Monte Carlo variance, added in quadrature; --trace-bootstrap 0 for Monte Carlo error alone)",
        replicate_trials(trials),
        if iterations > 1 {
            format!(", in runs of {iterations} consecutive steps")
        } else {
            String::new()
        }
    )
}

/// Writes trial 0's iteration of the study's first configuration as a
/// Chrome trace: times in microseconds of the time unit (seconds where the
/// times have none).
fn write_timeline(study: &Study, unit: Option<gcsim::units::TimeUnit>, path: &std::path::Path) -> Result<()> {
    let plan = gcsim::engine::TrialPlan::new(study);
    let timeline = plan
        .pipeline_timeline(study.seed(), 0, 0)
        .expect("--timeline is checked to go with --parallel");
    let to_micros = 1e6 / unit.map_or(1.0, |u| u.per_second());
    super::output::write_atomically(path, |out| timeline.write_chrome_trace(to_micros, out))?;
    note!("wrote one iteration's timeline to {}", path.display());
    Ok(())
}
