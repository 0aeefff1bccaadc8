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

use super::TrialPlan;
use super::compute_rows::Rows;
use super::lanes::Lanes;
use super::scratch::{PipelineBuffers, Scratch};
use super::tensor::TensorGroups;
use crate::collective::{BucketCost, Collective};
use crate::engine::timeline::with_deadline;
use crate::parallel::timeline::{TimelineOp, TimelineSum};
use crate::parallel::{Parallel, Program, Timeline};
use crate::rng::trial_rng;
use crate::scheme::Rule;
use crate::study::Study;

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
        let p = &self.parallel;
        let lanes = count * p.layout.dp;
        let at = (p.forward_share(), p.p2p_time, busy);
        self.lanes[k].run(&b.compute, lanes, at, &mut b.times);
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
        for k in 0..programs {
            h.run_program(k, b, 1, totals.is_some());
            h.gather(k, b, (1, 0), k, totals.as_deref_mut().map(|t| &mut t[k]));
        }
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
        for k in 0..programs {
            h.run_program(k, b, count, busy);
            for (q, entry) in entries.iter_mut().enumerate() {
                h.gather(
                    k,
                    b,
                    (count, q),
                    k * count + q,
                    entry.as_deref_mut().map(|e| &mut e.0[k]),
                );
            }
        }
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

/// The replicas whose gradients are summed, for replicas that end at
/// `ends`: the first k, the first of each group, or those in by the
/// deadline's time (see [`deadline_time`]).
fn participants(decide: Decide, ends: &[f64]) -> Vec<usize> {
    let rule = match decide {
        Decide::Rule(rule) => rule,
        Decide::Deadline(t) => {
            let at = deadline_time(t, ends).0;
            return (0..ends.len()).filter(|&d| ends[d] <= at).collect();
        }
    };
    let mut order: Vec<usize> = (0..ends.len()).collect();
    order.sort_by(|&a, &b| ends[a].total_cmp(&ends[b]).then(a.cmp(&b)));
    let mut chosen = match rule {
        Rule::KOfN(k) => order[..k].to_vec(),
        Rule::Groups { size } => (0..ends.len() / size)
            .map(|g| {
                (g * size..(g + 1) * size)
                    .min_by(|&a, &b| ends[a].total_cmp(&ends[b]))
                    .expect("a group")
            })
            .collect(),
    };
    chosen.sort_unstable();
    chosen
}

/// How a stage's sum across the replicas is decided: by the scheme's rule,
/// or by a deadline T from the iteration's start (`timeout`).
#[derive(Debug, Clone, Copy)]
enum Decide {
    Rule(Rule),
    Deadline(f64),
}

/// A stage's gradient sum across the replicas: in K buckets, bucket j ready
/// on a replica j/K of the way through its last backward (the gradient
/// accumulates over the microbatches, so only the last backward overlaps
/// the sums), each summed once it is decided over the replicas' bucket and
/// the previous bucket's sum has ended. A rule's bucket costs the same in
/// every trial; a deadline's, that of the replicas in by it.
#[derive(Debug, Clone, Copy)]
struct Sum<'a> {
    decide: Decide,
    buckets: usize,
    cost: BucketCost,
    collective: Option<&'a Collective>,
}

impl Sum<'_> {
    /// When a bucket ready on the replicas at `ready` is decided, and how
    /// many replicas' gradients its sum holds.
    fn decide(&self, ready: &[f64], column: &mut Vec<f64>) -> (f64, usize) {
        match self.decide {
            Decide::Rule(rule) => (
                rule_time(rule, ready, column),
                Collective::participants(rule, ready.len()),
            ),
            Decide::Deadline(t) => deadline_time(t, ready),
        }
    }

    /// One bucket's sum among `p` of `n` replicas.
    fn cost(&self, p: usize, n: usize) -> f64 {
        match (self.cost, self.collective) {
            (BucketCost::Fixed(cost), _) => cost,
            (counted, Some(c)) => counted.of(c, p, n),
            (BucketCost::Counted { .. }, None) => unreachable!("a counted cost is a collective's"),
        }
    }

    /// When the first bucket's sum starts and the last one's ends, and the
    /// mean over buckets of the replicas summed, for replicas whose last
    /// backward ends at `ends` after lasting `tails`.
    fn span(&self, ends: &[f64], tails: &[f64], ready: &mut Vec<f64>, column: &mut Vec<f64>) -> (f64, f64, f64) {
        let n = ends.len();
        if self.buckets == 1 {
            let (t, p) = self.decide(ends, column);
            return (t, t + self.cost(p, n), p as f64);
        }
        let k = self.buckets as f64;
        let (mut first, mut end, mut summed) = (f64::NAN, f64::NEG_INFINITY, 0);
        for j in 1..=self.buckets {
            let left = 1.0 - j as f64 / k;
            ready.clear();
            ready.extend(ends.iter().zip(tails).map(|(g, b)| g - left * b));
            let (t, p) = self.decide(ready, column);
            let start = t.max(end);
            if j == 1 {
                first = start;
            }
            end = start + self.cost(p, n);
            summed += p;
        }
        (first, end, summed as f64 / k)
    }
}

/// Under a deadline `t`, when replicas ready at `ready` are summed and how
/// many: at min(t, the last), those ready by then; where none is ready by
/// t, at the first (with any tied with it), as the flat cluster's
/// `timeout` proceeds.
fn deadline_time(t: f64, ready: &[f64]) -> (f64, usize) {
    let (first, last) = ready.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
        (lo.min(r), hi.max(r))
    });
    let at = with_deadline(last, t, first);
    (at, ready.iter().filter(|&&r| r <= at).count())
}

/// When `rule` is met by replicas that end at `ends`.
fn rule_time(rule: Rule, ends: &[f64], column: &mut Vec<f64>) -> f64 {
    match rule {
        Rule::KOfN(k) if k == ends.len() => ends.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Rule::KOfN(k) => {
            column.clear();
            column.extend_from_slice(ends);
            *column.select_nth_unstable_by(k - 1, f64::total_cmp).1
        }
        Rule::Groups { size } => ends
            .chunks(size)
            .map(|g| g.iter().copied().fold(f64::INFINITY, f64::min))
            .fold(f64::NEG_INFINITY, f64::max),
    }
}
