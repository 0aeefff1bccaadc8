//! Who the workers are: i.i.d. draws of one law, classes of workers, or
//! measured times (a trace bootstrapped or replayed step by step).
//!
//! One description serves every front end: [`Workers::from_dist`] reads a
//! `dist` value (`exp:rate=1`, `trace:path=FILE`, `replay:path=FILE`, with
//! paths relative to a base directory: the working directory for flags, the
//! file's directory for scenario files), [`parse_class`] a `COUNT:DIST`
//! class, `Display` writes them back, and serde records them in shard files.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

use crate::dist::{Dist, DistError};
use crate::trace::{Trace, TraceError};

/// Who the workers are: where each worker's time comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Workers {
    /// n independent workers of one law.
    Iid(Dist),
    /// Classes of workers in index order (`count` workers of each law, the
    /// first class first), so that frc's groups of consecutive workers see
    /// the layout; with `shuffle`, a uniformly random placement of the same
    /// classes in every trial.
    Classes {
        /// `(count, law)` per class.
        classes: Vec<(usize, Dist)>,
        /// Random placement per trial.
        shuffle: bool,
    },
    /// Each worker's time bootstrapped from all recorded times of a trace.
    Trace(Arc<Trace>),
    /// Each trial replays one recorded step: the workers take that step's
    /// recorded times (drawn with replacement among the trace's workers
    /// when n differs from their number), so correlated and persistent
    /// stragglers stay in.
    Replay(Arc<Trace>),
}

/// Why a `dist` or `COUNT:DIST` value does not describe workers.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum WorkersError {
    /// A law that does not parse or is out of range.
    #[error(transparent)]
    Law(#[from] DistError),
    /// `trace:` or `replay:` without a path.
    #[error("`{text}` needs the key `path` (e.g. `{prefix}path=data/trace-llm-8w.csv`)")]
    NoPath {
        /// The value given.
        text: String,
        /// `trace:` or `replay:`.
        prefix: &'static str,
    },
    /// A trace file that cannot be used.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A replayed trace with too few complete steps to sample from.
    #[error(
        "{file}: replay draws whole steps, and only {steps} step(s) have a time for every worker ({dropped} dropped for a missing worker); it needs at least {MIN_REPLAY_STEPS}: complete the steps, or use trace:path= to draw the times independently"
    )]
    TooFewSteps {
        /// The file.
        file: String,
        /// Complete steps.
        steps: usize,
        /// Steps dropped.
        dropped: usize,
    },
    /// A trace's `scale=` that is not a positive number.
    #[error("trace scale `{0}` is out of range; accepted: a finite number > 0 (e.g. scale=0.5)")]
    BadScale(String),
    /// A class without its `COUNT:`.
    #[error("`{0}` is not COUNT:DIST (e.g. 90:exp:rate=1)")]
    NotClass(String),
    /// A class count that is not a whole number.
    #[error("`{0}` is not a whole number; accepted: COUNT:DIST with COUNT >= 1")]
    Count(String),
    /// A class of no workers.
    #[error("`{0}`: a class needs at least 1 worker")]
    EmptyClass(String),
    /// Correlated groups within one class.
    #[error(
        "`{0}`: group, p_group and group_slowdown apply to the whole cluster, not to a class; give them in one law for the whole cluster instead of classes (a class may have p_slow, slowdown and persist)"
    )]
    GroupInClass(String),
}

/// Fewest complete steps a replay samples from: each trial draws one whole
/// step, so a handful of steps is a handful of distinct outcomes.
pub(crate) const MIN_REPLAY_STEPS: usize = 5;

