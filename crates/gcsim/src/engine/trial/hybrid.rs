//! A hybrid-parallel job's trial (see [`crate::parallel`]): every rank's
//! draw per microbatch, each replica's pipeline, then per stage the
//! scheme's rule across the replicas and the stage's gradient sum.
//!
//! The draws are those of additive units: unit j of rank r is microbatch
//! j's draw of rank r, from the trial's stream in the order the flat
//! engine draws additive units, so a job with P = T = M = 1 is the flat
//! cluster of D workers under additive loads, trial by trial. The
//! microbatch works (one per replica and microbatch) follow on the same
//! stream.

use std::sync::Arc;

use rand_distr::Distribution;

mod sums;

use super::TrialPlan;
use super::compute_rows::Rows;
use super::lanes::Lanes;
use super::scratch::{PipelineBuffers, Scratch};
use super::tensor::TensorGroups;
use crate::collective::{BucketCost, Collective};
use crate::parallel::timeline::{TimelineOp, TimelineSum};
use crate::parallel::{Parallel, Program, Timeline};
use crate::rng::trial_rng;
use crate::study::Study;
use sums::{Decide, Sum, participants};

/// Draws per trial from which [`TrialPlan::costly_trials`] holds: about
/// 10 µs of a trial, beside which a task's hand-over is small.
const COSTLY_DRAWS: usize = 4096;

/// What a hybrid-parallel plan adds to the flat one.
#[derive(Debug, Clone)]
pub(crate) struct Hybrid {
    parallel: Arc<Parallel>,
    /// One program per distinct number of microbatches, ascending.
    programs: Vec<Program>,
    /// Each program's steps over the replicas' lanes.
    lanes: Vec<Lanes>,
    /// Each program but the last (the most microbatches), its steps on top
    /// of the last one's times (see [`Lanes::on_top_of`]).
    tops: Vec<Lanes>,
    /// Per slot: its program, how it decides across replicas, and its
    /// stages' gradient sum's cost per bucket (0 without a collective).
    slots: Vec<(usize, Decide, BucketCost)>,
    /// The collective that sums each stage's gradient, if any.
    collective: Option<Collective>,
    /// The most microbatches of any slot: the draws' units.
    most: usize,
    /// Gradient buckets per stage (1 without a collective).
    buckets: usize,
    /// How the tensor groups are drawn whole, where they can be.
    tensor: Option<TensorGroups>,
}

/// One trial's pipeline totals per program and its gradient sums' totals
/// per slot.
pub(crate) type TrialTotals = (Vec<PipelineTotals>, Vec<SumTotals>);

/// A slot's gradient sums in one trial, or summed over trials.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SumTotals {
    /// The time from the start of the last-ending stage's first sum to its
    /// end.
    pub span: f64,
    /// The mean over stages and buckets of the share of the replicas whose
    /// gradients are in the sum.
    pub share: f64,
}

/// A pipeline's idle share and its stages' busy time, summed over replicas.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PipelineTotals {
    /// Σ over replicas of 1 − Σᵢ busyᵢ / (P · the replica's makespan).
    pub bubble: f64,
    /// Per stage, Σ over replicas of its busy time.
    pub busy: Vec<f64>,
}

impl Hybrid {
    /// The plan of `study`'s layout, or `None` for a flat cluster.
    pub(super) fn of(study: &Study) -> Option<Self> {
        let parallel = Arc::new(study.parallel()?.clone());
        let counts = study.slot_microbatches().expect("a layout");
        let mut distinct = counts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let programs: Vec<Program> = distinct
            .iter()
            .map(|&m| Program::new(parallel.schedule, parallel.layout.pp, m))
            .collect();
        let most = *distinct.last().expect("a slot");
        let lanes = programs.iter().map(|program| Lanes::new(program, most)).collect();
        let largest = programs.last().expect("a slot");
        let tops = programs[..programs.len() - 1]
            .iter()
            .map(|program| Lanes::on_top_of(program, largest, most))
            .collect();
        let (collective, costs) = match study.collective_costs() {
            Some((c, costs)) => (Some(c), costs),
            None => (None, vec![BucketCost::Fixed(0.0); counts.len()]),
        };
        let baseline = study.baseline();
        let decides = study
            .schemes()
            .iter()
            .chain(std::iter::once(&baseline))
            .map(|s| s.deadline().map_or(Decide::Rule(s.rule()), Decide::Deadline));
        let slots = counts
            .iter()
            .zip(decides)
            .zip(costs)
            .map(|((m, decide), cost)| (distinct.binary_search(m).expect("listed"), decide, cost))
            .collect();
        Some(Self {
            programs,
            lanes,
            tops,
            slots,
            most,
            buckets: collective.map_or(1, |c| c.buckets),
            collective,
            tensor: TensorGroups::of(study.workers(), parallel.layout.tp),
            parallel,
        })
    }

