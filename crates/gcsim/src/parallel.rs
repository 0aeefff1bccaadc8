//! Hybrid parallelism: data-parallel replicas of pipelines of
//! tensor-parallel groups (see the guide's "Hybrid parallelism" page).
//!
//! A job of D × P × T ranks runs D replicas of one pipeline of P stages,
//! each stage a group of T tensor-parallel ranks. Rank r = (d·P + i)·T + t
//! is tensor rank t of stage i of replica d. Each rank draws one time per
//! microbatch from its law (with its straggler state for the whole
//! iteration); a microbatch's compute on a stage is the largest of its T
//! ranks' draws (the group synchronises inside every layer), scaled by the
//! stage's work and the microbatch's work, and split into a forward op of
//! 1/(1 + R) of it and a backward op of R/(1 + R). The stages run their ops
//! in their schedule's order ([`Schedule`]), each after its dependencies
//! (the previous stage's forward, the next stage's backward, each plus the
//! point-to-point time τ), and a stage's gradient is summed across the
//! replicas once its last backward ends. [`pipeline::Program`] evaluates
//! one replica's pipeline; the engine (`engine/trial/hybrid.rs`) the rest.

use std::fmt;
use std::sync::Arc;

use crate::dist::Dist;
use crate::param::Param;

pub mod pipeline;
pub mod timeline;

pub use pipeline::{Op, Program};
pub use timeline::Timeline;

/// Most ranks a layout may have (dp·pp·tp).
pub const MAX_RANKS: usize = 1 << 20;
/// Most microbatches per iteration.
pub const MAX_MICROBATCHES: usize = 1 << 16;

/// The layout of the ranks: D data-parallel replicas, P pipeline stages,
/// T tensor-parallel ranks per stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Data-parallel replicas D.
    pub dp: usize,
    /// Pipeline stages P.
    pub pp: usize,
    /// Tensor-parallel ranks per stage T.
    pub tp: usize,
}

impl Layout {
    /// The number of ranks D·P·T.
    pub fn ranks(&self) -> usize {
        self.dp * self.pp * self.tp
    }

    /// The rank of tensor rank `t` of stage `i` of replica `d`.
    #[inline]
    pub fn rank(&self, d: usize, i: usize, t: usize) -> usize {
        (d * self.pp + i) * self.tp + t
    }

    /// Parses `dp=D,pp=P,tp=T` (keys in any order; a missing key is 1).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut layout = Layout { dp: 1, pp: 1, tp: 1 };
        let mut seen = [false; 3];
        for part in text.split(',').map(str::trim) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(format!("`{part}` is not KEY=VALUE; accepted: dp=D,pp=P,tp=T"));
            };
            let index = match key.trim() {
                "dp" => 0,
                "pp" => 1,
                "tp" => 2,
                other => return Err(format!("unknown key `{other}`; accepted: dp, pp, tp")),
            };
            if std::mem::replace(&mut seen[index], true) {
                return Err(format!("`{}` is given twice", key.trim()));
            }
            let count = crate::range::whole(value)
                .ok()
                .and_then(|v| usize::try_from(v).ok())
                .filter(|&v| v >= 1)
                .ok_or_else(|| format!("{}=`{}` is not a whole number >= 1", key.trim(), value.trim()))?;
            match index {
                0 => layout.dp = count,
                1 => layout.pp = count,
                _ => layout.tp = count,
            }
        }
        let ranks = layout.dp.checked_mul(layout.pp).and_then(|v| v.checked_mul(layout.tp));
        match ranks {
            Some(r) if r <= MAX_RANKS => Ok(layout),
            _ => Err(format!("dp·pp·tp is over {MAX_RANKS} ranks")),
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dp={},pp={},tp={}", self.dp, self.pp, self.tp)
    }
}

/// Most model chunks per stage of the interleaved schedule.
pub const MAX_CHUNKS: usize = 64;

