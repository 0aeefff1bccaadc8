//! `[[train]]` tables: a training study (`gcsim train`) in a scenario file.
//!
//! ```toml
//! [[train]]
//! label = "scaled"                 # files: <label>.csv, <label>.json, <label>-curves.csv
//! schemes = ["uncoded", "frc", "crc", "k-async"]
//! s = 3                            # also m, k, d, timeout, parts, ... as in [[study]]
//! load_model = "scaled"            # the cluster keys of [[study]]: n, dist, workers, ...
//! problem = "logistic"             # least-squares or logistic
//! data = "../data/breast-cancer.csv"   # relative to the scenario file; or synthetic:...
//! iterations = 400                 # per run [default 1000]; not the file's `iterations`
//! repeats = 20                     # [default 10]; --trials does not change it
//! target_metric = 0.95             # and/or target_loss
//! plot = "scaled.png"              # the loss against wall-clock time
//! ```
//!
//! The other keys mirror the flags of `gcsim train`: target, test_fraction,
//! l2, step, schedule (the step size's). The keys of a pipeline job
//! (`parallel`, ...) are refused: a train runs on a flat cluster at a
//! master. The seed is the scenario's. Every value is checked
//! and the data read before anything runs; an error names the file, the
//! line of the key at fault, and the key.

use serde::Deserialize;
use toml::Spanned;

use super::figures::{StyleKeys, style_of};
use super::source::{Source, Taken, cluster_keys, grid_keys, scheme_table};
use super::{ScenarioError, ScenarioFile, result_file};
use crate::plot::FigureStyle;
use gcsim::export::Format;
use gcsim::param::{Param, keys};
use gcsim::study::Study;
use gcsim::train::data::{DataError, DataSource};
use gcsim::train::problem::Problem;
use gcsim::train::report::TrainConfig;
use gcsim::train::run::{MAX_REPEATS, MAX_TRAIN_ITERATIONS, TrainError, Trainer};
use gcsim::train::setup::{Recipe, RecipeError, Schedule, Setup};
use gcsim::train::summary::Targets;

/// Iterations of a run when the table gives none, as `gcsim train`.
const ITERATIONS: u64 = 1000;
/// Repeats when the table gives none, as `gcsim train`.
const REPEATS: u64 = 10;
/// The test fraction when the table gives none, as `gcsim train`.
const TEST_FRACTION: f64 = 0.2;

scheme_table! {
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct TrainFile {
        problem: Option<Spanned<String>>,
        data: Option<Spanned<String>>,
        target: Option<Spanned<String>>,
        test_fraction: Option<Spanned<f64>>,
        l2: Option<Spanned<f64>>,
        #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
        iterations: Option<Spanned<u64>>,
        step: Option<Spanned<f64>>,
        schedule: Option<Spanned<String>>,
        #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
        repeats: Option<Spanned<u64>>,
        target_loss: Option<Spanned<f64>>,
        target_metric: Option<Spanned<f64>>,
        plot: Option<Spanned<String>>,
        size: Option<Spanned<String>>,
        #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
        dpi: Option<Spanned<u64>>,
        font_size: Option<Spanned<f64>>,
        title: Option<bool>,
        log_y: Option<bool>,
        parallel: Option<Spanned<toml::Value>>,
        microbatches: Option<Spanned<toml::Value>>,
        backward_ratio: Option<Spanned<toml::Value>>,
        p2p_time: Option<Spanned<toml::Value>>,
        stage_work: Option<Spanned<toml::Value>>,
        microbatch_work: Option<Spanned<toml::Value>>,
        optimizer_time: Option<Spanned<toml::Value>>,
    }
}

