//! Trials that replay whole recorded steps: where n is the trace's workers
//! and nothing else in a trial is random (no random transfer, no strategy's
//! timeline), a trial's values are a function of the one step it starts
//! at, drawn uniformly from the trace's M steps. The plan evaluates each
//! start once, by the same path as any trial with the start given instead
//! of drawn, and a trial then copies its row; the accumulator counts a
//! chunk by how many trials start at each step (see
//! [`crate::engine::pass::StepTable`]). The values are the same bits as
//! evaluating every trial: a trial's values depend on its start alone.

use super::*;

/// Most values (steps × slots) a plan keeps as step rows: 1 Mi (8 MiB,
/// and twice that for a pass's deviations and their squares); a larger
/// trace's trials are evaluated one by one.
const MAX_ROW_VALUES: usize = 1 << 20;

/// Each start step's row of slot values, step-major.
#[derive(Debug, Clone)]
pub struct StepRows {
    rows: Vec<f64>,
    slots: usize,
}

impl StepRows {
    /// The rows `rows`, step-major, `slots` values per step.
    ///
    /// # Panics
    /// If `slots` is 0 or does not divide `rows.len()`.
    pub fn new(rows: Vec<f64>, slots: usize) -> Self {
        assert!(
            slots > 0 && rows.len().is_multiple_of(slots),
            "whole rows of at least one slot"
        );
        Self { rows, slots }
    }

    /// The number of steps a trial can start at.
    pub fn steps(&self) -> usize {
        self.rows.len() / self.slots
    }

    /// The number of slots of a row.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Every step's row, step-major: step s's value of slot j at `s·slots + j`.
    pub fn rows(&self) -> &[f64] {
        &self.rows
    }

    /// The slot values of the trials that start at `step`.
    pub fn row(&self, step: usize) -> &[f64] {
        &self.rows[step * self.slots..(step + 1) * self.slots]
    }
}

impl TrialPlan {
    /// The step rows, where a trial's values depend on its start step alone.
    pub fn step_rows(&self) -> Option<&StepRows> {
        self.step_rows.as_deref()
    }

    /// The same plan evaluating every trial, without step rows: for
    /// checking that the rows change no bit of a run.
    pub fn without_step_rows(mut self) -> Self {
        self.step_rows = None;
        self
    }

    /// Trial `trial`'s values, its start step's row. Out of line: the
    /// accumulator counts such runs by step and seldom calls it, and the
    /// per-trial path stays as compact as without rows.
    #[cold]
    #[inline(never)]
    pub(super) fn copy_step_row(&self, seed: u64, trial: u64, out: &mut [f64]) {
        let rows = self.step_rows.as_ref().expect("a plan with step rows");
        out.copy_from_slice(rows.row(self.start_step(seed, trial)));
    }

    /// The step trial `trial` of seed `seed` starts at, as its first
    /// iteration draws it (the first draw of its stream), where the plan
    /// keeps step rows.
    ///
    /// # Panics
    /// If the plan keeps no step rows.
    #[inline]
    pub(crate) fn start_step(&self, seed: u64, trial: u64) -> usize {
        let rows = self.step_rows.as_ref().expect("a plan with step rows");
        trial_rng(seed, trial * self.iterations).random_range(0..rows.steps())
    }

    /// Each start step's row, evaluated by [`Self::run`] with the start
    /// given, where a trial's values depend on it alone and the rows fit
    /// in [`MAX_ROW_VALUES`].
    pub(super) fn build_step_rows(&self) -> Option<Arc<StepRows>> {
        let Workers::Replay(trace) = &self.workers else {
            return None;
        };
        let fixed_transfers = matches!(self.delivery.comm.transfer, Transfer::Constant(_));
        let applies = trace.workers() == self.n
            && self.sampling == Sampling::Draws
            && fixed_transfers
            && !self.has_strategy
            && !self.stateful
            && self.step_rows.is_none()
            && trace.steps().saturating_mul(self.slots) <= MAX_ROW_VALUES;
        if !applies {
            return None;
        }
        let mut scratch = self.scratch();
        let mut rows = vec![0.0; trace.steps() * self.slots];
        for (step, row) in rows.chunks_exact_mut(self.slots).enumerate() {
            scratch.carried.given_start = Some(step);
            self.run(0, 0, &mut scratch, row);
        }
        Some(Arc::new(StepRows::new(rows, self.slots)))
    }
}