impl Workers {
    /// Notes on how the workers were read (steps a trace dropped).
    pub fn notes(&self) -> Vec<String> {
        match self {
            Workers::Trace(t) | Workers::Replay(t) => t.dropped_note().into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The workers of a `dist` value: a law (i.i.d. workers), or
    /// `trace:path=FILE` / `replay:path=FILE` with FILE relative to `base`.
    pub fn from_dist(text: &str, base: &Path) -> Result<Self, WorkersError> {
        for (prefix, replay) in [("trace:", false), ("replay:", true)] {
            // The name in any case, as the laws' names.
            let named = text.get(..prefix.len()).is_some_and(|p| p.eq_ignore_ascii_case(prefix));
            if let Some(rest) = text.get(prefix.len()..).filter(|_| named) {
                let Some((path, scale)) = rest
                    .strip_prefix("path=")
                    .map(split_scale)
                    .transpose()?
                    .filter(|(path, _)| !path.is_empty())
                else {
                    return Err(WorkersError::NoPath {
                        text: text.to_string(),
                        prefix,
                    });
                };
                let trace = Trace::from_file(&base.join(path))?;
                let trace = Arc::new(match scale {
                    Some(f) => trace.scaled(f),
                    None => trace,
                });
                if replay && trace.steps() < MIN_REPLAY_STEPS {
                    return Err(WorkersError::TooFewSteps {
                        file: trace.file().to_string(),
                        steps: trace.steps(),
                        dropped: trace.dropped().0,
                    });
                }
                return Ok(if replay {
                    Workers::Replay(trace)
                } else {
                    Workers::Trace(trace)
                });
            }
        }
        Ok(Workers::Iid(text.parse::<Dist>()?))
    }

    /// The caveat of replaying a trace at a cluster size it did not record:
    /// the n workers of a trial are drawn with replacement from one recorded
    /// step's workers.
    pub fn resample_note(&self, n: usize) -> Option<String> {
        match self {
            Workers::Replay(t) if t.workers() != n => Some(format!(
                "replay at n={n} from a trace of {} workers: each trial's {n} workers are drawn with replacement from one recorded step's {}; this assumes the recorded workers represent the {} cluster and keeps their step-wide slowdowns{}",
                t.workers(),
                t.workers(),
                if n > t.workers() { "larger" } else { "smaller" },
                if n > t.workers() {
                    ", but repeats workers (a repeated straggler straggles twice)"
                } else {
                    ""
                }
            )),
            _ => None,
        }
    }

    /// A bootstrap replicate of measured workers: the trace's steps drawn
    /// with replacement in runs of `block` ([`Trace::resample_steps`]); a
    /// law is returned as it is.
    pub(crate) fn resample_steps<R: rand::Rng + ?Sized>(&self, block: usize, rng: &mut R) -> Self {
        match self {
            Workers::Trace(t) => Workers::Trace(Arc::new(t.resample_steps(block, rng))),
            Workers::Replay(t) => Workers::Replay(Arc::new(t.resample_steps(block, rng))),
            other => other.clone(),
        }
    }

    /// The recorded steps of a trace.
    pub fn recorded_steps(&self) -> Option<usize> {
        match self {
            Workers::Trace(t) | Workers::Replay(t) => Some(t.steps()),
            _ => None,
        }
    }

    /// Whether the times are measured (a trace, in seconds) rather than a law.
    pub fn is_measured(&self) -> bool {
        matches!(self, Workers::Trace(_) | Workers::Replay(_))
    }

    /// The same workers with every time multiplied by `factor` > 0: a law
    /// scaled, every class's law scaled, or a trace's recorded times.
    pub fn scaled(&self, factor: f64) -> Result<Self, WorkersError> {
        Ok(match self {
            Workers::Iid(d) => Workers::Iid(d.scaled(factor)?),
            Workers::Classes { classes, shuffle } => Workers::Classes {
                classes: classes
                    .iter()
                    .map(|(c, d)| Ok((*c, d.scaled(factor)?)))
                    .collect::<Result<_, DistError>>()?,
                shuffle: *shuffle,
            },
            Workers::Trace(t) => Workers::Trace(Arc::new(t.scaled(factor))),
            Workers::Replay(t) => Workers::Replay(Arc::new(t.scaled(factor))),
        })
    }

    /// The law of worker `i` of `n`, where each worker has one.
    pub fn law_of(&self, i: usize) -> Option<&Dist> {
        match self {
            Workers::Iid(d) => Some(d),
            Workers::Classes { classes, .. } => {
                let mut start = 0;
                classes.iter().find_map(|(count, d)| {
                    start += count;
                    (i < start).then_some(d)
                })
            }
            Workers::Trace(_) | Workers::Replay(_) => None,
        }
    }

    /// The polynomial tail index of worker `i`'s time: the Pareto shape,
    /// infinite for the light-tailed laws and for recorded times.
    pub(crate) fn tail_index(&self, i: usize) -> f64 {
        self.law_of(i).map_or(f64::INFINITY, Dist::tail_index)
    }
}

/// A trace's `FILE[,scale=F]`: the path, and the factor its times are
/// multiplied by (F > 0, finite), where given.
fn split_scale(rest: &str) -> Result<(&str, Option<f64>), WorkersError> {
    let Some((path, f)) = rest.rsplit_once(",scale=") else {
        return Ok((rest, None));
    };
    match crate::range::real(f) {
        Some(x) if x.is_finite() && x > 0.0 => Ok((path, Some(x))),
        _ => Err(WorkersError::BadScale(f.to_string())),
    }
}

/// A trace's `FILE` with `,scale=F` where its times are scaled.
fn path_with_scale(t: &Trace) -> String {
    if t.scale() == 1.0 {
        t.file().to_string()
    } else {
        format!("{},scale={}", t.file(), t.scale())
    }
}

/// A class of workers, `COUNT:DIST` (e.g. `90:exp:rate=1`), COUNT >= 1.
pub fn parse_class(text: &str) -> Result<(usize, Dist), WorkersError> {
    let (count, law) = text
        .split_once(':')
        .ok_or_else(|| WorkersError::NotClass(text.to_string()))?;
    let count = crate::range::whole(count)
        .ok()
        .and_then(|c| usize::try_from(c).ok())
        .ok_or_else(|| WorkersError::Count(count.to_string()))?;
    if count == 0 {
        return Err(WorkersError::EmptyClass(text.to_string()));
    }
    let law = law.parse::<Dist>()?;
    if law.groups().is_some() {
        return Err(WorkersError::GroupInClass(text.to_string()));
    }
    Ok((count, law))
}

impl fmt::Display for Workers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Workers::Iid(d) => write!(f, "{d}"),
            Workers::Classes { classes, shuffle } => {
                let parts: Vec<String> = classes.iter().map(|(c, d)| format!("{c}:{d}")).collect();
                write!(f, "{}", parts.join(" + "))?;
                if *shuffle {
                    write!(f, " (shuffled)")?;
                }
                Ok(())
            }
            Workers::Trace(t) => write!(f, "trace:path={}", path_with_scale(t)),
            Workers::Replay(t) => write!(f, "replay:path={}", path_with_scale(t)),
        }
    }
}

