//! Replaying a job on its dependency graph: every (step, dp rank) lane in
//! one pass per unit, as max-plus recursions vectorised over lanes.
//!
//! An op starts when its in-lane predecessors have ended (plus its launch
//! delay, in the replay that reproduces the trace). An op outside any
//! collective takes its duration. The members of a collective each start
//! when ready, and all end at the latest member's start plus their own
//! transfer time; a data-parallel collective's latest member is taken over
//! every dp rank of the step.

use super::graph::{Graph, Unit};

/// The lanes of a job, with the graph they share. Per-op arrays are
/// node-major: entry `node * lanes + lane`.
#[derive(Debug, Clone)]
pub struct Lanes<'a> {
    /// The dependency graph.
    pub graph: &'a Graph,
    /// Data-parallel ranks (lanes per step).
    pub dp: usize,
    /// Steps.
    pub steps: usize,
    /// The optimizer ops, whose last end is the step's time.
    optimizers: Vec<u32>,
}

/// The start and end of every op of a replay (node-major).
#[derive(Debug, Clone)]
pub struct Timeline {
    /// Start times (seconds from the step's start).
    pub start: Vec<f64>,
    /// End times.
    pub end: Vec<f64>,
}

impl<'a> Lanes<'a> {
    /// The lanes of `steps` steps of `dp` ranks each.
    pub fn new(graph: &'a Graph, dp: usize, steps: usize) -> Self {
        let optimizers = (0..graph.len() as u32)
            .filter(|&v| graph.nodes[v as usize].optype == super::optype::OpType::Optimizer)
            .collect();
        Lanes {
            graph,
            dp,
            steps,
            optimizers,
        }
    }

    /// Lanes in all.
    pub fn lanes(&self) -> usize {
        self.dp * self.steps
    }

    /// Replays the job with durations `d` and transfer times `x` (used by
    /// collective members), and launch delays if given.
    pub fn replay(&self, d: &[f64], x: &[f64], delay: Option<&[f64]>) -> Timeline {
        let lanes = self.lanes();
        let n = self.graph.len() * lanes;
        let mut t = Timeline {
            start: vec![0.0; n],
            end: vec![0.0; n],
        };
        let mut peak = vec![0.0; lanes];
        for unit in &self.graph.order {
            match *unit {
                Unit::Op(v) => {
                    let at = v as usize * lanes;
                    self.ready(v, &mut t, delay);
                    let span = at..at + lanes;
                    for ((e, s), d) in t.end[span.clone()].iter_mut().zip(&t.start[span.clone()]).zip(&d[span]) {
                        *e = s + d;
                    }
                }
                Unit::Group(g) => {
                    let members = &self.graph.groups[g as usize];
                    for &w in members {
                        self.ready(w, &mut t, delay);
                    }
                    self.group_peak(members, &t.start, &mut peak);
                    for &w in members {
                        let at = w as usize * lanes;
                        for l in 0..lanes {
                            t.end[at + l] = peak[l] + x[at + l];
                        }
                    }
                }
            }
        }
        t
    }

    /// The latest start of a collective's members in each lane, taken over
    /// the step's dp ranks for a data-parallel collective.
    pub(crate) fn group_peak(&self, members: &[u32], start: &[f64], peak: &mut [f64]) {
        let lanes = self.lanes();
        peak.fill(f64::NEG_INFINITY);
        for &w in members {
            let at = w as usize * lanes;
            for (p, s) in peak.iter_mut().zip(&start[at..at + lanes]) {
                *p = p.max(*s);
            }
        }
        if members.iter().any(|&w| self.graph.dp_sync[w as usize]) {
            for step in peak.chunks_mut(self.dp) {
                let m = step.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                step.fill(m);
            }
        }
    }

    /// Sets the start of op `v` in every lane: the last end of its
    /// predecessors (0 for a source) plus its delay.
    fn ready(&self, v: u32, t: &mut Timeline, delay: Option<&[f64]>) {
        let lanes = self.lanes();
        let at = v as usize * lanes;
        let deps = &self.graph.deps[v as usize];
        let init = if deps.is_empty() { 0.0 } else { f64::NEG_INFINITY };
        t.start[at..at + lanes].fill(init);
        for &u in deps {
            let from = u as usize * lanes;
            let source = &t.end[from..from + lanes];
            for (s, e) in t.start[at..at + lanes].iter_mut().zip(source) {
                *s = s.max(*e);
            }
        }
        if let Some(delay) = delay {
            for (s, dl) in t.start[at..at + lanes].iter_mut().zip(&delay[at..at + lanes]) {
                *s += dl;
            }
        }
    }

    /// Each step's time: the last end of an optimizer op over the step's lanes.
    pub fn step_times(&self, t: &Timeline) -> Vec<f64> {
        let lanes = self.lanes();
        let mut times = vec![f64::NEG_INFINITY; self.steps];
        for &v in &self.optimizers {
            let at = v as usize * lanes;
            for (s, time) in times.iter_mut().enumerate() {
                let lane_ends = &t.end[at + s * self.dp..at + (s + 1) * self.dp];
                *time = lane_ends.iter().copied().fold(*time, f64::max);
            }
        }
        times
    }
}
