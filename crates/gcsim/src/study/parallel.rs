//! A study of a hybrid-parallel job (see [`crate::parallel`]): its ranks
//! are the study's workers, its data-parallel replicas what the schemes
//! code across.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Decoder, MAX_DRAWS_PER_TRIAL, Study, StudyError, Workers};
use crate::comm::Link;
use crate::load::LoadModel;
use crate::parallel::{Layout, Parallel, Schedule};
use crate::param::Param;
use crate::scheme::{Params, Scheme, SchemeKind};

/// What does not go with a hybrid-parallel layout.
#[derive(Debug, Clone, PartialEq)]
pub enum ParallelConflict {
    /// A parameter of the layout out of its range.
    Range(Param, String),
    /// A scheme that does not code across replicas here.
    Scheme(SchemeKind),
    /// A scheme whose load times M is not a whole number of microbatches.
    Microbatches {
        /// The scheme.
        scheme: String,
        /// Its load.
        load: f64,
        /// M.
        microbatches: usize,
    },
    /// A replayed trace (one recorded time per worker and step).
    Replay,
    /// A load model other than the default (the load is microbatches).
    LoadModel,
    /// The rank decoder, a master's transfers, shared link or decoding.
    Master(Param),
    /// Too many draws per trial.
    TooLarge(u64),
}

impl Study {
    /// Validates a study of the hybrid-parallel job `parallel` on `workers`
    /// (one per rank, D·P·T of them), with `schemes` built for its D
    /// replicas. Give the communication model, the decoder and the
    /// aggregation after it: [`Study::with_aggregation`] checks what goes
    /// with the layout.
    pub fn hybrid(
        parallel: Parallel,
        workers: Workers,
        schemes: Vec<Scheme>,
        trials: u64,
        seed: u64,
    ) -> Result<Self, StudyError> {
        let conflict = StudyError::UnderParallel;
        parallel
            .check()
            .map_err(|(param, reason)| conflict(ParallelConflict::Range(param, reason)))?;
        let replicas = parallel.layout.dp;
        assert!(
            schemes.iter().all(|s| s.n() == replicas),
            "schemes are built for the layout's replicas"
        );
        if matches!(workers, Workers::Replay(_)) {
            return Err(conflict(ParallelConflict::Replay));
        }
        for s in &schemes {
            if !matches!(
                s.kind(),
                SchemeKind::Uncoded
                    | SchemeKind::Ignore
                    | SchemeKind::Frc
                    | SchemeKind::Crc
                    | SchemeKind::Mds
                    | SchemeKind::Timeout
            ) {
                return Err(conflict(ParallelConflict::Scheme(s.kind())));
            }
            let m = microbatches_of(s, parallel.microbatches)?;
            if parallel.schedule.chunks() > 1 && !m.is_multiple_of(parallel.layout.pp) {
                let reason = format!(
                    "{}: {s} gives each replica {m} microbatches, not a multiple of pp={} as {} needs; choose it so that they are",
                    parallel.microbatches,
                    parallel.layout.pp,
                    parallel.schedule.name()
                );
                return Err(conflict(ParallelConflict::Range(Param::Microbatches, reason)));
            }
        }
        let ranks = parallel.layout.ranks();
        let uncoded = Scheme::new(SchemeKind::Uncoded, ranks, Params::default()).expect("uncoded is valid for every n");
        let base = Self::with_workers(ranks, workers, LoadModel::Fixed, vec![uncoded], trials, seed)?;
        let study = Self {
            schemes,
            parallel: Some(Arc::new(parallel)),
            ..base
        };
        let per_trial = study.draws_per_trial();
        if per_trial > MAX_DRAWS_PER_TRIAL {
            return Err(conflict(ParallelConflict::TooLarge(per_trial)));
        }
        study.check_work()?;
        Ok(study)
    }

    /// The hybrid-parallel layout, if the study is one.
    pub fn parallel(&self) -> Option<&Parallel> {
        self.parallel.as_deref()
    }

    /// The n the schemes are built for: the replicas of a hybrid-parallel
    /// job, the workers otherwise.
    pub fn scheme_n(&self) -> usize {
        self.parallel.as_ref().map_or(self.n, |p| p.layout.dp)
    }

    /// Each configuration's microbatches per replica (the schemes', then
    /// the uncoded baseline's), under a layout.
    pub fn slot_microbatches(&self) -> Option<Vec<usize>> {
        let p = self.parallel.as_ref()?;
        let baseline = self.baseline();
        let all = self.schemes.iter().chain(std::iter::once(&baseline));
        Some(
            all.map(|s| microbatches_of(s, p.microbatches).expect("checked"))
                .collect(),
        )
    }

