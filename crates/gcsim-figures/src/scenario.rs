//! Scenario files: a complete study per TOML file, so that a study can be
//! rerun from one file.
//!
//! ```toml
//! name = "seed-literature"                # output goes to output/<name>/
//! description = "Tandon et al. 2017, n=100 exponential workers"
//! n = 100
//! dist = "exp:rate=1"                     # defaults for every study below
//! load_model = "fixed"                    # unit_time = 0.145 with affine
//! trials = 100000
//! seed = 0
//! # iterations = 1000                    # each trial: 1000 consecutive iterations
//!
//! [[study]]
//! label = "crc"                           # files: <label>.csv, <label>.json
//! schemes = ["crc"]
//! s = "0..50"                             # or 5, or [0, 5, 10]; also m, k
//! # dist, load_model, unit_time, n, iterations, trace_bootstrap, analytic may be set per study
//! # parallel = "dp=8,pp=4,tp=2"          # a hybrid-parallel job (parallel.rs), here or at the top
//! figures = [{ file = "speedup.png", metric = "speedup" }]
//!
//! [[figure]]                              # several studies on one axis
//! file = "scaled-vs-fixed.png"
//! metric = "mean"
//! studies = ["crc", "crc-fixed"]          # [[study]] labels, at least two
//!
//! [[plan]]                                # a `gcsim plan` search (plan.rs)
//! label = "pick"                          # files: <label>.csv, <label>.json
//! schemes = ["uncoded", "frc", "crc"]
//! objective = "p99"                       # any flag of `gcsim plan`, with underscores
//!
//! [[train]]                               # gradient descent on the timeline (train.rs)
//! label = "tta"                           # files: <label>.csv, .json, -curves.csv
//! schemes = ["uncoded", "frc", "crc"]
//! s = 3
//! data = "../data/breast-cancer.csv"      # relative to this file
//! target_metric = 0.95
//! plot = "tta.png"
//! ```
//!
//! Unknown keys, bad values and missing keys are errors naming the file, the
//! line and the key. Every output has its own file name: a label used twice,
//! or a file written by two outputs, is refused, naming both, before
//! anything runs.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use gcsim::export::Format;

use crate::plot::FigureStyle;
use crate::plot::sweep::Metric;
use gcsim::scheme::SchemeKind;
use gcsim::study::Study;
use gcsim::sweep::Ranges;

mod collective;
mod figures;
pub mod page;
mod parallel;
mod plan;
pub mod shard;
mod source;
mod train;
mod whole;

use figures::{figure_spec, overlay};
pub use plan::ScenarioPlan;
use source::{Source, Taken, cluster_keys, grid_keys};
pub use train::ScenarioTrain;
use train::TrainFile;

/// A scenario file error: one line, naming the file, the line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line, where known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// A list of integers as TOML allows it: `"0..50"`, `5` or `[0, 5, 10]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "accepted: a whole number >= 0 (e.g. 5 or 1e3), a range or list as a string (e.g. \"0..50\" or \"1,2,4\"), or an array of whole numbers (e.g. [0, 5, 10])"
)]
enum ListValue {
    Text(String),
    One(whole::Whole),
    Many(Vec<whole::Whole>),
}

