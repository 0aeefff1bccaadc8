//! `gcsim scenario FILE`: run every study of a scenario file, then every
//! training study, write their CSV, JSON, curves and figures into
//! `<out-dir>/<name>/`, and print the tables; with `--report`, a page of
//! it all beside them (`README.md`, `index.html`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Parser};

use gcsim::export::markup::markup_cells;
use gcsim::export::{self, Export, Format};
use gcsim::report::{self, Report};
use gcsim::shard::ShardId;
use gcsim::shard::units::assign;
use gcsim::train::report::write_curves;
use gcsim_figures::plot::loss::loss_chart;
use gcsim_figures::plot::sweep::overlay_chart;
use gcsim_figures::scenario::page::{Page, Section};
use gcsim_figures::scenario::shard::{Item, ItemRecord};
use gcsim_figures::scenario::{Scenario, ScenarioPlan, ScenarioStudy, ScenarioTrain, figure_data_file};

use super::common::{MIN_TRACE_STEPS, short_trace_warning};
use super::figure::{Figure, FigureKind, FigureOptions, draw_chart, sweep_chart_of};
use super::job::{Engine, bootstrap_note, evaluate};
use super::notes::note;
use super::output::{self, Stdout, write_atomically};
use super::train::train;
use super::{Status, run_config};

/// Run a study described by a scenario file.
#[derive(Debug, Clone, Args)]
#[command(after_help = "A scenario file (TOML) holds a complete study: n, dist, load_model
(unit_time), trials, seed, one [[study]] per sweep with its label, schemes,
s/m/k lists and figures, and one [[train]] per training comparison (as
`gcsim train`: data, problem, iterations, repeats, targets, plot). See
scenarios/ for examples and the guide (docs/guide/src/commands/scenarios.md) for every key.

Examples:
  gcsim scenario scenarios/seed-literature.toml
  gcsim scenario scenarios/stragglers-100gpu.toml --trials 20000 \\
      --out-dir /tmp/out
  gcsim scenario scenarios/time-to-accuracy.toml
  gcsim scenario scenarios/comm-tradeoff.toml --report

Sharded by table (each study, train and plan runs whole, as without --shard, so
its files are the same): --shard I/K runs every K-th unit from the I-th (a unit:
a [[study]] with the studies its [[figure]] overlays join it to, a [[train]], or
a [[plan]]), writes their files into <out-dir>/<name>/ and a partial result to
<out-dir>/<name>-shards/part-I-of-K.json. --merge, with the same FILE, --out-dir
and --trials, checks that all K parts are there, prints every table in file order
and writes the --report: the whole run's files and output, byte for byte.
  gcsim scenario s.toml --out-dir out --shard 1/2    # and --shard 2/2
  gcsim scenario s.toml --out-dir out --merge --report
In a Slurm job array, --shard slurm takes I/K from the task (see scripts/slurm/).")]
pub struct ScenarioArgs {
    /// The scenario file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Override the file's trials (e.g. for a quick look); the repeats of
    /// `[[train]]` tables stay as the file says.
    #[arg(long, value_name = "N", value_parser = super::parse_trials, allow_negative_numbers = true)]
    pub trials: Option<u64>,

    /// Where `<name>/` is created.
    #[arg(long, short, default_value = "output", value_name = "DIR")]
    pub out_dir: PathBuf,

    /// Worker threads, 1 to 1024 [default: all cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = super::parse_threads, allow_negative_numbers = true)]
    pub threads: Option<usize>,

    /// No progress bar and no notes on stderr (what was written, values
    /// skipped); warnings and errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,

    /// Also write a report of the whole scenario into `<out-dir>/<name>/`:
    /// `README.md` (the configuration, the command that reproduces it, each
    /// study's table and figures) and a self-contained `index.html` (the
    /// same, figures embedded).
    #[arg(long)]
    pub report: bool,

    /// Run shard I of K of the scenario's tables (or `slurm`: this task of
    /// a job array), into --out-dir, for --merge. Example: --shard 2/4
    #[arg(long, value_name = "I/K", value_parser = super::common::parse_shard, allow_hyphen_values = true)]
    pub shard: Option<ShardId>,