    /// Worker draws per trial of a layout: each rank's per microbatch of
    /// the most, and each replica's microbatch works.
    pub(super) fn parallel_draws(&self) -> Option<u64> {
        let p = self.parallel.as_ref()?;
        let most = self.slot_microbatches()?.into_iter().max().unwrap_or(1) as u64;
        let works = if p.microbatch_work.is_some() {
            p.layout.dp as u64
        } else {
            0
        };
        Some((self.n as u64 + works).saturating_mul(most))
    }

    /// What a master's model adds that a layout does not take.
    pub(super) fn check_parallel(&self) -> Result<(), StudyError> {
        if self.parallel.is_none() {
            return Ok(());
        }
        let conflict = |c| Err(StudyError::UnderParallel(c));
        if self.load_model != LoadModel::Fixed {
            return conflict(ParallelConflict::LoadModel);
        }
        if self.decoder == Decoder::Rank {
            return conflict(ParallelConflict::Master(Param::Decoder));
        }
        if self.comm.transfers() {
            return conflict(ParallelConflict::Master(Param::CommTime));
        }
        if self.comm.link == Link::Shared {
            return conflict(ParallelConflict::Master(Param::Link));
        }
        if self.comm.decode_time != 0.0 {
            return conflict(ParallelConflict::Master(Param::DecodeTime));
        }
        Ok(())
    }
}

/// The microbatches per replica of `scheme` when the uncoded job runs M:
/// its load times M, which must be whole.
fn microbatches_of(scheme: &Scheme, microbatches: usize) -> Result<usize, StudyError> {
    let m = scheme.load() * microbatches as f64;
    if m.fract() != 0.0 || m < 1.0 || m > crate::parallel::MAX_MICROBATCHES as f64 {
        return Err(StudyError::UnderParallel(ParallelConflict::Microbatches {
            scheme: scheme.to_string(),
            load: scheme.load(),
            microbatches,
        }));
    }
    Ok(m as usize)
}

/// A layout as recorded in shard files, laws in their command-line syntax.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct ParallelRecord {
    dp: usize,
    pp: usize,
    tp: usize,
    microbatches: usize,
    schedule: String,
    backward_ratio: f64,
    p2p_time: f64,
    stage_work: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    microbatch_work: Option<String>,
    optimizer_time: f64,
}

impl ParallelRecord {
    pub(super) fn of(p: &Parallel) -> Self {
        Self {
            dp: p.layout.dp,
            pp: p.layout.pp,
            tp: p.layout.tp,
            microbatches: p.microbatches,
            schedule: p.schedule.name().to_string(),
            backward_ratio: p.backward_ratio,
            p2p_time: p.p2p_time,
            stage_work: p.stage_work.to_vec(),
            microbatch_work: p.microbatch_work.as_ref().map(ToString::to_string),
            optimizer_time: p.optimizer_time,
        }
    }

    /// The layout, checked as the command line checks it.
    pub(super) fn parallel(&self) -> Result<Parallel, String> {
        let layout = Layout {
            dp: self.dp,
            pp: self.pp,
            tp: self.tp,
        };
        let ranks = self.dp.checked_mul(self.pp).and_then(|v| v.checked_mul(self.tp));
        if self.dp == 0 || self.pp == 0 || self.tp == 0 || ranks.is_none_or(|r| r > crate::parallel::MAX_RANKS) {
            return Err(format!("parallel: the layout {layout} is out of range"));
        }
        let microbatch_work = match &self.microbatch_work {
            Some(text) => Some(
                text.parse::<crate::dist::Dist>()
                    .map_err(|e| format!("parallel: microbatch_work: {e}"))?,
            ),
            None => None,
        };
        let parallel = Parallel {
            schedule: Schedule::parse(&self.schedule).map_err(|e| format!("parallel: schedule: {e}"))?,
            backward_ratio: self.backward_ratio,
            p2p_time: self.p2p_time,
            stage_work: self.stage_work.clone().into(),
            microbatch_work,
            optimizer_time: self.optimizer_time,
            ..Parallel::new(layout, self.microbatches)
        };
        parallel
            .check()
            .map_err(|(param, reason)| format!("parallel: {param}: {reason}"))?;
        Ok(parallel)
    }
}