/// The order in which a stage runs its microbatches' forward and backward
/// ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// GPipe (Huang et al. 2019): every forward, then every backward.
    GPipe,
    /// 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage i runs
    /// min(P − i − 1, m) warm-up forwards, then alternates one forward and
    /// one backward, then the remaining backwards.
    OneFOneB,
    /// Interleaved 1F1B (Narayanan et al. 2021, §2.2.2, as Megatron-LM's
    /// `forward_backward_pipelining_with_interleaving` runs it): each
    /// stage holds V model chunks, virtual stages i, i + P, …, i + (V − 1)P
    /// of P·V, each doing 1/V of the stage's work. Stage i runs
    /// min(2(P − i − 1) + (V − 1)P, V·m) warm-up forwards, then one forward
    /// and one backward in turn, then the remaining backwards; its k-th
    /// forward is microbatch ⌊k/(PV)⌋·P + k mod P of chunk ⌊(k mod PV)/P⌋,
    /// its k-th backward the same microbatch of chunk V − 1 − ⌊(k mod PV)/P⌋.
    /// m must be a multiple of P. V = 1 is 1F1B.
    Interleaved(u32),
}

impl Schedule {
    /// The schedule's name on the command line.
    pub fn name(&self) -> String {
        match self {
            Schedule::GPipe => "gpipe".into(),
            Schedule::OneFOneB => "1f1b".into(),
            Schedule::Interleaved(v) => format!("interleaved:{v}"),
        }
    }

    /// The model chunks each stage holds: V for the interleaved schedule,
    /// 1 otherwise.
    pub fn chunks(&self) -> usize {
        match self {
            Schedule::Interleaved(v) => *v as usize,
            _ => 1,
        }
    }

    /// Parses a schedule's name: `gpipe`, `1f1b` or `interleaved:V`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "gpipe" => Ok(Schedule::GPipe),
            "1f1b" => Ok(Schedule::OneFOneB),
            other => match other.strip_prefix("interleaved:") {
                Some(v) => crate::range::whole(v)
                    .ok()
                    .filter(|v| (1..=MAX_CHUNKS as u64).contains(v))
                    .map(|v| Schedule::Interleaved(v as u32))
                    .ok_or_else(|| {
                        format!(
                            "interleaved:`{}` is not a whole number of model chunks per stage from 1 to {MAX_CHUNKS}",
                            v.trim()
                        )
                    }),
                None => Err(format!(
                    "unknown schedule `{other}`; accepted: gpipe, 1f1b, interleaved:V (V model chunks per stage)"
                )),
            },
        }
    }
}

/// Everything a hybrid-parallel job adds to a study.
#[derive(Debug, Clone, PartialEq)]
pub struct Parallel {
    /// The ranks' layout.
    pub layout: Layout,
    /// Microbatches M per replica per iteration (of the uncoded job).
    pub microbatches: usize,
    /// The stages' schedule.
    pub schedule: Schedule,
    /// R: a backward op takes R times its forward op.
    pub backward_ratio: f64,
    /// τ: the activation (or its gradient) transfer between neighbouring
    /// stages, in the study's time unit.
    pub p2p_time: f64,
    /// Each stage's relative work (P values).
    pub stage_work: Arc<[f64]>,
    /// The law of a microbatch's relative work, one draw per replica and
    /// microbatch shared by every stage (none: 1).
    pub microbatch_work: Option<Dist>,
    /// The optimizer step after the last stage's gradient sum, in the
    /// study's time unit.
    pub optimizer_time: f64,
}

impl Parallel {
    /// A job of `layout` with M microbatches and the defaults: 1F1B,
    /// R = 2, τ = 0, equal stages, equal microbatches, no optimizer time.
    pub fn new(layout: Layout, microbatches: usize) -> Self {
        Self {
            layout,
            microbatches,
            schedule: Schedule::OneFOneB,
            backward_ratio: 2.0,
            p2p_time: 0.0,
            stage_work: vec![1.0; layout.pp].into(),
            microbatch_work: None,
            optimizer_time: 0.0,
        }
    }

    /// The forward op's share of a microbatch's compute, 1/(1 + R).
    pub fn forward_share(&self) -> f64 {
        1.0 / (1.0 + self.backward_ratio)
    }