    /// Put together the --shard parts in --out-dir: print every table and
    /// write the --report, as the scenario without --shard does.
    #[arg(long, conflicts_with = "shard")]
    pub merge: bool,
}

mod shard;

/// The files `--report` writes.
const REPORT_FILES: [&str; 2] = ["README.md", "index.html"];

/// A validated scenario and where it goes.
pub struct ScenarioJob {
    scenario: Scenario,
    dir: PathBuf,
    engine: Engine,
    /// With `--report`: the page's heading parts, the sections added as
    /// the studies run.
    report: Option<Page>,
    /// The `[[plan]]` tables and their jobs, checked before anything runs.
    plans: Vec<(ScenarioPlan, super::plan::PlanJob)>,
    /// Whole, a shard of it, or the merge of the shards.
    mode: Mode,
    /// The lock on `dir`, held until the files are in place (see
    /// [`output::lock_dir`]); none for a shard, which writes its own part
    /// beside the other shards' at the same time.
    lock: Option<std::fs::File>,
}

/// What a scenario command does.
enum Mode {
    /// Run every table.
    Whole,
    /// Run this shard's units, record them with the scenario's fingerprint.
    Shard(ShardId, String),
    /// Put the parts together (the scenario's fingerprint).
    Merge(String),
}

/// A `[[plan]]` table's job: its flags parsed by `gcsim plan`'s own parser,
/// an error placed on the table's line.
fn plan_job(file: &std::path::Path, plan: &ScenarioPlan, args: &ScenarioArgs) -> Result<super::plan::PlanJob> {
    let at = |message: &str| {
        super::UsageError(format!(
            "{}:{}: plan `{}` (its keys are `gcsim plan`'s flags): {message}",
            file.display(),
            plan.line,
            plan.label
        ))
    };
    let mut argv: Vec<String> = vec!["gcsim".into(), "plan".into()];
    argv.extend(plan.args.iter().cloned());
    if args.quiet {
        argv.push("--quiet".into());
    }
    if let Some(threads) = args.threads {
        argv.extend(["--threads".into(), threads.to_string()]);
    }
    let command = match super::Cli::try_parse_from(&argv) {
        Ok(cli) => cli.command,
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            return Err(at(first.strip_prefix("error: ").unwrap_or(first)).into());
        }
    };
    let super::Command::Plan(plan_args) = command else {
        unreachable!("the argv starts with `plan`")
    };
    super::plan::PlanJob::try_from(*plan_args).map_err(|e| at(&super::flags::render(&e)).into())
}

impl TryFrom<ScenarioArgs> for ScenarioJob {
    type Error = anyhow::Error;

    fn try_from(args: ScenarioArgs) -> Result<Self> {
        output::names::input("FILE", &args.file)?;
        let scenario = Scenario::from_file(&args.file, args.trials)?;
        let dir = args.out_dir.join(&scenario.name);
        std::fs::create_dir_all(&dir).with_context(|| format!("--out-dir: cannot create {}", dir.display()))?;
        output::probe(&dir).context("--out-dir")?;
        let studies = scenario.studies.iter().flat_map(ScenarioStudy::outputs);
        let overlays = scenario
            .overlays
            .iter()
            .flat_map(|o| [o.figure.file.clone(), figure_data_file(&o.figure.file)]);
        for file in studies
            .chain(scenario.trains.iter().flat_map(ScenarioTrain::outputs))
            .chain(overlays)
        {
            output::check_in("--out-dir", &dir, file)?;
        }
        let mut plans = Vec::new();
        for plan in &scenario.plans {
            plans.push((plan.clone(), plan_job(&args.file, plan, &args)?));
            for file in plan.outputs() {
                output::check_in("--out-dir", &dir, file)?;
            }
        }
        let text = std::fs::read_to_string(&args.file)
            .with_context(|| format!("{}: cannot read the scenario file", args.file.display()))?;
        let print = gcsim_figures::scenario::shard::fingerprint(&text, args.trials);
        let mode = match (args.shard, args.merge) {
            (Some(_), _) if args.report => anyhow::bail!(
                "--report is written by the merge of the shards: drop it here and give it to gcsim scenario FILE --merge"
            ),
            (Some(shard), _) => Mode::Shard(shard, print),
            (None, true) => Mode::Merge(print),
            (None, false) => Mode::Whole,
        };
        let lock = match mode {
            Mode::Shard(..) => None,
            _ => output::lock_dir("--out-dir", &dir)?,
        };
        let report = if args.report {
            for file in REPORT_FILES {
                output::check("--report", &dir.join(file))?;
            }
            let config = text;
            let mut command = format!(
                "gcsim scenario {} --out-dir {}",
                args.file.display(),
                args.out_dir.display()
            );
            if let Some(t) = args.trials {
                command.push_str(&format!(" --trials {t}"));
            }
            command.push_str(" --report");
            Some(Page {
                title: scenario.name.clone(),
                description: scenario.description.clone(),
                command,
                config,
                sections: Vec::new(),
            })
        } else {
            None
        };
        Ok(Self {
            scenario,
            dir,
            engine: Engine {
                threads: args.threads,
                quiet: args.quiet,
            },
            report,
            plans,
            mode,
            lock,
        })
    }
}