/// One validated `[[train]]` table: its study (the repeats are its trials),
/// the data prepared, and where its outputs go.
#[derive(Debug, Clone)]
pub struct ScenarioTrain {
    /// Names the output files.
    pub label: String,
    /// The configurations and the cluster; trials are the repeats.
    pub study: Study,
    /// Values the schemes do not admit.
    pub skipped: Vec<String>,
    /// The data, split and standardised, the objective and the step.
    pub setup: Setup,
    /// What the runs must reach.
    pub targets: Targets,
    /// The `config` of the JSON output.
    pub config: TrainConfig,
    /// The loss-against-time figure's file name, if any.
    pub plot: Option<String>,
    /// Its size, dpi, font size, heading and y scale (`size`, `dpi`,
    /// `font_size`, `title`, `log_y`).
    pub style: FigureStyle,
}

impl ScenarioTrain {
    /// The formats of the result files.
    pub const RESULT_FORMATS: [Format; 2] = [Format::Csv, Format::Json];

    /// The name of the result file in `format`: `<label>.<format>`.
    pub fn result_file(&self, format: Format) -> String {
        result_file(&self.label, format)
    }

    /// The name of the trajectories' file: `<label>-curves.csv`.
    pub fn curves_file(&self) -> String {
        curves_file(&self.label)
    }

    /// Every file the training study writes: its results, its curves and
    /// its figure.
    pub fn outputs(&self) -> Vec<String> {
        let results = Self::RESULT_FORMATS.map(|format| self.result_file(format));
        results
            .into_iter()
            .chain([self.curves_file()])
            .chain(self.plot.iter().flat_map(|p| [p.clone(), super::figure_data_file(p)]))
            .collect()
    }
}

fn curves_file(label: &str) -> String {
    format!("{label}-curves.csv")
}