    /// The draws' units per rank: the most microbatches.
    pub(super) fn units(&self) -> usize {
        self.most
    }

    /// The number of programs (distinct microbatch counts).
    pub(crate) fn programs(&self) -> usize {
        self.programs.len()
    }

    /// Each slot's program.
    pub(crate) fn slot_programs(&self) -> impl Iterator<Item = usize> + '_ {
        self.slots.iter().map(|s| s.0)
    }

    /// Runs program `k` on the computes in `b` (filled by
    /// [`TrialPlan::fill_compute`]) of `count` trials' replicas side by
    /// side, leaving the times in `b.times` (the stages' busy times where
    /// `busy`).
    fn run_program(&self, k: usize, b: &mut PipelineBuffers, count: usize, busy: bool) {
        self.run_lanes(&self.lanes[k], b, count, busy);
    }

    /// Runs `lanes` on the computes in `b` of `count` trials' replicas.
    fn run_lanes(&self, lanes: &Lanes, b: &mut PipelineBuffers, count: usize, busy: bool) {
        let p = &self.parallel;
        let at = (p.forward_share(), p.p2p_time, busy);
        lanes.run(&b.compute, count * p.layout.dp, at, &mut b.times);
    }

    /// Runs every program as [`Self::run_program`] does, calling `then`
    /// with each one's index and its times in `b.times`: the one of the
    /// most microbatches first, then each other on top of its times
    /// ([`Lanes::on_top_of`]: the same times, fewer steps), or in full
    /// where the stages' busy times are asked for.
    fn run_programs(
        &self,
        b: &mut PipelineBuffers,
        count: usize,
        busy: bool,
        mut then: impl FnMut(usize, &mut PipelineBuffers),
    ) {
        let last = self.programs.len() - 1;
        self.run_program(last, b, count, busy);
        then(last, b);
        for (k, top) in self.tops.iter().enumerate() {
            if busy {
                self.run_program(k, b, count, busy);
            } else {
                self.run_lanes(top, b, count, busy);
            }
            then(k, b);
        }
    }

    /// From program `k`'s times in `b.times`, trial `q`'s of `count`: each
    /// stage's end and last backward's duration per replica at `i·D + d`
    /// in `b.done[at]` and `b.tails[at]`, and its totals added to `stats`.
    fn gather(
        &self,
        k: usize,
        b: &mut PipelineBuffers,
        (count, q): (usize, usize),
        at: usize,
        stats: Option<&mut PipelineTotals>,
    ) {
        let p = &self.parallel;
        let (dp, pp, most) = (p.layout.dp, p.layout.pp, self.most);
        let (n, first) = (count * dp, q * dp);
        let share = p.forward_share();
        let (done, tails) = (&mut b.done[at], &mut b.tails[at]);
        done.clear();
        tails.clear();
        // Each stage's last op is its last microbatch's backward (of its
        // first chunk).
        let program = &self.programs[k];
        let m = program.microbatches();
        for i in 0..pp {
            done.extend_from_slice(&b.times.free[i * n + first..][..dp]);
            let last = &b.compute[(i * most + m - 1) * n + first..][..dp];
            tails.extend(last.iter().map(|&x| program.last_backward(x, share)));
        }
        if let Some(t) = stats {
            t.busy.resize(pp, 0.0);
            let (free, busy) = (&b.times.free, &b.times.busy);
            for lane in first..first + dp {
                let makespan = (0..pp).map(|i| free[i * n + lane]).fold(0.0, f64::max);
                let total: f64 = (0..pp).map(|i| busy[i * n + lane]).sum();
                t.bubble += 1.0 - total / (pp as f64 * makespan);
                t.busy
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, s)| *s += busy[i * n + lane]);
            }
        }
    }

    /// Slot `slot`'s gradient sum across the replicas.
    fn sum(&self, slot: usize) -> Sum<'_> {
        let (_, decide, cost) = self.slots[slot];
        Sum {
            decide,
            buckets: self.buckets,
            cost,
            collective: self.collective.as_ref(),
        }
    }

    /// Each slot's time into `out`, from its program k's stage ends at
    /// `b.done[at(k)]` (see [`Self::gather`]); with `sums`, each slot's
    /// sums' totals added to it.
    fn slot_times(
        &self,
        b: &mut PipelineBuffers,
        at: impl Fn(usize) -> usize,
        out: &mut [f64],
        mut sums: Option<&mut [SumTotals]>,
    ) {
        let p = &self.parallel;
        let (dp, pp) = (p.layout.dp, p.layout.pp);
        for (slot, &(k, _, _)) in self.slots.iter().enumerate() {
            let (done, tails) = (&b.done[at(k)], &b.tails[at(k)]);
            let sum = self.sum(slot);
            let (mut last, mut span, mut summed) = (f64::NEG_INFINITY, 0.0, 0.0);
            for i in 0..pp {
                let stage = i * dp..(i + 1) * dp;
                let (start, end, count) = sum.span(&done[stage.clone()], &tails[stage], &mut b.ready, &mut b.column);
                summed += count;
                if end > last {
                    (last, span) = (end, end - start);
                }
            }
            out[slot] = last + p.optimizer_time;
            if let Some(sums) = sums.as_mut() {
                sums[slot].span += span;
                sums[slot].share += summed / (pp * dp) as f64;
            }
        }
    }
}

