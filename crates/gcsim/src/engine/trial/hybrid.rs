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
use super::scratch::Scratch;
use crate::parallel::timeline::{TimelineOp, TimelineSum};
use crate::parallel::{Parallel, Program, Timeline};
use crate::rng::trial_rng;
use crate::scheme::Rule;
use crate::study::Study;

/// What a hybrid-parallel plan adds to the flat one.
#[derive(Debug, Clone)]
pub(crate) struct Hybrid {
    parallel: Arc<Parallel>,
    /// One program per distinct number of microbatches, ascending.
    programs: Vec<Program>,
    /// Per slot: its program, its rule across replicas, and its stages'
    /// gradient sum's cost (0 without a collective).
    slots: Vec<(usize, Rule, f64)>,
    /// The most microbatches of any slot: the draws' units.
    most: usize,
    /// Gradient buckets per stage (1 without a collective).
    buckets: usize,
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
        let programs = distinct
            .iter()
            .map(|&m| Program::new(parallel.schedule, parallel.layout.pp, m))
            .collect();
        // Every scheme under a layout has a participant set of fixed size.
        let costs: Vec<f64> = match study.collective_costs() {
            Some((_, costs)) => costs
                .into_iter()
                .map(|c| match c {
                    crate::collective::BucketCost::Fixed(cost) => cost,
                    crate::collective::BucketCost::Counted { .. } => unreachable!("timeout is refused under a layout"),
                })
                .collect(),
            None => vec![0.0; counts.len()],
        };
        let baseline = study.baseline();
        let rules = study
            .schemes()
            .iter()
            .chain(std::iter::once(&baseline))
            .map(|s| s.rule());
        let slots = counts
            .iter()
            .zip(rules)
            .zip(costs)
            .map(|((m, rule), cost)| (distinct.binary_search(m).expect("listed"), rule, cost))
            .collect();
        Some(Self {
            parallel,
            programs,
            slots,
            most: *distinct.last().expect("a slot"),
            buckets: study.aggregation().collective().map_or(1, |c| c.buckets),
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
}

impl TrialPlan {
    /// Trial `trial` of a hybrid-parallel job of one iteration, as
    /// [`Self::run`] runs it, adding each of its pipelines' totals to
    /// `totals` (one per distinct number of microbatches, ascending; see
    /// [`Self::pipeline_programs`]) and to `spans` each slot's time from
    /// the start of the last-ending stage's first gradient sum to its end.
    /// Does nothing for a flat cluster.
    pub fn run_pipelines(
        &self,
        seed: u64,
        trial: u64,
        scratch: &mut Scratch,
        out: &mut [f64],
        totals: &mut [PipelineTotals],
        spans: &mut [f64],
    ) {
        if let Some(h) = &self.hybrid {
            scratch.carried.iteration = 0;
            self.run_hybrid(h, (seed, trial), scratch, out, Some((totals, spans)));
        }
    }

    /// A hybrid-parallel job's number of pipelines (distinct numbers of
    /// microbatches) and each slot's pipeline; `None` for a flat cluster.
    pub fn pipeline_programs(&self) -> Option<(usize, Vec<usize>)> {
        let h = self.hybrid.as_ref()?;
        Some((h.programs(), h.slot_programs().collect()))
    }

    /// One iteration of a hybrid-parallel job: each slot's time in `out`;
    /// with `stats`, each program's pipeline totals and each slot's sum's
    /// span added to them (see [`Self::run_pipelines`]).
    pub(super) fn run_hybrid(
        &self,
        h: &Hybrid,
        at: (u64, u64),
        scratch: &mut Scratch,
        out: &mut [f64],
        mut stats: Option<(&mut [PipelineTotals], &mut [f64])>,
    ) {
        self.fill_compute(h, at, scratch);
        let p = &h.parallel;
        let (dp, pp, most) = (p.layout.dp, p.layout.pp, h.most);
        let b = &mut scratch.hybrid;
        b.done.resize(h.programs.len(), Vec::new());
        b.tails.resize(h.programs.len(), Vec::new());
        let share = p.forward_share();
        for (k, program) in h.programs.iter().enumerate() {
            let (done, tails) = (&mut b.done[k], &mut b.tails[k]);
            done.resize(pp * dp, 0.0);
            tails.resize(pp * dp, 0.0);
            let m = program.microbatches();
            for d in 0..dp {
                let compute = &b.compute[d * pp * most..(d + 1) * pp * most];
                program.run(compute, most, share, p.p2p_time, &mut b.times);
                for (i, &end) in b.times.free.iter().enumerate() {
                    done[i * dp + d] = end;
                    // Each stage's last op is its last microbatch's backward.
                    tails[i * dp + d] = program.last_backward(compute[i * most + m - 1], share);
                }
                if let Some((totals, _)) = stats.as_mut() {
                    let t = &mut totals[k];
                    let makespan = b.times.free.iter().copied().fold(0.0, f64::max);
                    let busy: f64 = b.times.busy.iter().sum();
                    t.bubble += 1.0 - busy / (pp as f64 * makespan);
                    t.busy.resize(pp, 0.0);
                    t.busy.iter_mut().zip(&b.times.busy).for_each(|(s, v)| *s += v);
                }
            }
        }
        for (slot, &(k, rule, cost)) in h.slots.iter().enumerate() {
            let (done, tails) = (&b.done[k], &b.tails[k]);
            let sum = Sum {
                rule,
                buckets: h.buckets,
                cost,
            };
            let (mut last, mut span) = (f64::NEG_INFINITY, 0.0);
            for i in 0..pp {
                let stage = i * dp..(i + 1) * dp;
                let (start, end) = sum.span(&done[stage.clone()], &tails[stage], &mut b.ready, &mut b.column);
                if end > last {
                    (last, span) = (end, end - start);
                }
            }
            out[slot] = last + p.optimizer_time;
            if let Some((_, spans)) = stats.as_mut() {
                spans[slot] += span;
            }
        }
    }
}

impl TrialPlan {
    /// Draws trial `at`'s ranks and microbatch works, and fills each op's
    /// compute: the stage's work × the microbatch's × the slowest of the
    /// stage's tensor ranks.
    fn fill_compute(&self, h: &Hybrid, (seed, trial): (u64, u64), scratch: &mut Scratch) {
        let mut rng = trial_rng(seed, trial);
        self.draw(&mut rng, scratch);
        let p = &h.parallel;
        let (dp, pp, tp) = (p.layout.dp, p.layout.pp, p.layout.tp);
        let most = h.most;
        let b = &mut scratch.hybrid;
        b.works.resize(dp * most, 1.0);
        if let Some(law) = &p.microbatch_work {
            b.works.iter_mut().for_each(|w| *w = law.sample(&mut rng));
        }
        b.compute.resize(dp * pp * most, 0.0);
        let n = self.n;
        for d in 0..dp {
            for i in 0..pp {
                let row = &mut b.compute[(d * pp + i) * most..][..most];
                let first = p.layout.rank(d, i, 0);
                for (j, x) in row.iter_mut().enumerate() {
                    let draws = &scratch.draws[j * n + first..][..tp];
                    let slowest = draws.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    *x = p.stage_work[i] * b.works[d * most + j] * slowest;
                }
            }
        }
    }

    /// Trial `trial`'s first iteration of slot `slot` (the schemes', then
    /// the uncoded baseline), op by op; `None` for a flat cluster.
    pub fn pipeline_timeline(&self, seed: u64, trial: u64, slot: usize) -> Option<Timeline> {
        let h = self.hybrid.as_ref()?;
        let mut scratch = self.scratch();
        self.fill_compute(h, (seed, trial), &mut scratch);
        let p = &h.parallel;
        let (dp, pp, tp, most) = (p.layout.dp, p.layout.pp, p.layout.tp, h.most);
        let (k, rule, cost) = h.slots[slot];
        let program = &h.programs[k];
        let m = program.microbatches();
        let share = p.forward_share();
        let b = &mut scratch.hybrid;
        let mut ops = Vec::with_capacity(dp * program.order().len());
        let mut done = vec![0.0; pp * dp];
        let mut tails = vec![0.0; pp * dp];
        for d in 0..dp {
            let compute = &b.compute[d * pp * most..(d + 1) * pp * most];
            program.run(compute, most, share, p.p2p_time, &mut b.times);
            for (i, &end) in b.times.free.iter().enumerate() {
                done[i * dp + d] = end;
                tails[i * dp + d] = program.last_backward(compute[i * most + m - 1], share);
            }
            for op in program.order() {
                let (i, j) = (op.stage as usize, op.microbatch as usize);
                let x = compute[i * most + j];
                let part = |v: f64| program.duration(op, v, share);
                let end = program.end(&b.times, op);
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
        let sum = Sum {
            rule,
            buckets: h.buckets,
            cost,
        };
        for i in 0..pp {
            let stage = i * dp..(i + 1) * dp;
            let (start, end) = sum.span(&done[stage.clone()], &tails[stage.clone()], &mut b.ready, &mut b.column);
            last = last.max(end);
            sums.push(TimelineSum {
                stage: i,
                start,
                end,
                participants: participants(rule, &done[stage]),
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

/// The replicas whose gradients `rule` sums, for replicas that end at
/// `ends`: the first k, or the first of each group.
fn participants(rule: Rule, ends: &[f64]) -> Vec<usize> {
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

/// A stage's gradient sum across the replicas: in K buckets, bucket j ready
/// on a replica j/K of the way through its last backward (the gradient
/// accumulates over the microbatches, so only the last backward overlaps
/// the sums), each summed once the rule is met by the replicas and the
/// previous bucket's sum has ended, at `cost` each.
#[derive(Debug, Clone, Copy)]
struct Sum {
    rule: Rule,
    buckets: usize,
    cost: f64,
}

impl Sum {
    /// When the first bucket's sum starts and the last one's ends, for
    /// replicas whose last backward ends at `ends` after lasting `tails`.
    fn span(&self, ends: &[f64], tails: &[f64], ready: &mut Vec<f64>, column: &mut Vec<f64>) -> (f64, f64) {
        if self.buckets == 1 {
            let t = rule_time(self.rule, ends, column);
            return (t, t + self.cost);
        }
        let k = self.buckets as f64;
        let (mut first, mut end) = (f64::NAN, f64::NEG_INFINITY);
        for j in 1..=self.buckets {
            let left = 1.0 - j as f64 / k;
            ready.clear();
            ready.extend(ends.iter().zip(tails).map(|(g, b)| g - left * b));
            let start = rule_time(self.rule, ready, column).max(end);
            if j == 1 {
                first = start;
            }
            end = start + self.cost;
        }
        (first, end)
    }
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