/// A list of times as TOML allows it: `2.5`, `[1, 2.5]` or `"1,2.5"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "accepted: a number >= 0 (e.g. 2.5), an array of numbers (e.g. [1, 2.5]), or a comma list as a string (e.g. \"1,2.5\")"
)]
enum TimesValue {
    One(f64),
    Many(Vec<f64>),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FigureFile {
    file: Spanned<String>,
    metric: Option<Spanned<String>>,
    size: Option<Spanned<String>>,
    #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
    dpi: Option<Spanned<u64>>,
    font_size: Option<Spanned<f64>>,
    title: Option<bool>,
    log_y: Option<bool>,
    studies: Option<Spanned<Vec<String>>>,
}

source::scheme_table! {
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct StudyFile {
        #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
        iterations: Option<Spanned<u64>>,
        #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
        trace_bootstrap: Option<Spanned<usize>>,
        analytic: Option<bool>,
        aggregation: Option<Spanned<String>>,
        latency: Option<Spanned<f64>>,
        bandwidth: Option<Spanned<collective::Quantity>>,
        gradient_size: Option<Spanned<collective::Quantity>>,
        #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
        buckets: Option<Spanned<usize>>,
        time_unit: Option<Spanned<String>>,
        parallel: Option<Spanned<String>>,
        #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
        microbatches: Option<Spanned<usize>>,
        schedule: Option<Spanned<String>>,
        backward_ratio: Option<Spanned<f64>>,
        p2p_time: Option<Spanned<f64>>,
        stage_work: Option<Spanned<parallel::StageWork>>,
        microbatch_work: Option<Spanned<String>>,
        optimizer_time: Option<Spanned<f64>>,
        #[serde(default)]
        figures: Vec<FigureFile>,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    name: Spanned<String>,
    description: Option<String>,
    #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
    n: Option<Spanned<usize>>,
    dist: Option<Spanned<String>>,
    workers: Option<Spanned<Vec<String>>>,
    shuffle_placement: Option<Spanned<bool>>,
    comm_time: Option<Spanned<f64>>,
    comm_dist: Option<Spanned<String>>,
    link: Option<Spanned<String>>,
    decode_time: Option<Spanned<f64>>,
    load_model: Option<Spanned<String>>,
    unit_time: Option<f64>,
    aggregation: Option<Spanned<String>>,
    latency: Option<Spanned<f64>>,
    bandwidth: Option<Spanned<collective::Quantity>>,
    gradient_size: Option<Spanned<collective::Quantity>>,
    #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
    buckets: Option<Spanned<usize>>,
    time_unit: Option<Spanned<String>>,
    parallel: Option<Spanned<String>>,
    #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
    microbatches: Option<Spanned<usize>>,
    schedule: Option<Spanned<String>>,
    backward_ratio: Option<Spanned<f64>>,
    p2p_time: Option<Spanned<f64>>,
    stage_work: Option<Spanned<parallel::StageWork>>,
    microbatch_work: Option<Spanned<String>>,
    optimizer_time: Option<Spanned<f64>>,
    #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
    trials: Option<Spanned<u64>>,
    #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
    iterations: Option<Spanned<u64>>,
    #[serde(default, deserialize_with = "crate::scenario::whole::spanned")]
    trace_bootstrap: Option<Spanned<usize>>,
    #[serde(default, deserialize_with = "crate::scenario::whole::plain")]
    seed: Option<u64>,
    #[serde(default)]
    analytic: bool,
    study: Option<Spanned<Vec<StudyFile>>>,
    train: Option<Spanned<Vec<TrainFile>>>,
    figure: Option<Vec<FigureFile>>,
    plan: Option<Vec<Spanned<toml::Table>>>,
}

/// A figure of a study: where it goes (relative to the scenario's directory),
/// what it shows and how.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureSpec {
    /// File name, `.png`, `.svg` or `.pdf`.
    pub file: String,
    /// What the y axis shows.
    pub metric: Metric,
    /// Size, dpi, font size, heading and y scale.
    pub style: FigureStyle,
}

/// A top-level `[[figure]]`: one metric of several studies on one axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlay {
    /// Where and how.
    pub figure: FigureSpec,
    /// The studies it draws, as indices into [`Scenario::studies`], in the
    /// order given.
    pub studies: Vec<usize>,
}

/// The file a figure's plotted series are written to, beside it:
/// `<figure file>.csv` (`speedup.png.csv`), so that no two figures share one.
pub fn figure_data_file(figure: &str) -> String {
    format!("{figure}.csv")
}