impl TrialPlan {
    /// Trial `trial` of a hybrid-parallel job of one iteration, as
    /// [`Self::run`] runs it, adding each of its pipelines' totals to
    /// `totals` (one per distinct number of microbatches, ascending; see
    /// [`Self::pipeline_programs`]) and to `sums` each slot's gradient
    /// sums' totals. Does nothing for a flat cluster.
    pub fn run_pipelines(
        &self,
        seed: u64,
        trial: u64,
        scratch: &mut Scratch,
        out: &mut [f64],
        totals: &mut [PipelineTotals],
        sums: &mut [SumTotals],
    ) {
        if let Some(h) = &self.hybrid {
            scratch.carried.iteration = 0;
            self.run_hybrid(h, (seed, trial), scratch, out, Some((totals, sums)));
        }
    }

    /// Whether a trial draws enough (a hybrid-parallel job's ranks times
    /// microbatches, [`COSTLY_DRAWS`] or more) that the trials of a batch
    /// are worth spreading over the cores.
    pub(crate) fn costly_trials(&self) -> bool {
        self.hybrid.as_ref().is_some_and(|h| self.n * h.most >= COSTLY_DRAWS)
    }

    /// Whether [`Self::run_pipelines`] gives a trial the values
    /// [`Self::run`] does: a hybrid-parallel job of one iteration per
    /// trial, whose pipeline totals the run's pass can collect.
    pub(crate) fn pipelines_in_pass(&self) -> bool {
        self.hybrid.is_some() && self.iterations == 1 && self.step_rows.is_none()
    }

    /// A hybrid-parallel job's number of pipelines (distinct numbers of
    /// microbatches) and each slot's pipeline; `None` for a flat cluster.
    pub fn pipeline_programs(&self) -> Option<(usize, Vec<usize>)> {
        let h = self.hybrid.as_ref()?;
        Some((h.programs(), h.slot_programs().collect()))
    }

    /// One iteration of a hybrid-parallel job: each slot's time in `out`;
    /// with `stats`, each program's pipeline totals and each slot's sums'
    /// totals added to them (see [`Self::run_pipelines`]).
    pub(super) fn run_hybrid(
        &self,
        h: &Hybrid,
        at: (u64, u64),
        scratch: &mut Scratch,
        out: &mut [f64],
        stats: Option<(&mut [PipelineTotals], &mut [SumTotals])>,
    ) {
        self.fill_compute(h, at, scratch, (1, 0));
        let b = &mut scratch.hybrid;
        let programs = h.programs.len();
        b.done.resize(programs, Vec::new());
        b.tails.resize(programs, Vec::new());
        let (mut totals, spans) = stats.unzip();
        h.run_programs(b, 1, totals.is_some(), |k, b| {
            h.gather(k, b, (1, 0), k, totals.as_deref_mut().map(|t| &mut t[k]));
        });
        h.slot_times(b, |k| k, out, spans);
    }

    /// Trials `first..first + entries.len()` of a hybrid-parallel job of
    /// one iteration, as [`Self::run`] runs them, side by side: trial
    /// `first + q`'s slots at `outs[q·slots..]`, its pipeline totals added
    /// to `entries[q]` where given (as [`Self::run_pipelines`] adds them).
    /// The replicas of all the trials are the lanes of one evaluation of
    /// each program (see [`Self::pipelines_in_pass`]).
    pub(crate) fn run_batch(
        &self,
        seed: u64,
        first: u64,
        scratch: &mut Scratch,
        outs: &mut [f64],
        entries: &mut [Option<&mut TrialTotals>],
    ) {
        let h = self.hybrid.as_ref().expect("a layout");
        let count = entries.len();
        for q in 0..count {
            scratch.carried.iteration = 0;
            self.fill_compute(h, (seed, first + q as u64), scratch, (count, q));
        }
        let b = &mut scratch.hybrid;
        let programs = h.programs.len();
        b.done.resize(programs * count, Vec::new());
        b.tails.resize(programs * count, Vec::new());
        let busy = entries.iter().any(Option::is_some);
        h.run_programs(b, count, busy, |k, b| {
            for (q, entry) in entries.iter_mut().enumerate() {
                h.gather(
                    k,
                    b,
                    (count, q),
                    k * count + q,
                    entry.as_deref_mut().map(|e| &mut e.0[k]),
                );
            }
        });
        let slots = h.slots.len();
        for (q, (out, entry)) in outs.chunks_exact_mut(slots).zip(entries.iter_mut()).enumerate() {
            h.slot_times(b, |k| k * count + q, out, entry.as_deref_mut().map(|e| &mut e.1[..]));
        }
    }
}