/// A value parsed by `parse`, or an error at its key.
fn parsed<T, E: std::fmt::Display>(
    src: &Source,
    key: &str,
    value: Option<&Spanned<String>>,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<Option<T>, ScenarioError> {
    let Some(v) = value else { return Ok(None) };
    match parse(v.get_ref()) {
        Ok(x) => Ok(Some(x)),
        Err(e) => src.err(Some(v.span()), format!("key `{key}`: {e}")),
    }
}

/// A whole number in `1..=max`, `default` if absent, or an error at its key.
fn count(src: &Source, key: &str, value: Option<&Spanned<u64>>, default: u64, max: u64) -> Result<u64, ScenarioError> {
    match value {
        None => Ok(default),
        Some(v) if (1..=max).contains(v.get_ref()) => Ok(*v.get_ref()),
        Some(v) => src.err(
            Some(v.span()),
            format!(
                "key `{key}`: {} is out of range; accepted: a whole number from 1 to {max}",
                v.get_ref()
            ),
        ),
    }
}

/// One `[[train]]` table, validated and its data read; its label and files
/// are recorded in `taken`.
pub(super) fn train(
    src: &Source,
    file: &ScenarioFile,
    tr: &TrainFile,
    taken: &mut Taken,
) -> Result<ScenarioTrain, ScenarioError> {
    let label = src.label(&tr.label, "train", taken)?;
    let owner = format!("train `{label}`");
    if let Some(a) = &file.aggregation {
        return src.err(
            Some(a.span()),
            format!("{owner}: key `aggregation` sums a [[study]]'s or a [[plan]]'s gradients; a [[train]] table is trained at a master: put the collective's keys in the studies and plans"),
        );
    }
    flat_only(src, file, tr, &owner)?;
    let cluster = src.cluster(
        &cluster_keys!(file, file.n.as_ref()),
        &cluster_keys!(tr, tr.n.as_ref()),
        &tr.label,
    )?;
    let grid = src.grid(cluster.n, &grid_keys!(tr), &tr.label, &owner)?;
    let repeats = count(src, "repeats", tr.repeats.as_ref(), REPEATS, MAX_REPEATS)?;
    let iterations = count(
        src,
        "iterations",
        tr.iterations.as_ref(),
        ITERATIONS,
        MAX_TRAIN_ITERATIONS,
    )?;
    let span_of = |param: Param| Some(tr.span_of(param));
    let fail = |param: Param, e: &dyn std::fmt::Display| src.err(span_of(param), format!("{owner}: {e}"));
    let value = |v: &Option<Spanned<f64>>| v.as_ref().map(|v| *v.get_ref());
    let targets = match Targets::new(value(&tr.target_loss), value(&tr.target_metric)) {
        Ok(t) => t,
        Err(e) => return fail(e.param(), &e),
    };
    let seed = file.seed.unwrap_or(0);
    let study = match Study::with_workers(
        cluster.n,
        cluster.workers,
        cluster.model,
        grid.expanded.schemes,
        repeats,
        seed,
    ) {
        Ok(s) => s.with_comm(cluster.comm),
        Err(e) => return fail(Param::Scheme, &e),
    };
    let study = match study.with_iterations(iterations) {
        Ok(s) => s,
        Err(e) => return fail(Param::Iterations, &e),
    };
    let recipe = recipe(src, tr, seed)?;
    let setup = match Setup::prepare(&recipe) {
        Ok(s) => s,
        Err(e) => {
            // Not two target values: the target column's fault where one is named.
            let param = match e {
                RecipeError::Data(DataError::TargetValues { .. }) if tr.target.is_some() => Param::Target,
                _ => e.param(),
            };
            return fail(param, &e);
        }
    };
    if let Err(e) = Trainer::new(&study, &setup) {
        let param = match &e {
            TrainError::TooLarge { .. } if tr.iterations.is_none() => Param::Repeats,
            TrainError::TooLarge { .. } | TrainError::TooManyModels { .. } => Param::Iterations,
            TrainError::TooFewRows { .. } => Param::TestFraction,
            TrainError::Unsupported(_) => Param::Scheme,
        };
        return fail(param, &e);
    }
    for format in ScenarioTrain::RESULT_FORMATS {
        src.claim(taken, &result_file(&label, format), &owner, "label", tr.label.span())?;
    }
    src.claim(taken, &curves_file(&label), &owner, "label", tr.label.span())?;
    let (plot, style) = figure(src, tr, &owner, taken)?;
    let mut config = TrainConfig::new("scenario", &study, &recipe, &setup, targets, &keys);
    config.study = Some(format!("{}/{label}", file.name.get_ref()));
    Ok(ScenarioTrain {
        label,
        study,
        skipped: grid.expanded.skipped,
        setup,
        targets,
        config,
        plot,
        style,
    })
}

/// A `[[train]]` trains at a master on a flat cluster: the keys of a
/// pipeline job (`schedule` aside, its step size's here) are refused, its
/// own and the file's `parallel`.
fn flat_only(src: &Source, file: &ScenarioFile, tr: &TrainFile, owner: &str) -> Result<(), ScenarioError> {
    if let Some(p) = &file.parallel {
        return src.err(
            Some(p.span()),
            format!("{owner}: key `parallel` lays out the [[study]] tables' pipeline job; a [[train]] table trains at a master, on a flat cluster: put `parallel` in the studies"),
        );
    }
    let own = [
        ("parallel", &tr.parallel),
        ("microbatches", &tr.microbatches),
        ("backward_ratio", &tr.backward_ratio),
        ("p2p_time", &tr.p2p_time),
        ("stage_work", &tr.stage_work),
        ("microbatch_work", &tr.microbatch_work),
        ("optimizer_time", &tr.optimizer_time),
    ];
    match own.into_iter().find_map(|(key, v)| Some((key, v.as_ref()?))) {
        Some((key, v)) => src.err(
            Some(v.span()),
            format!("{owner}: key `{key}` describes a pipeline job; a [[train]] table trains at a master, on a flat cluster: simulate the layout in a [[study]]"),
        ),
        None => Ok(()),
    }
}

/// A `[[train]]`'s `schedule`, its step size's; a pipeline's schedule
/// there is refused saying where it belongs.
fn step_schedule(text: &str) -> Result<Schedule, String> {
    text.parse::<Schedule>().map_err(|e| match gcsim::parallel::Schedule::parse(text) {
        Ok(_) => format!("{e}; `{text}` is a pipeline's schedule, a [[study]]'s key beside `parallel`: a [[train]]'s `schedule` is its step size's"),
        Err(_) => e,
    })
}

impl TrainFile {
    /// Where an error about `param` points: that key's line where the
    /// table gives it, else the label's.
    fn span_of(&self, param: Param) -> std::ops::Range<usize> {
        let span = match param {
            Param::Scheme => Some(self.schemes.span()),
            Param::Problem => self.problem.as_ref().map(Spanned::span),
            Param::Data => self.data.as_ref().map(Spanned::span),
            Param::Target => self.target.as_ref().map(Spanned::span),
            Param::TestFraction => self.test_fraction.as_ref().map(Spanned::span),
            Param::L2 => self.l2.as_ref().map(Spanned::span),
            Param::Step => self.step.as_ref().map(Spanned::span),
            Param::Iterations => self.iterations.as_ref().map(Spanned::span),
            Param::Repeats => self.repeats.as_ref().map(Spanned::span),
            Param::TargetLoss => self.target_loss.as_ref().map(Spanned::span),
            Param::TargetMetric => self.target_metric.as_ref().map(Spanned::span),
            _ => None,
        };
        span.unwrap_or(self.label.span())
    }
}

/// The table's loss-against-time figure, its files claimed, and its style;
/// style keys without `plot` are an error.
fn figure(
    src: &Source,
    tr: &TrainFile,
    owner: &str,
    taken: &mut Taken,
) -> Result<(Option<String>, FigureStyle), ScenarioError> {
    match &tr.plot {
        Some(p) => {
            let name = src.figure_file("plot", p)?;
            src.claim(taken, &name, owner, "plot", p.span())?;
            src.claim(taken, &super::figure_data_file(&name), owner, "plot", p.span())?;
            let keys = StyleKeys {
                size: tr.size.as_ref(),
                dpi: tr.dpi.as_ref(),
                font_size: tr.font_size.as_ref(),
                title: tr.title,
                log_y: tr.log_y,
                file: p.span(),
            };
            let style = style_of(src, &keys, &name)?;
            Ok((Some(name), style))
        }
        None => {
            let given = [
                tr.size.as_ref().map(|s| ("size", s.span())),
                tr.dpi.as_ref().map(|d| ("dpi", d.span())),
                tr.font_size.as_ref().map(|f| ("font_size", f.span())),
            ];
            if let Some((key, span)) = given.into_iter().flatten().next() {
                return src.err(
                    Some(span),
                    format!("{owner}: key `{key}` styles the figure `plot`, which this table does not draw"),
                );
            }
            Ok((None, FigureStyle::default()))
        }
    }
}

/// What `Setup::prepare` needs: the problem, the data (a file relative to
/// the scenario's folder), the split, the step and the seed.
fn recipe(src: &Source, tr: &TrainFile, seed: u64) -> Result<Recipe, ScenarioError> {
    let problem = parsed(src, "problem", tr.problem.as_ref(), str::parse::<Problem>)?;
    let data = parsed(src, "data", tr.data.as_ref(), |text| {
        text.parse::<DataSource>().map(|d| match d {
            DataSource::File(path) => DataSource::File(src.base().join(path)),
            synthetic => synthetic,
        })
    })?;
    let schedule = parsed(src, "schedule", tr.schedule.as_ref(), step_schedule)?;
    let value = |v: &Option<Spanned<f64>>| v.as_ref().map(|v| *v.get_ref());
    Ok(Recipe {
        problem: problem.unwrap_or(Problem::Logistic),
        data: data.unwrap_or_else(|| "synthetic".parse().expect("the default data parse")),
        target: tr.target.as_ref().map(|t| t.get_ref().clone()),
        test_fraction: value(&tr.test_fraction).unwrap_or(TEST_FRACTION),
        l2: value(&tr.l2).unwrap_or(0.0),
        step: value(&tr.step),
        schedule: schedule.unwrap_or(Schedule::Constant),
        seed,
    })
}