/// One validated study of a scenario.
#[derive(Debug, Clone)]
pub struct ScenarioStudy {
    /// Names the output files.
    pub label: String,
    /// What to simulate.
    pub study: Study,
    /// The schemes as listed.
    pub kinds: Vec<SchemeKind>,
    /// The parameter lists as given.
    pub ranges: Ranges,
    /// Values the schemes do not admit.
    pub skipped: Vec<String>,
    /// Exact values only.
    pub analytic: bool,
    /// Bootstrap replicates of a trace's steps that widen the intervals
    /// (`trace_bootstrap`; see [`gcsim::engine::bootstrap`]), where any run.
    pub trace_bootstrap: Option<usize>,
    /// Figures to draw.
    pub figures: Vec<FigureSpec>,
    /// The unit of the times (`time_unit`), where given.
    pub time_unit: Option<gcsim::units::TimeUnit>,
}

impl ScenarioStudy {
    /// The formats of a study's result files.
    pub const RESULT_FORMATS: [Format; 2] = [Format::Csv, Format::Json];

    /// The name of the study's result file in `format`: `<label>.<format>`.
    pub fn result_file(&self, format: Format) -> String {
        result_file(&self.label, format)
    }

    /// Every file the study writes: its results, then its figures and
    /// their plotted series.
    pub fn outputs(&self) -> Vec<String> {
        let results = Self::RESULT_FORMATS.map(|format| self.result_file(format));
        let figures = self
            .figures
            .iter()
            .flat_map(|f| [f.file.clone(), figure_data_file(&f.file)]);
        results.into_iter().chain(figures).collect()
    }
}

fn result_file(label: &str, format: Format) -> String {
    format!("{label}.{format}")
}

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Names the output directory.
    pub name: String,
    /// What the study is about.
    pub description: Option<String>,
    /// The studies, in file order.
    pub studies: Vec<ScenarioStudy>,
    /// The training studies, in file order; they run after the studies.
    pub trains: Vec<ScenarioTrain>,
    /// The `[[figure]]` overlays, drawn once their studies have run.
    pub overlays: Vec<Overlay>,
    /// The `[[plan]]` searches, in file order; they run after the trains.
    pub plans: Vec<ScenarioPlan>,
}

/// A file-name-safe identifier.
fn safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !s.starts_with('.')
}

