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
//! # dist, load_model, unit_time, n, iterations, analytic may be set per study
//! figures = [{ file = "speedup.png", metric = "speedup" }]
//! ```
//!
//! Unknown keys, bad values and missing keys are errors naming the file, the
//! line and the key. Every output has its own file name: two figures of one
//! name are refused, naming both studies, before anything runs.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::comm::{Comm, CommError, Link};
use crate::dist::Dist;
use crate::export::Format;
use crate::load::LoadModel;
use crate::param::Param;
use crate::plot::sweep::Metric;
use crate::range::{self, IntList, TimeList};
use crate::scheme::SchemeKind;
use crate::study::Study;
use crate::sweep::{self, Ranges, SweepError};
use crate::workers::{self, Workers};

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
    expecting = "accepted: a whole number >= 0 (e.g. 5), a range or list as a string (e.g. \"0..50\" or \"1,2,4\"), or an array of whole numbers (e.g. [0, 5, 10])"
)]
enum ListValue {
    Text(String),
    One(u64),
    Many(Vec<u64>),
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
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudyFile {
    label: Spanned<String>,
    schemes: Spanned<Vec<String>>,
    s: Option<Spanned<ListValue>>,
    m: Option<Spanned<ListValue>>,
    k: Option<Spanned<ListValue>>,
    d: Option<Spanned<ListValue>>,
    timeout: Option<Spanned<TimesValue>>,
    speculate_after: Option<f64>,
    speculate_factor: Option<f64>,
    parts: Option<Spanned<ListValue>>,
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
    iterations: Option<Spanned<u64>>,
    analytic: Option<bool>,
    #[serde(default)]
    figures: Vec<FigureFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    name: Spanned<String>,
    description: Option<String>,
    n: Spanned<usize>,
    dist: Option<Spanned<String>>,
    workers: Option<Spanned<Vec<String>>>,
    shuffle_placement: Option<Spanned<bool>>,
    comm_time: Option<Spanned<f64>>,
    comm_dist: Option<Spanned<String>>,
    link: Option<Spanned<String>>,
    decode_time: Option<Spanned<f64>>,
    load_model: Option<Spanned<String>>,
    unit_time: Option<f64>,
    trials: Option<Spanned<u64>>,
    iterations: Option<Spanned<u64>>,
    seed: Option<u64>,
    #[serde(default)]
    analytic: bool,
    study: Spanned<Vec<StudyFile>>,
}

/// A figure of a study: where it goes (relative to the scenario's directory)
/// and what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureSpec {
    /// File name, `.png` or `.svg`.
    pub file: String,
    /// What the y axis shows.
    pub metric: Metric,
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
    /// Figures to draw.
    pub figures: Vec<FigureSpec>,
}

impl ScenarioStudy {
    /// The formats of a study's result files.
    pub const RESULT_FORMATS: [Format; 2] = [Format::Csv, Format::Json];

    /// The name of the study's result file in `format`: `<label>.<format>`.
    pub fn result_file(&self, format: Format) -> String {
        result_file(&self.label, format)
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
}

/// A file-name-safe identifier.
fn safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !s.starts_with('.')
}

struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())].matches('\n').count() + 1
    }

    /// The key whose value or name sits at `offset`: the last `key =` on
    /// that line before it, else the key that starts there.
    fn key_at(&self, offset: usize) -> Option<&str> {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = self.text[offset..].find('\n').map_or(self.text.len(), |i| offset + i);
        let before = &self.text[start..offset];
        let head = match before.rfind('=') {
            Some(eq) => before[..eq].trim_end(),
            None => self.text[offset..end].split('=').next()?.trim_end(),
        };
        let is_key = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        let from = head
            .char_indices()
            .rev()
            .find(|&(_, c)| !is_key(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let key = &head[from..];
        (!key.is_empty()).then_some(key)
    }

    fn err<T>(&self, span: Option<std::ops::Range<usize>>, message: impl Into<String>) -> Result<T, ScenarioError> {
        Err(ScenarioError {
            file: self.path.to_path_buf(),
            line: span.map(|s| self.line_of(s.start)),
            message: message.into(),
        })
    }

    /// The communication model of the keys comm_time, comm_dist, link and
    /// decode_time; an error points at the key at fault, or at the study.
    fn comm(
        &self,
        time: Option<&Spanned<f64>>,
        dist: Option<&Spanned<String>>,
        link: Option<&Spanned<String>>,
        decode: Option<&Spanned<f64>>,
        label: &Spanned<String>,
    ) -> Result<Comm, ScenarioError> {
        let law = match dist {
            Some(d) => match d.get_ref().parse::<Dist>() {
                Ok(law) => Some(law),
                Err(e) => return self.err(Some(d.span()), format!("key `comm_dist`: {e}")),
            },
            None => None,
        };
        let link = match link {
            Some(l) => match l.get_ref().parse::<Link>() {
                Ok(link) => link,
                Err(e) => return self.err(Some(l.span()), format!("key `link`: {e}")),
            },
            None => Link::Dedicated,
        };
        Comm::new(
            time.map(|t| *t.get_ref()),
            law,
            link,
            decode.map_or(0.0, |d| *d.get_ref()),
        )
        .or_else(|e| {
            let span = match &e {
                CommError::OutOfRange {
                    param: Param::DecodeTime,
                    ..
                } => decode.map(|d| d.span()),
                _ => time.map(|t| t.span()),
            };
            self.err(span.or(Some(label.span())), e.to_string())
        })
    }

    fn list(&self, key: &str, value: &Option<Spanned<ListValue>>) -> Result<Option<IntList>, ScenarioError> {
        let Some(v) = value else { return Ok(None) };
        let text = match v.get_ref() {
            ListValue::Text(t) => t.clone(),
            ListValue::One(x) => x.to_string(),
            ListValue::Many(xs) => xs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
        };
        match range::parse(&text) {
            Ok(list) => Ok(Some(list)),
            Err(e) => self.err(Some(v.span()), format!("key `{key}`: {e}")),
        }
    }

    fn times(&self, key: &str, value: &Option<Spanned<TimesValue>>) -> Result<Option<TimeList>, ScenarioError> {
        let Some(v) = value else { return Ok(None) };
        let text = match v.get_ref() {
            TimesValue::Text(t) => t.clone(),
            TimesValue::One(x) => x.to_string(),
            TimesValue::Many(xs) => xs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
        };
        match range::parse_times(&text) {
            Ok(list) => Ok(Some(list)),
            Err(e) => self.err(Some(v.span()), format!("key `{key}`: {e}")),
        }
    }
}

impl Scenario {
    /// Reads and validates a scenario file; `trials` overrides the file's trials.
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
                "the scenario is empty; it needs at least name, n and one [[study]]".into(),
            ));
        }
        Self::from_str(path, &text, trials)
    }

    /// Validates a scenario given as text; `path` names it in errors.
    pub fn from_str(path: &Path, text: &str, trials: Option<u64>) -> Result<Self, ScenarioError> {
        let src = Source { path, text };
        let file: ScenarioFile = match toml::from_str(text) {
            Ok(f) => f,
            Err(e) => {
                let message = e.message().trim().replace('\n', " ");
                // toml names the key of an unknown field, not of a bad value
                // or a duplicate: name it from the source.
                let message = match e.span().and_then(|s| src.key_at(s.start)) {
                    Some(key) if !message.starts_with("unknown field") && !message.starts_with("missing field") => {
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
        if file.study.get_ref().is_empty() {
            return src.err(Some(file.study.span()), "the scenario needs at least one [[study]]");
        }
        let trials = match (trials, &file.trials) {
            (Some(t), _) => t,
            (None, Some(t)) => *t.get_ref(),
            (None, None) => 100_000,
        };
        let mut studies = Vec::new();
        // Each figure's file name and its study, to refuse a second writer.
        // Result files cannot clash: labels are unique, and a figure's name
        // ends in .png or .svg.
        let mut outputs: Vec<(String, String)> = Vec::new();
        for st in file.study.get_ref() {
            let label = st.label.get_ref().clone();
            if !safe_name(&label) {
                return src.err(
                    Some(st.label.span()),
                    format!("key `label`: `{label}` must be letters, digits, '-', '_' or '.', and not start with '.'"),
                );
            }
            if studies.iter().any(|s: &ScenarioStudy| s.label == label) {
                return src.err(
                    Some(st.label.span()),
                    format!("key `label`: `{label}` is used by two studies"),
                );
            }
            let n = st.n.as_ref().unwrap_or(&file.n);
            // A study's own workers or dist wins over the file's; one level may
            // not set both.
            let shuffle_key = st.shuffle_placement.as_ref().or(file.shuffle_placement.as_ref());
            let shuffle = shuffle_key.is_some_and(|s| *s.get_ref());
            let (classes, dist_text) = match (&st.workers, &st.dist) {
                (None, None) => (file.workers.as_ref(), file.dist.as_ref()),
                (w, d) => (w.as_ref(), d.as_ref()),
            };
            let workers = match (classes, dist_text) {
                (Some(c), Some(_)) => {
                    return src.err(
                        Some(c.span()),
                        "keys `workers` and `dist` do not go together: each class names its law",
                    );
                }
                (Some(c), None) => {
                    let mut list = Vec::new();
                    for item in c.get_ref() {
                        match workers::parse_class(item) {
                            Ok(class) => list.push(class),
                            Err(e) => return src.err(Some(c.span()), format!("key `workers`: {e}")),
                        }
                    }
                    Workers::Classes { classes: list, shuffle }
                }
                (None, _) if shuffle => {
                    return src.err(
                        shuffle_key.map(|s| s.span()),
                        "key `shuffle_placement`: it places `workers` classes, and this study has none; give workers = [\"COUNT:DIST\", ...] or drop it",
                    );
                }
                (None, None) => Workers::Iid(Dist::exp(1.0).expect("valid")),
                (None, Some(d)) => {
                    let base = src.path.parent().unwrap_or(Path::new(""));
                    match Workers::from_dist(d.get_ref(), base) {
                        Ok(w) => w,
                        Err(e) => return src.err(Some(d.span()), format!("key `dist`: {e}")),
                    }
                }
            };
            let model_text = st.load_model.as_ref().or(file.load_model.as_ref());
            let model_name = model_text.map_or("fixed", |m| m.get_ref().as_str());
            let model = match LoadModel::new(model_name, st.unit_time.or(file.unit_time)) {
                Ok(m) => m,
                Err(e) => return src.err(model_text.map(|m| m.span()), format!("key `load_model`: {e}")),
            };
            let mut kinds = Vec::new();
            for name in st.schemes.get_ref() {
                match name.parse::<SchemeKind>() {
                    Ok(k) => kinds.push(k),
                    Err(e) => return src.err(Some(st.schemes.span()), format!("key `schemes`: {e}")),
                }
            }
            if kinds.is_empty() {
                return src.err(Some(st.schemes.span()), "key `schemes`: list at least one scheme");
            }
            let ranges = Ranges {
                s: src.list("s", &st.s)?,
                m: src.list("m", &st.m)?,
                k: src.list("k", &st.k)?,
                d: src.list("d", &st.d)?,
                custom: None,
                timeout: src.times("timeout", &st.timeout)?,
                speculate_after: st.speculate_after,
                speculate_factor: st.speculate_factor,
                parts: src.list("parts", &st.parts)?,
            };
            if *n.get_ref() == 0 {
                return src.err(
                    Some(n.span()),
                    "key `n`: 0 is out of range; accepted: a whole number >= 1",
                );
            }
            let expanded = match sweep::expand(*n.get_ref(), &kinds, &ranges) {
                Ok(e) => e,
                Err(e) => {
                    // Point at the values at fault where they are the cause.
                    let values = [&st.s, &st.m, &st.k, &st.d, &st.parts].into_iter().flatten().next();
                    let span = match (&e, values) {
                        (SweepError::AllSkipped(_) | SweepError::Scheme(_), Some(v)) => v.span(),
                        _ => st.label.span(),
                    };
                    return src.err(Some(span), format!("study `{label}`: {e}"));
                }
            };
            let comm = src.comm(
                st.comm_time.as_ref().or(file.comm_time.as_ref()),
                st.comm_dist.as_ref().or(file.comm_dist.as_ref()),
                st.link.as_ref().or(file.link.as_ref()),
                st.decode_time.as_ref().or(file.decode_time.as_ref()),
                &st.label,
            )?;
            let study = match Study::with_workers(
                *n.get_ref(),
                workers,
                model,
                expanded.schemes,
                trials,
                file.seed.unwrap_or(0),
            ) {
                Ok(s) => s.with_comm(comm),
                Err(e) => {
                    let span = file.trials.as_ref().map_or(st.label.span(), |t| t.span());
                    return src.err(Some(span), format!("study `{label}`: {e}"));
                }
            };
            let iterations = st.iterations.as_ref().or(file.iterations.as_ref());
            let study = match study.with_iterations(iterations.map_or(1, |t| *t.get_ref())) {
                Ok(s) => s,
                Err(e) => {
                    let span = iterations.map_or(st.label.span(), |t| t.span());
                    return src.err(Some(span), format!("study `{label}`: {e}"));
                }
            };
            let mut figures = Vec::new();
            let deadlines = ranges.timeout.as_ref().map_or(0, |l| l.values.len());
            let axes = crate::plot::sweep::axes_of(kinds.iter().copied(), deadlines);
            if let (Some(f), Err(e)) = (st.figures.first(), axes) {
                return src.err(Some(f.file.span()), format!("study `{label}`: {e}"));
            }
            for f in &st.figures {
                let name = f.file.get_ref();
                let ext_ok = name.ends_with(".png") || name.ends_with(".svg");
                if !safe_name(name) || !ext_ok {
                    return src.err(
                        Some(f.file.span()),
                        format!("key `file`: `{name}` must be a plain .png or .svg file name"),
                    );
                }
                if let Some((_, other)) = outputs.iter().find(|(n, _)| n == name) {
                    return src.err(
                        Some(f.file.span()),
                        format!(
                            "key `file`: `{name}` of study `{label}` is also written by {other}; give every figure its own file name"
                        ),
                    );
                }
                outputs.push((name.clone(), format!("study `{label}`")));
                let metric = match &f.metric {
                    None => Metric::Speedup,
                    Some(m) => match m.get_ref().parse::<Metric>() {
                        Ok(m) => m,
                        Err(e) => return src.err(Some(m.span()), format!("key `metric`: {e}")),
                    },
                };
                figures.push(FigureSpec {
                    file: name.clone(),
                    metric,
                });
            }
            studies.push(ScenarioStudy {
                label,
                study,
                kinds,
                ranges,
                skipped: expanded.skipped,
                analytic: st.analytic.unwrap_or(file.analytic),
                figures,
            });
        }
        Ok(Scenario {
            name: file.name.into_inner(),
            description: file.description,
            studies,
        })
    }
}

#[cfg(test)]
mod tests;
