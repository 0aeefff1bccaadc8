//! The keys of a hybrid-parallel job in a scenario file: `parallel`,
//! `microbatches`, `schedule`, `backward_ratio`, `p2p_time`, `stage_work`,
//! `microbatch_work` and `optimizer_time`, as `gcsim sweep`'s flags of
//! those names; a `[[study]]` table's own keys over the file's. A layout
//! fixes the study's n (its ranks) and the n its schemes are built for
//! (its replicas); a `[[plan]]` searches the schemes across them.
//! `[[train]]` tables refuse them.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::source::{Cluster, Source};
use super::{ScenarioError, ScenarioFile, StudyFile};
use gcsim::dist::Dist;
use gcsim::load::LoadModel;
use gcsim::parallel::{Layout, Parallel, Schedule, parse_stage_work};
use gcsim::param::{Described, Param};
use gcsim::scheme::Scheme;
use gcsim::study::{ParallelConflict, Study, StudyError};

/// The keys of a pipeline job, `parallel` first.
pub(super) const KEYS: [&str; 8] = [
    "parallel",
    "microbatches",
    "schedule",
    "backward_ratio",
    "p2p_time",
    "stage_work",
    "microbatch_work",
    "optimizer_time",
];

/// The stages' work as TOML allows it: an array of numbers, or a comma
/// list as a string.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    untagged,
    expecting = "accepted: an array of numbers > 0, one per stage (e.g. [1, 1, 1, 1.25]), or a comma list as a string (e.g. \"1,1,1,1.25\")"
)]
pub(super) enum StageWork {
    Many(Vec<f64>),
    Text(String),
}

/// The pipeline's keys of one level (the file, or a `[[study]]` table).
#[derive(Clone, Copy)]
pub(super) struct ParallelKeys<'a> {
    pub(super) parallel: Option<&'a Spanned<String>>,
    pub(super) microbatches: Option<&'a Spanned<usize>>,
    pub(super) schedule: Option<&'a Spanned<String>>,
    pub(super) backward_ratio: Option<&'a Spanned<f64>>,
    pub(super) p2p_time: Option<&'a Spanned<f64>>,
    pub(super) stage_work: Option<&'a Spanned<StageWork>>,
    pub(super) microbatch_work: Option<&'a Spanned<String>>,
    pub(super) optimizer_time: Option<&'a Spanned<f64>>,
}

/// The [`ParallelKeys`] of a parsed table or file.
macro_rules! parallel_keys {
    ($t:expr) => {
        $crate::scenario::parallel::ParallelKeys {
            parallel: $t.parallel.as_ref(),
            microbatches: $t.microbatches.as_ref(),
            schedule: $t.schedule.as_ref(),
            backward_ratio: $t.backward_ratio.as_ref(),
            p2p_time: $t.p2p_time.as_ref(),
            stage_work: $t.stage_work.as_ref(),
            microbatch_work: $t.microbatch_work.as_ref(),
            optimizer_time: $t.optimizer_time.as_ref(),
        }
    };
}
pub(super) use parallel_keys;

impl<'a> ParallelKeys<'a> {
    /// Where each key sits, as [`KEYS`] lists them.
    fn spans(&self) -> [Option<Range<usize>>; 8] {
        [
            self.parallel.map(Spanned::span),
            self.microbatches.map(Spanned::span),
            self.schedule.map(Spanned::span),
            self.backward_ratio.map(Spanned::span),
            self.p2p_time.map(Spanned::span),
            self.stage_work.map(Spanned::span),
            self.microbatch_work.map(Spanned::span),
            self.optimizer_time.map(Spanned::span),
        ]
    }

    /// Where `param`'s key sits, if it is one of these and given.
    fn span_of(&self, param: Param) -> Option<Range<usize>> {
        let i = KEYS.iter().position(|&k| k == param.key())?;
        self.spans()[i].clone()
    }