    /// Checks every field's range: the parameter that is wrong, and a
    /// message saying what is accepted.
    pub fn check(&self) -> Result<(), (Param, String)> {
        let l = &self.layout;
        if l.dp == 0 || l.pp == 0 || l.tp == 0 || l.ranks() > MAX_RANKS {
            return Err((
                Param::Parallel,
                format!("{l} is out of range; accepted: dp, pp, tp >= 1 and at most {MAX_RANKS} ranks"),
            ));
        }
        if !(1..=MAX_MICROBATCHES).contains(&self.microbatches) {
            return Err((
                Param::Microbatches,
                format!(
                    "{} is out of range; accepted: 1 to {MAX_MICROBATCHES}",
                    self.microbatches
                ),
            ));
        }
        if !(self.backward_ratio.is_finite() && self.backward_ratio > 0.0 && self.backward_ratio <= 1e6) {
            return Err((
                Param::BackwardRatio,
                format!(
                    "{} is out of range; accepted: a number > 0 and <= 1e6",
                    self.backward_ratio
                ),
            ));
        }
        for (param, v) in [
            (Param::P2pTime, self.p2p_time),
            (Param::OptimizerTime, self.optimizer_time),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err((param, format!("{v} is out of range; accepted: a finite number >= 0")));
            }
        }
        self.check_chunks()?;
        if self.stage_work.len() != l.pp {
            return Err((
                Param::StageWork,
                format!(
                    "{} values for {} stages; give one per stage (pp={})",
                    self.stage_work.len(),
                    l.pp,
                    l.pp
                ),
            ));
        }
        if let Some(w) = self
            .stage_work
            .iter()
            .find(|w| !(w.is_finite() && **w > 0.0 && **w <= 1e6))
        {
            return Err((
                Param::StageWork,
                format!("{w} is out of range; accepted: numbers > 0 and <= 1e6"),
            ));
        }
        Ok(())
    }

    /// What the interleaved schedule with V ≥ 2 needs: at least two stages
    /// (Megatron-LM's requirement: the chunks pass activations between
    /// devices) and M a multiple of P (its microbatches run in groups of P).
    fn check_chunks(&self) -> Result<(), (Param, String)> {
        let (schedule, p) = (self.schedule.name(), self.layout.pp);
        if self.schedule.chunks() < 2 {
            return Ok(());
        }
        if p < 2 {
            return Err((
                Param::PipelineSchedule,
                format!(
                    "{schedule} needs pp >= 2: each stage's chunks pass activations to the next stage; with pp=1 use 1f1b"
                ),
            ));
        }
        if !self.microbatches.is_multiple_of(p) {
            return Err((
                Param::Microbatches,
                format!(
                    "{} is not a multiple of pp={p}; {schedule} runs the microbatches in groups of P: accepted: {p}, {}, {}, ...",
                    self.microbatches,
                    2 * p,
                    3 * p
                ),
            ));
        }
        Ok(())
    }

    /// A one-line description for the output's header.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} microbatches={} schedule={} backward-ratio={} p2p-time={}",
            self.layout,
            self.microbatches,
            self.schedule.name(),
            crate::param::plain(self.backward_ratio),
            crate::param::plain(self.p2p_time),
        );
        if self.stage_work.iter().any(|&w| w != 1.0) {
            let work: Vec<String> = self.stage_work.iter().map(|&w| crate::param::plain(w)).collect();
            text.push_str(&format!(" stage-work={}", work.join(",")));
        }
        if let Some(d) = &self.microbatch_work {
            text.push_str(&format!(" microbatch-work={d}"));
        }
        if self.optimizer_time != 0.0 {
            text.push_str(&format!(" optimizer-time={}", crate::param::plain(self.optimizer_time)));
        }
        text
    }
}

/// Parses `--stage-work`: P relative works, comma-separated.
pub fn parse_stage_work(text: &str) -> Result<Vec<f64>, String> {
    text.split(',')
        .map(|v| {
            let v = v.trim();
            crate::range::real(v)
                .filter(|w| w.is_finite() && *w > 0.0 && *w <= 1e6)
                .ok_or_else(|| format!("`{v}` is not a number > 0 and <= 1e6"))
        })
        .collect()
}

#[cfg(test)]
mod tests;