impl ScenarioJob {
    /// Runs every table in file order (with `--shard`, its units' tables;
    /// with `--merge`, none: their records come from the parts). A closed
    /// stdout (`| head`) stops the printing, not the files.
    pub fn execute(self) -> Result<Status> {
        let ScenarioJob {
            scenario,
            dir,
            engine,
            mut report,
            plans,
            mode,
            lock,
        } = self;
        output::keep(Box::new(lock));
        let mut stdout = Stdout::lock();
        if let Some(d) = &scenario.description {
            writeln!(stdout, "# {}: {d}", scenario.name)?;
        }
        let units = scenario.units();
        let selected: Vec<Item> = match &mode {
            Mode::Whole => scenario.items(),
            Mode::Shard(shard, _) => {
                let assignment = assign(&vec![1; units.len()], shard.count);
                let mine: Vec<&Item> = units
                    .iter()
                    .zip(&assignment)
                    .filter(|(_, s)| **s + 1 == shard.index)
                    .flat_map(|(items, _)| items)
                    .collect();
                scenario.items().into_iter().filter(|i| mine.contains(&i)).collect()
            }
            Mode::Merge(_) => Vec::new(),
        };
        let mut tables = Tables {
            scenario: &scenario,
            dir: &dir,
            engine,
            sections: report.is_some() || matches!(mode, Mode::Shard(..)),
            reports: vec![None; scenario.studies.len()],
            plans: plans.into_iter().map(|(_, job)| Some(job)).collect(),
        };
        let mut records = Vec::with_capacity(selected.len());
        for item in selected {
            let mut out = Vec::new();
            let sections = tables.run(item, &mut out)?;
            stdout.write_all(&out)?;
            let stdout = String::from_utf8(out).context("a table's text is not UTF-8")?;
            records.push(ItemRecord { item, stdout, sections });
        }
        match mode {
            Mode::Whole => {}
            Mode::Shard(shard, print) => {
                let assignment = assign(&vec![1; units.len()], shard.count);
                let held = records.len();
                shard::write_part(&dir, &scenario, shard, print, assignment, records)?;
                note!(
                    "wrote {held} of the scenario's {} tables; combine all {} shards with gcsim scenario FILE --merge",
                    scenario.items().len(),
                    shard.count
                );
                stdout.flush()?;
                return Ok(Status::Success);
            }
            Mode::Merge(print) => {
                records = shard::read_parts(&dir, &scenario, &print).map_err(super::usage)?;
                for r in &records {
                    stdout.write_all(r.stdout.as_bytes())?;
                }
            }
        }
        if let Some(page) = &mut report {
            page.sections = records.into_iter().flat_map(|r| r.sections).collect();
            let markdown = dir.join(REPORT_FILES[0]);
            write_atomically(&markdown, |out| page.write_markdown(out))?;
            let html = dir.join(REPORT_FILES[1]);
            // The figures are still in their temporary files (see `output::current`).
            let locate = |figure: &str| output::current(&dir.join(figure));
            write_atomically(&html, |out| page.write_html(&locate, out))?;
            wrote(&mut stdout, &[markdown, html])?;
        }
        stdout.flush()?;
        Ok(Status::Success)
    }
}