    /// These keys where given, else `file`'s.
    fn or(self, file: ParallelKeys<'a>) -> ParallelKeys<'a> {
        ParallelKeys {
            parallel: self.parallel.or(file.parallel),
            microbatches: self.microbatches.or(file.microbatches),
            schedule: self.schedule.or(file.schedule),
            backward_ratio: self.backward_ratio.or(file.backward_ratio),
            p2p_time: self.p2p_time.or(file.p2p_time),
            stage_work: self.stage_work.or(file.stage_work),
            microbatch_work: self.microbatch_work.or(file.microbatch_work),
            optimizer_time: self.optimizer_time.or(file.optimizer_time),
        }
    }
}

/// A study's layout, and its ranks placed on its `parallel` key: the
/// study's n.
pub(super) struct Hybrid {
    pub(super) parallel: Parallel,
    pub(super) ranks: Spanned<usize>,
}

impl Source<'_> {
    /// The layout of a study: its own keys over the file's, `None` without
    /// `parallel`, whose other keys are then refused. `n` is the file's and
    /// the table's: the n at the layout's level or below must be its ranks
    /// (a table's own `parallel` sets its n whatever the file's).
    pub(super) fn layout<'a>(
        &self,
        file: ParallelKeys<'a>,
        own: ParallelKeys<'a>,
        n: [Option<&Spanned<usize>>; 2],
    ) -> Result<Option<Hybrid>, ScenarioError> {
        let keys = own.or(file);
        let Some(text) = keys.parallel else {
            if let Some((key, span)) = KEYS.iter().zip(keys.spans()).find_map(|(k, s)| Some((k, s?))) {
                return self.err(
                    Some(span),
                    format!("key `{key}` describes a pipeline job: give parallel = \"dp=D,pp=P,tp=T\""),
                );
            }
            return Ok(None);
        };
        let fail = |v: Range<usize>, key: &str, e: String| ScenarioError {
            file: self.path.to_path_buf(),
            line: Some(self.line_of(v.start)),
            message: format!("key `{key}`: {e}"),
        };
        let layout = Layout::parse(text.get_ref()).map_err(|e| fail(text.span(), "parallel", e))?;
        let [file_n, own_n] = n;
        let given = if own.parallel.is_some() {
            own_n
        } else {
            own_n.or(file_n)
        };
        if let Some(n) = given.filter(|n| *n.get_ref() != layout.ranks()) {
            return self.err(
                Some(n.span()),
                format!(
                    "key `n` {} but key `parallel` {layout} has {} ranks; drop `n` or make them agree",
                    n.get_ref(),
                    layout.ranks()
                ),
            );
        }
        let schedule = match keys.schedule {
            Some(v) => Some(Schedule::parse(v.get_ref()).map_err(|e| fail(v.span(), "schedule", e))?),
            None => None,
        };
        let microbatch_work = match keys.microbatch_work {
            Some(v) => {
                Some((v.get_ref().parse::<Dist>()).map_err(|e| fail(v.span(), "microbatch_work", e.to_string()))?)
            }
            None => None,
        };
        let stage_work = match keys.stage_work.map(|w| (w.span(), w.get_ref())) {
            Some((_, StageWork::Many(values))) => Some(values.clone()),
            Some((at, StageWork::Text(t))) => Some(parse_stage_work(t).map_err(|e| fail(at, "stage_work", e))?),
            None => None,
        };
        let value = |v: Option<&Spanned<f64>>, default: f64| v.map_or(default, |v| *v.get_ref());
        let defaults = Parallel::new(layout, keys.microbatches.map_or(1, |m| *m.get_ref()));
        let parallel = Parallel {
            schedule: schedule.unwrap_or(defaults.schedule),
            backward_ratio: value(keys.backward_ratio, defaults.backward_ratio),
            p2p_time: value(keys.p2p_time, defaults.p2p_time),
            stage_work: stage_work.map_or_else(|| defaults.stage_work.clone(), Into::into),
            microbatch_work,
            optimizer_time: value(keys.optimizer_time, defaults.optimizer_time),
            ..defaults
        };
        if let Err((param, reason)) = parallel.check() {
            let at = keys.span_of(param).unwrap_or(text.span());
            return self.err(Some(at), format!("key `{}` {reason}", param.key()));
        }
        Ok(Some(Hybrid {
            parallel,
            ranks: Spanned::new(text.span(), layout.ranks()),
        }))
    }

    /// The file's pipeline keys act on its `[[study]]` and `[[plan]]`
    /// tables: any of them is refused where the file has neither.
    pub(super) fn file_layout(&self, file: &ScenarioFile) -> Result<(), ScenarioError> {
        let keys = parallel_keys!(file);
        let studies = file.study.as_ref().is_some_and(|s| !s.get_ref().is_empty());
        let tables = studies || file.plan.as_ref().is_some_and(|p| !p.is_empty());
        let given = KEYS.iter().zip(keys.spans()).find_map(|(k, s)| Some((k, s?)));
        if let (false, Some((key, span))) = (tables, given) {
            return self.err(
                Some(span),
                format!(
                    "key `{key}` describes the pipeline job of [[study]] and [[plan]] tables, and the file has none"
                ),
            );
        }
        Ok(())
    }

    /// The study of `schemes` on `cluster` with its communication model: a
    /// hybrid-parallel job's under `hybrid` (the schemes built for its
    /// replicas, the load model fixed, as `gcsim sweep --parallel`), a flat
    /// cluster's otherwise.
    pub(super) fn base_study(
        &self,
        hybrid: Option<&Hybrid>,
        cluster: Cluster,
        schemes: Vec<Scheme>,
        trials: u64,
        seed: u64,
    ) -> Result<Study, StudyError> {
        let study = match hybrid {
            Some(_) if cluster.model != LoadModel::Fixed => {
                return Err(StudyError::UnderParallel(ParallelConflict::LoadModel));
            }
            Some(h) => Study::hybrid(h.parallel.clone(), cluster.workers, schemes, trials, seed)?,
            None => Study::with_workers(cluster.n, cluster.workers, cluster.model, schemes, trials, seed)?,
        };
        Ok(study.with_comm(cluster.comm))
    }

    /// `e`, an error of study `st` (`owner`), on its line: a layout's
    /// conflict on the key at fault (the table's, else the file's), spelt
    /// as keys; any other error at `fallback`.
    pub(super) fn study_error<T>(
        &self,
        file: &ScenarioFile,
        st: &StudyFile,
        e: StudyError,
        fallback: Range<usize>,
        owner: &str,
    ) -> Result<T, ScenarioError> {
        let StudyError::UnderParallel(conflict) = &e else {
            return self.err(Some(fallback), format!("{owner}: {e}"));
        };
        let param = match conflict {
            ParallelConflict::Range(param, _) | ParallelConflict::Master(param) => *param,
            ParallelConflict::Scheme(_) => Param::Scheme,
            ParallelConflict::Microbatches { .. } | ParallelConflict::TooLarge(_) => Param::Microbatches,
            ParallelConflict::Replay => Param::Dist,
            ParallelConflict::LoadModel => Param::LoadModel,
        };
        let keys = parallel_keys!(st).or(parallel_keys!(file));
        let at = (keys.span_of(param))
            .or_else(|| st.span_of(file, param))
            .or_else(|| keys.parallel.map(Spanned::span))
            .unwrap_or(fallback);
        let name = |p: Param| format!("key `{}`", p.key());
        self.err(Some(at), format!("{owner}: {}", e.describe(&name)))
    }
}

impl StudyFile {
    /// Where the key of `param` sits in the study, else in the file, for
    /// the keys a layout's conflicts name.
    fn span_of(&self, file: &ScenarioFile, param: Param) -> Option<Range<usize>> {
        fn at<T>(own: &Option<Spanned<T>>, file: &Option<Spanned<T>>) -> Option<Range<usize>> {
            own.as_ref().or(file.as_ref()).map(Spanned::span)
        }
        match param {
            Param::Scheme => Some(self.schemes.span()),
            Param::Dist => at(&self.dist, &file.dist).or_else(|| at(&self.workers, &file.workers)),
            Param::LoadModel => at(&self.load_model, &file.load_model),
            Param::CommTime => at(&self.comm_time, &file.comm_time).or_else(|| at(&self.comm_dist, &file.comm_dist)),
            Param::Link => at(&self.link, &file.link),
            Param::DecodeTime => at(&self.decode_time, &file.decode_time),
            Param::Buckets => at(&self.buckets, &file.buckets),
            _ => None,
        }
    }
}