/// The recorded form: laws in `--dist` syntax, traces by their path (read
/// again when the record is read).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WorkersRecord {
    Iid(String),
    Classes {
        classes: Vec<(usize, String)>,
        shuffle: bool,
    },
    Trace(String),
    Replay(String),
}

impl Serialize for Workers {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let record = match self {
            Workers::Iid(d) => WorkersRecord::Iid(d.to_string()),
            Workers::Classes { classes, shuffle } => WorkersRecord::Classes {
                classes: classes.iter().map(|(c, d)| (*c, d.to_string())).collect(),
                shuffle: *shuffle,
            },
            Workers::Trace(t) => WorkersRecord::Trace(path_with_scale(t)),
            Workers::Replay(t) => WorkersRecord::Replay(path_with_scale(t)),
        };
        record.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Workers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let law = |s: &str| s.parse::<Dist>().map_err(|e| D::Error::custom(format!("dist: {e}")));
        let trace = |p: &str| {
            let (path, scale) = split_scale(p).map_err(D::Error::custom)?;
            let t = Trace::from_file(Path::new(path)).map_err(D::Error::custom)?;
            Ok(Arc::new(match scale {
                Some(f) => t.scaled(f),
                None => t,
            }))
        };
        Ok(match WorkersRecord::deserialize(d)? {
            WorkersRecord::Iid(s) => Workers::Iid(law(&s)?),
            WorkersRecord::Classes { classes, shuffle } => Workers::Classes {
                classes: classes
                    .iter()
                    .map(|(c, s)| Ok((*c, law(s)?)))
                    .collect::<Result<_, D::Error>>()?,
                shuffle,
            },
            WorkersRecord::Trace(p) => Workers::Trace(trace(&p)?),
            WorkersRecord::Replay(p) => Workers::Replay(trace(&p)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_laws_traces_and_classes() {
        let here = Path::new("");
        assert_eq!(
            Workers::from_dist("exp:rate=2", here).unwrap(),
            Workers::Iid(Dist::exp(2.0).unwrap())
        );
        let err = Workers::from_dist("replay:path=", here).unwrap_err();
        assert!(err.to_string().contains("needs the key `path`"), "{err}");
        let err = Workers::from_dist("trace:path=none.csv", Path::new("some/dir")).unwrap_err();
        assert!(err.to_string().starts_with("some/dir/none.csv: cannot read"), "{err}");
        assert_eq!(parse_class("3:exp:rate=1").unwrap(), (3, Dist::exp(1.0).unwrap()));
        for (bad, says) in [
            ("x", "is not COUNT:DIST"),
            ("x:exp:rate=1", "is not a whole number"),
            ("0:exp:rate=1", "at least 1 worker"),
            ("2:exp:rate=-1", "out of range"),
        ] {
            let e = parse_class(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn each_worker_has_its_class_law() {
        let (exp, pareto) = (Dist::exp(1.0).unwrap(), Dist::pareto(1.0, 0.5).unwrap());
        let w = Workers::Classes {
            classes: vec![(3, exp), (2, pareto)],
            shuffle: false,
        };
        let laws: Vec<Option<&Dist>> = (0..6).map(|i| w.law_of(i)).collect();
        assert_eq!(
            laws,
            [Some(&exp), Some(&exp), Some(&exp), Some(&pareto), Some(&pareto), None]
        );
        let tails: Vec<f64> = (0..5).map(|i| w.tail_index(i)).collect();
        assert_eq!(tails, [f64::INFINITY, f64::INFINITY, f64::INFINITY, 0.5, 0.5]);
        assert_eq!(Workers::Iid(pareto).law_of(7), Some(&pareto));
    }

    #[test]
    fn records_round_trip() {
        for w in [
            Workers::Iid(Dist::exp(1.5).unwrap().with_stragglers(0.05, 8.0).unwrap()),
            Workers::Classes {
                classes: vec![(3, Dist::exp(1.0).unwrap()), (2, Dist::pareto(1.0, 3.0).unwrap())],
                shuffle: true,
            },
        ] {
            let text = serde_json::to_string(&w).unwrap();
            assert_eq!(serde_json::from_str::<Workers>(&text).unwrap(), w, "{text}");
        }
    }
}