impl TrialPlan {
    /// Draws trial `at`'s ranks and microbatch works, and fills each op's
    /// compute: the stage's work × the microbatch's × the slowest of the
    /// stage's tensor ranks.
    /// With `count` trials side by side, trial `q`'s replica d is lane
    /// q·D + d of each compute row.
    fn fill_compute(&self, h: &Hybrid, (seed, trial): (u64, u64), scratch: &mut Scratch, (count, q): (usize, usize)) {
        let mut rng = trial_rng(seed, trial);
        let p = &h.parallel;
        let (dp, pp, tp) = (p.layout.dp, p.layout.pp, p.layout.tp);
        let most = h.most;
        // Per unit, each tensor group's `width` values: its ranks', or its
        // slowest rank's where the groups are drawn whole.
        let width = match &h.tensor {
            Some(g) => {
                self.draw_slowest(g, &mut rng, scratch, most, None);
                1
            }
            None => {
                self.draw(&mut rng, scratch);
                tp
            }
        };
        let b = &mut scratch.hybrid;
        b.works.resize(dp * most, 1.0);
        if let Some(law) = &p.microbatch_work {
            b.works.iter_mut().for_each(|w| *w = law.sample(&mut rng));
        }
        let lanes = count * dp;
        b.compute.resize(pp * most * lanes, 0.0);
        let draws = if h.tensor.is_some() {
            &b.slowest[..]
        } else {
            &scratch.draws[..]
        };
        let rows = Rows {
            dp,
            pp,
            most,
            lanes,
            first: q * dp,
        };
        rows.fill(&mut b.compute, &b.works, &p.stage_work[..pp], draws, width);
    }

    /// Trial `trial`'s first iteration of slot `slot` (the schemes', then
    /// the uncoded baseline), op by op; `None` for a flat cluster.
    pub fn pipeline_timeline(&self, seed: u64, trial: u64, slot: usize) -> Option<Timeline> {
        let h = self.hybrid.as_ref()?;
        let mut scratch = self.scratch();
        self.fill_compute(h, (seed, trial), &mut scratch, (1, 0));
        if let Some(g) = &h.tensor {
            self.tensor_ranks(g, (seed, trial), h.most, &mut scratch);
        }
        let p = &h.parallel;
        let (dp, pp, tp, most) = (p.layout.dp, p.layout.pp, p.layout.tp, h.most);
        let k = h.slots[slot].0;
        let program = &h.programs[k];
        let share = p.forward_share();
        let b = &mut scratch.hybrid;
        b.done.resize(h.programs.len(), Vec::new());
        b.tails.resize(h.programs.len(), Vec::new());
        h.run_program(k, b, 1, false);
        h.gather(k, b, (1, 0), k, None);
        let lanes = &h.lanes[k];
        let (done, tails) = (&b.done[k], &b.tails[k]);
        let mut ops = Vec::with_capacity(dp * program.order().len());
        for d in 0..dp {
            for op in program.order() {
                let (i, j) = (op.stage as usize, op.microbatch as usize);
                let x = b.compute[(i * most + j) * dp + d];
                let part = |v: f64| program.duration(op, v, share);
                let end = lanes.end(&b.times, dp, op, d);
                let scale = p.stage_work[i] * b.works[d * most + j];
                let own = (0..tp)
                    .map(|t| part(scratch.draws[j * self.n + p.layout.rank(d, i, t)] * scale))
                    .collect();
                ops.push(TimelineOp {
                    replica: d,
                    stage: i,
                    chunk: op.chunk as usize,
                    microbatch: j,
                    backward: op.backward,
                    start: end - part(x),
                    end,
                    own,
                });
            }
        }
        let mut sums = Vec::with_capacity(pp);
        let mut last = f64::NEG_INFINITY;
        let sum = h.sum(slot);
        for i in 0..pp {
            let stage = i * dp..(i + 1) * dp;
            let (start, end, _) = sum.span(&done[stage.clone()], &tails[stage.clone()], &mut b.ready, &mut b.column);
            last = last.max(end);
            sums.push(TimelineSum {
                stage: i,
                start,
                end,
                participants: participants(sum.decide, &done[stage]),
            });
        }
        Some(Timeline {
            layout: p.layout,
            ops,
            sums,
            optimizer: (last, last + p.optimizer_time),
        })
    }
}