/// What runs a scenario's tables: each writes its files and returns its
/// sections of the report page (where wanted), its text to `out`.
struct Tables<'a> {
    scenario: &'a Scenario,
    dir: &'a Path,
    engine: Engine,
    /// Whether to make the report's sections.
    sections: bool,
    /// Each study's report once run, for the overlays drawn after them.
    reports: Vec<Option<Report>>,
    /// The `[[plan]]` tables' jobs, each taken when it runs.
    plans: Vec<Option<super::plan::PlanJob>>,
}

impl Tables<'_> {
    fn run(&mut self, item: Item, out: &mut dyn Write) -> Result<Vec<Section>> {
        match item {
            Item::Study(i) => self.study(i, out),
            Item::Figure(j) => self.overlay(j, out),
            Item::Train(t) => self.train(&self.scenario.trains[t], out),
            Item::Plan(p) => {
                let job = self.plans[p].take().context("each plan runs once")?;
                self.plan(&self.scenario.plans[p], job, out)
            }
        }
    }

    /// Runs a `[[study]]`, writes its results and figures, and prints its table.
    fn study(&mut self, i: usize, out: &mut dyn Write) -> Result<Vec<Section>> {
        let (st, dir) = (&self.scenario.studies[i], self.dir);
        let mut config = run_config(report::Command::Scenario, &st.study, st.kinds.clone());
        config.study = Some(format!("{}/{}", self.scenario.name, st.label));
        config.s = st.ranges.s.as_ref().map(|l| l.text.clone());
        config.m = st.ranges.m.as_ref().map(|l| l.text.clone());
        config.k = st.ranges.k.as_ref().map(|l| l.text.clone());
        config.d = st.ranges.d.as_ref().map(|l| l.text.clone());
        config.timeout = st.ranges.timeout.as_ref().map(|l| l.text.clone());
        config.speculate_after = st.ranges.speculate_after.map(|v| v.to_string());
        config.speculate_factor = st.ranges.speculate_factor.map(|v| v.to_string());
        config.parts = st.ranges.parts.as_ref().map(|l| l.text.clone());
        config.p = st.ranges.p.as_ref().map(|l| l.text.clone());
        config.q = st.ranges.q.as_ref().map(|l| l.text.clone());
        config.skipped = st.skipped.clone();
        config.trace_bootstrap = st.trace_bootstrap;
        config.time_unit = st.time_unit.or(config.time_unit);
        if let Some(steps) = st.study.workers().recorded_steps().filter(|&s| s < MIN_TRACE_STEPS) {
            config.warnings.push(short_trace_warning(steps));
        }
        bootstrap_note(&st.study, &config);
        for note in &config.skipped {
            note!("note: {}: skipped {note}", st.label);
        }
        let (rows, outcome) = evaluate(&st.study, &mut config, st.analytic, false, self.engine)?;
        config.warnings.extend(report::infinite_mean_warnings(&rows));
        config.warnings.extend(report::interval_warnings(&rows));
        let report = Report { rows, config };
        let mut written = Vec::new();
        for format in ScenarioStudy::RESULT_FORMATS {
            let path = dir.join(st.result_file(format));
            write_atomically(&path, |f| export::write(&report, format, f))?;
            written.push(path);
        }
        for spec in &st.figures {
            let figure = Figure {
                path: dir.join(&spec.file),
                kind: FigureKind::Sweep(spec.metric),
                options: FigureOptions {
                    style: spec.style,
                    data: Some(dir.join(figure_data_file(&spec.file))),
                },
            };
            figure.draw(&st.study, &report.config, &report.rows, outcome.as_ref())?;
        }
        export::write(&report, Format::Table, out)?;
        wrote(out, &written)?;
        let figures = st.figures.iter().map(|f| f.file.clone()).collect();
        let sections = self.section(&st.label, &report, figures)?;
        self.reports[i] = Some(report);
        Ok(sections)
    }

    /// Draws a `[[figure]]` overlay from its studies' rows.
    fn overlay(&mut self, j: usize, out: &mut dyn Write) -> Result<Vec<Section>> {
        let overlay = &self.scenario.overlays[j];
        let spec = &overlay.figure;
        let charts = overlay
            .studies
            .iter()
            .map(|&i| {
                let st = &self.scenario.studies[i];
                let report = self.reports[i].as_ref().context("an overlay's studies run before it")?;
                Ok((
                    st.label.as_str(),
                    sweep_chart_of(&st.study, &report.config, &report.rows, spec.metric)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let path = self.dir.join(&spec.file);
        let chart = overlay_chart(&charts).with_context(|| format!("[[figure]] {}", spec.file))?;
        let data = self.dir.join(figure_data_file(&spec.file));
        let options = FigureOptions {
            style: spec.style,
            data: Some(data.clone()),
        };
        draw_chart(&chart, &path, &options)?;
        wrote(out, &[path, data])?;
        if !self.sections {
            return Ok(Vec::new());
        }
        let labels: Vec<&str> = charts.iter().map(|c| c.0).collect();
        Ok(vec![Section {
            label: format!("{} ({})", spec.file, labels.join(", ")),
            notes: Vec::new(),
            cells: Vec::new(),
            figures: vec![spec.file.clone()],
        }])
    }

    /// Runs a `[[plan]]` search, writes its results, prints its table and
    /// puts its recommendation on the page.
    fn plan(&self, plan: &ScenarioPlan, job: super::plan::PlanJob, out: &mut dyn Write) -> Result<Vec<Section>> {
        let (report, _) = job.search()?;
        let mut written = Vec::new();
        for format in ScenarioPlan::RESULT_FORMATS {
            let path = self.dir.join(plan.result_file(format));
            write_atomically(&path, |f| export::write(&report, format, f))?;
            written.push(path);
        }
        export::write(&report, Format::Table, out)?;
        wrote(out, &written)?;
        if !self.sections {
            return Ok(Vec::new());
        }
        Ok(vec![Section {
            label: plan.label.clone(),
            notes: report.recommendation.iter().cloned().collect(),
            cells: markup_cells(&report, None, report.digits())?,
            figures: Vec::new(),
        }])
    }

    /// Trains a `[[train]]` table's configurations, writes its results,
    /// curves and figure, and prints its table.
    fn train(&self, tr: &ScenarioTrain, out: &mut dyn Write) -> Result<Vec<Section>> {
        for note in &tr.skipped {
            note!("note: {}: skipped {note}", tr.label);
        }
        let context = format!("{}: ", tr.label);
        let (report, trained) = train(
            &tr.study,
            &tr.setup,
            &tr.targets,
            tr.config.clone(),
            self.engine,
            (&context, "`step`"),
        )?;
        let mut written = Vec::new();
        for format in ScenarioTrain::RESULT_FORMATS {
            let path = self.dir.join(tr.result_file(format));
            write_atomically(&path, |f| export::write(&report, format, f))?;
            written.push(path);
        }
        let curves = self.dir.join(tr.curves_file());
        write_atomically(&curves, |out| write_curves(&trained, tr.setup.problem, out))?;
        written.push(curves);
        if let Some(file) = &tr.plot {
            let options = FigureOptions {
                style: tr.style,
                data: Some(self.dir.join(figure_data_file(file))),
            };
            draw_chart(&loss_chart(&report, &trained), &self.dir.join(file), &options)?;
        }
        export::write(&report, Format::Table, out)?;
        wrote(out, &written)?;
        self.section(&tr.label, &report, tr.plot.iter().cloned().collect())
    }

    /// A table's section of the report page, where wanted.
    fn section<R: Export>(&self, label: &str, report: &R, figures: Vec<String>) -> Result<Vec<Section>> {
        if !self.sections {
            return Ok(Vec::new());
        }
        Ok(vec![Section {
            label: label.to_string(),
            notes: Vec::new(),
            cells: markup_cells(report, None, report.digits())?,
            figures,
        }])
    }
}

/// The `# wrote` line after a table.
fn wrote(stdout: &mut dyn Write, written: &[PathBuf]) -> Result<()> {
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    writeln!(stdout, "# wrote {}\n", names.join(", "))?;
    Ok(())
}
