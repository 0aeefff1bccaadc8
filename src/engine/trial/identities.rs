//! Which worker finished when, beyond the iteration times: the arrivals of
//! one slot in one iteration (for the approximation error and the data
//! share), and which workers' results enter a strategy's update.

use super::*;

impl TrialPlan {
    /// The arrival time of each worker's message for slot `slot` in trial
    /// `trial` of seed `seed`, as the draw path draws that trial: which
    /// worker arrives when, for the statistics that need identities (the
    /// approximation error).
    ///
    /// # Panics
    /// If the plan does not draw worker times ([`Sampling::Draws`]) or the
    /// slot does not exist.
    pub fn arrivals<'s>(&self, slot: usize, seed: u64, trial: u64, scratch: &'s mut Scratch) -> &'s [f64] {
        scratch.carried.iteration = 0;
        self.arrivals_of_stream(slot, seed, trial, scratch)
    }

    /// The arrivals of iteration `iteration` of trial `trial`, the same
    /// draws as [`TrialPlan::run`] makes for it, where the trial's earlier
    /// iterations were drawn with the same `scratch` in order (their states
    /// carry over).
    ///
    /// # Panics
    /// As [`TrialPlan::arrivals`].
    pub fn arrivals_in<'s>(
        &self,
        slot: usize,
        seed: u64,
        trial: u64,
        iteration: u64,
        scratch: &'s mut Scratch,
    ) -> &'s [f64] {
        scratch.carried.iteration = iteration;
        self.arrivals_of_stream(slot, seed, trial * self.iterations + iteration, scratch)
    }

    fn arrivals_of_stream<'s>(&self, slot: usize, seed: u64, trial: u64, scratch: &'s mut Scratch) -> &'s [f64] {
        assert_eq!(self.sampling, Sampling::Draws, "identities need drawn worker times");
        let e = self
            .load_groups
            .iter()
            .flat_map(|g| &g.evals)
            .find(|e| e.slot == slot)
            .expect("a slot of this plan")
            .clone();
        self.fill_transfers(seed, trial, scratch);
        let mut rng = trial_rng(seed, trial);
        self.draw(&mut rng, scratch);
        let n = self.n;
        let mut times = std::mem::take(&mut scratch.times);
        if self.model.is_monotone() {
            times.copy_from_slice(&scratch.draws[..n]);
        } else {
            for (i, t) in times.iter_mut().enumerate() {
                *t = additive_time(&scratch.draws, n, i, e.load);
            }
        }
        self.arrivals_of(&e, &times, scratch);
        scratch.times = times;
        &scratch.arrival
    }

    /// Runs iteration `iteration` of trial `trial` (after its earlier
    /// iterations, in order, with the same `scratch`), the same draws as
    /// [`TrialPlan::run`] makes for it, and returns per slot and worker
    /// (slot-major) whether the worker's result is in the slot's update,
    /// for the slots whose strategy records it (see [`Scratch`]'s `used`).
    pub fn run_iteration_marked<'s>(
        &self,
        seed: u64,
        trial: u64,
        iteration: u64,
        scratch: &'s mut Scratch,
        out: &mut [f64],
    ) -> &'s [bool] {
        scratch.carried.iteration = iteration;
        scratch.used.get_or_insert_with(|| vec![false; self.slots * self.n]);
        self.run_iteration(seed, trial * self.iterations + iteration, scratch, out);
        scratch.used.as_deref().expect("set above")
    }
}