impl Scenario {
    /// Reads and validates a scenario file; `trials` overrides the trials
    /// of its studies (not the repeats of its `[[train]]` tables).
    pub fn from_file(path: &Path, trials: Option<u64>) -> Result<Self, ScenarioError> {
        let fail = |message: String| ScenarioError {
            file: path.to_path_buf(),
            line: None,
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| fail(format!("cannot read the scenario: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            fail(format!(
                "the scenario is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        if text.trim().is_empty() {
            return Err(fail(
                "the scenario is empty; it needs at least name, n and one [[study]], [[train]] or [[plan]]".into(),
            ));
        }
        Self::from_str(path, &text, trials)
    }

    /// Validates a scenario given as text; `path` names it in errors, and
    /// relative paths in it (traces, data) start from its directory.
    pub fn from_str(path: &Path, text: &str, trials: Option<u64>) -> Result<Self, ScenarioError> {
        let src = Source { path, text };
        let file: ScenarioFile = match toml::from_str(text) {
            Ok(f) => f,
            Err(e) => {
                let message = e.message().trim().replace('\n', " ");
                // toml names the key of an unknown field, not of a bad value
                // or a duplicate: name it from the source.
                let header = e.span().and_then(|s| src.table_header_at(s.start));
                let message = match (header, e.span().and_then(|s| src.key_at(s.start))) {
                    // `[figure]` where `[[figure]]` is meant: one table for a list.
                    (Some(table), _) if message.contains("expected a sequence") => {
                        format!("key `{table}`: a list of tables: write [[{table}]], not [{table}]")
                    }
                    (_, Some(key))
                        if !message.starts_with("unknown field") && !message.starts_with("missing field") =>
                    {
                        format!("key `{key}`: {message}")
                    }
                    _ => message,
                };
                return src.err(e.span(), message);
            }
        };
        if !safe_name(file.name.get_ref()) {
            return src.err(
                Some(file.name.span()),
                format!(
                    "key `name`: `{}` must be letters, digits, '-', '_' or '.', and not start with '.'",
                    file.name.get_ref()
                ),
            );
        }
        let studies = file.study.as_ref().map_or(0, |s| s.get_ref().len());
        let plans = file.plan.as_ref().map_or(0, Vec::len);
        if studies + file.train.as_ref().map_or(0, |t| t.get_ref().len()) + plans == 0 {
            let span = file.study.as_ref().map(|s| s.span());
            return src.err(
                span.or(file.train.as_ref().map(|t| t.span())),
                "the scenario needs at least one [[study]], [[train]] or [[plan]]",
            );
        }
        let trials_flag = trials;
        let trials = match (trials, &file.trials) {
            (Some(t), _) => t,
            (None, Some(t)) => *t.get_ref(),
            (None, None) => 100_000,
        };
        src.file_layout(&file)?;
        let mut taken = Taken::default();
        let mut studies = Vec::new();
        for st in file.study.iter().flat_map(|s| s.get_ref()) {
            studies.push(study(&src, &file, st, trials, &mut taken)?);
        }
        let mut trains = Vec::new();
        for tr in file.train.iter().flat_map(|t| t.get_ref()) {
            trains.push(train::train(&src, &file, tr, &mut taken)?);
        }
        let mut overlays = Vec::new();
        for f in file.figure.iter().flatten() {
            overlays.push(overlay(&src, f, &studies, &mut taken)?);
        }
        let mut plans = Vec::new();
        if let Some(tables) = &file.plan {
            let top: toml::Table = toml::from_str(src.text).map_err(|e| ScenarioError {
                file: path.to_path_buf(),
                line: None,
                message: e.message().to_string(),
            })?;
            for table in tables {
                plans.push(plan::plan(&src, &top, table, trials_flag, &mut taken)?);
            }
        }
        Ok(Scenario {
            name: file.name.into_inner(),
            description: file.description,
            studies,
            trains,
            overlays,
            plans,
        })
    }
}

/// One `[[study]]` table, validated; its label and files are recorded in `taken`.
fn study(
    src: &Source,
    file: &ScenarioFile,
    st: &StudyFile,
    trials: u64,
    taken: &mut Taken,
) -> Result<ScenarioStudy, ScenarioError> {
    let label = src.label(&st.label, "study", taken)?;
    let owner = format!("study `{label}`");
    let hybrid = src.layout(
        parallel::parallel_keys!(file),
        parallel::parallel_keys!(st),
        [file.n.as_ref(), st.n.as_ref()],
    )?;
    let ranks = hybrid.as_ref().map(|h| &h.ranks);
    let cluster = src.cluster(
        &cluster_keys!(file, file.n.as_ref()),
        &cluster_keys!(st, ranks.or(st.n.as_ref())),
        &st.label,
    )?;
    let replicas = hybrid.as_ref().map_or(cluster.n, |h| h.parallel.layout.dp);
    let grid = src.grid(replicas, &grid_keys!(st), &st.label, &owner)?;
    let seed = file.seed.unwrap_or(0);
    let study = match src.base_study(hybrid.as_ref(), cluster, grid.expanded.schemes, trials, seed) {
        Ok(s) => s,
        Err(e) => {
            let span = file.trials.as_ref().map_or(st.label.span(), |t| t.span());
            return src.study_error(file, st, e, span, &owner);
        }
    };
    let iterations = st.iterations.as_ref().or(file.iterations.as_ref());
    let study = match study.with_iterations(iterations.map_or(1, |t| *t.get_ref())) {
        Ok(s) => s,
        Err(e) => {
            let span = iterations.map_or(st.label.span(), |t| t.span());
            return src.err(Some(span), format!("{owner}: {e}"));
        }
    };
    let (aggregation, time_unit) = src.aggregation(
        &collective::collective_keys!(file),
        &collective::collective_keys!(st),
        &st.label,
    )?;
    if let Some(u) = time_unit.filter(|&u| u != gcsim::units::TimeUnit::Seconds && study.workers().is_measured()) {
        let span = st.time_unit.as_ref().or(file.time_unit.as_ref()).map(|t| t.span());
        return src.err(
            span,
            format!("{owner}: key `time_unit`: a trace's times are in seconds; time_unit = \"{}\" is for a law written in {}", u.symbol(), u.words()),
        );
    }
    let study = match study.with_aggregation(aggregation) {
        Ok(s) => s,
        Err(e) => {
            let span = st.aggregation.as_ref().or(file.aggregation.as_ref());
            return src.study_error(file, st, e, span.map_or(st.label.span(), |a| a.span()), &owner);
        }
    };
    let analytic = st.analytic.unwrap_or(file.analytic);
    if let (true, Some(h)) = (analytic, &hybrid) {
        return src.err(
            Some(h.ranks.span()),
            format!("{owner}: key `analytic`: a pipeline's time is a max-plus expression of every rank's draws, with no exact law; drop `analytic` to simulate the layout"),
        );
    }
    let trace_bootstrap = trace_bootstrap(src, file, st, &study, analytic, &owner)?;
    for format in ScenarioStudy::RESULT_FORMATS {
        src.claim(taken, &result_file(&label, format), &owner, "label", st.label.span())?;
    }
    let mut figures = Vec::new();
    let deadlines = grid.ranges.timeout.as_ref().map_or(0, |l| l.values.len());
    let axes = crate::plot::sweep::axes_of(grid.kinds.iter().copied(), deadlines);
    if let (Some(f), Err(e)) = (st.figures.first(), axes) {
        return src.err(Some(f.file.span()), format!("{owner}: {e}"));
    }
    for f in &st.figures {
        if let Some(studies) = &f.studies {
            return src.err(
                Some(studies.span()),
                format!("{owner}: key `studies`: a study's figure draws that study; to draw several studies on one axis, use a top-level [[figure]] with `studies`"),
            );
        }
        figures.push(figure_spec(src, f, &owner, taken)?);
    }
    Ok(ScenarioStudy {
        label,
        study,
        kinds: grid.kinds,
        ranges: grid.ranges,
        skipped: grid.expanded.skipped,
        analytic,
        trace_bootstrap,
        figures,
        time_unit,
    })
}

/// The study's bootstrap replicates of its trace (`trace_bootstrap`, from
/// the table or the file), `None` when off; an error when the study has no
/// trace, is analytic, or would draw more than the limit.
fn trace_bootstrap(
    src: &Source,
    file: &ScenarioFile,
    st: &StudyFile,
    study: &Study,
    analytic: bool,
    owner: &str,
) -> Result<Option<usize>, ScenarioError> {
    let given = st.trace_bootstrap.as_ref().or(file.trace_bootstrap.as_ref());
    let replicates = match gcsim::engine::bootstrap::replicates(given.map(|b| *b.get_ref()), study.workers(), analytic)
    {
        Ok(b) => (b >= 2).then_some(b),
        Err(e) => {
            use gcsim::engine::bootstrap::ReplicatesError;
            let reason = match e {
                ReplicatesError::NoTrace => {
                    "resamples a trace's recorded steps: it needs dist = \"trace:path=FILE\" or \"replay:path=FILE\""
                }
                ReplicatesError::One => "1 estimates no spread; accepted: 0 (off) or a whole number >= 2",
                ReplicatesError::Analytic => "widens Monte Carlo intervals, and analytic = true has none",
            };
            return src.err(
                given.map(|b| b.span()),
                format!("{owner}: key `trace_bootstrap` {reason}"),
            );
        }
    };
    if let Some(b) = replicates {
        let draws = gcsim::engine::bootstrap::total_draws(study, b);
        if draws > u128::from(gcsim::study::MAX_TOTAL_DRAWS) {
            return src.err(
                Some(given.map_or(st.label.span(), |b| b.span())),
                format!(
                    "{owner}: the study and its {b} bootstrap replicates of its trace take {draws} worker draws, more than the limit of {} (about a day on two cores); lower `trials` or set `trace_bootstrap` lower (0: off)",
                    gcsim::study::MAX_TOTAL_DRAWS
                ),
            );
        }
    }
    Ok(replicates)
}

#[cfg(test)]
mod tests;
