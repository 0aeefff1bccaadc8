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
    pub(crate) fn arrivals_in<'s>(
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
        let e = self.eval(slot).clone();
        self.fill_transfers(seed, trial, scratch);
        let mut rng = trial_rng(seed, trial);
        self.draw(&mut rng, scratch);
        self.arrivals_of_drawn(&e, scratch);
        &scratch.arrival
    }

    /// Slot `slot`'s evaluation.
    fn eval(&self, slot: usize) -> &Eval {
        self.load_groups
            .iter()
            .flat_map(|g| &g.evals)
            .find(|e| e.slot == slot)
            .expect("a slot of this plan")
    }

    /// `e`'s arrivals in `scratch.arrival`, from the iteration's draws and
    /// transfers already in `scratch`.
    fn arrivals_of_drawn(&self, e: &Eval, scratch: &mut Scratch) {
        let n = self.n;
        let mut times = std::mem::take(&mut scratch.times);
        if self.model.is_monotone() {
            times.copy_from_slice(&scratch.draws[..n]);
        } else {
            for (i, t) in times.iter_mut().enumerate() {
                *t = additive_time(&scratch.draws, n, i, e.load);
            }
        }
        self.arrivals_of(e, &times, scratch);
        scratch.times = times;
    }

    /// [`TrialPlan::run_iteration_marked`], and beside it, for every slot
    /// decided by a recovery rule (no strategy), the arrival of each
    /// worker's message in `arrivals` (slot-major, n per slot; the other
    /// slots' entries are left as they were): everything a trainer needs
    /// to know which results the master used in this iteration.
    ///
    /// # Panics
    /// As [`TrialPlan::arrivals`], or if `arrivals` is not slots × n long.
    pub(crate) fn run_iteration_observed<'s>(
        &self,
        seed: u64,
        trial: u64,
        iteration: u64,
        scratch: &'s mut Scratch,
        out: &mut [f64],
        arrivals: &mut [f64],
    ) -> &'s [u32] {
        assert_eq!(self.sampling, Sampling::Draws, "identities need drawn worker times");
        assert_eq!(arrivals.len(), self.slots * self.n, "slots × n arrivals");
        self.run_iteration_marked(seed, trial, iteration, scratch, out);
        let n = self.n;
        for group in &self.load_groups {
            for e in group.evals.iter().filter(|e| e.strategy.is_none()) {
                self.arrivals_of_drawn(e, scratch);
                arrivals[e.slot * n..(e.slot + 1) * n].copy_from_slice(&scratch.arrival);
            }
        }
        scratch.used.as_deref().expect("set by run_iteration_marked")
    }

    /// The asynchronous timeline of slot `slot` (an asynchronous strategy)
    /// over trial `trial`, with no warm-up: every worker starts on model 0
    /// at time 0 with the draws of the trial's first iteration, and
    /// `update` is called at each update until it returns false. Where the
    /// workers carry a state (persistence, groups), it steps once per
    /// update, as it does once per iteration of a synchronous scheme;
    /// transfer times are drawn anew at each update, as for an iteration.
    ///
    /// # Panics
    /// As [`TrialPlan::arrivals`], or if the slot is not asynchronous.
    pub fn run_asynchronous(
        &self,
        slot: usize,
        seed: u64,
        trial: u64,
        scratch: &mut Scratch,
        mut update: impl FnMut(asynchronous::Update) -> bool,
    ) {
        assert_eq!(self.sampling, Sampling::Draws, "identities need drawn worker times");
        let e = self.eval(slot).clone();
        let Some(Strategy::Async { k, batch }) = e.strategy else {
            panic!("slot {slot} is not an asynchronous strategy")
        };
        let first = trial * self.iterations;
        scratch.carried.iteration = 0;
        self.fill_transfers(seed, first, scratch);
        let mut rng = trial_rng(seed, first);
        self.draw(&mut rng, scratch);
        scratch.extra = Some(trial_rng(seed ^ strategy::EXTRA_STREAM, first));
        let n = self.n;
        let draws = std::mem::take(&mut scratch.draws);
        let times = draws[..n].to_vec();
        self.async_timeline(&e, k, batch, &times, &draws, scratch, |plan, scratch, u| {
            let index = u.index;
            if !update(u) {
                return false;
            }
            plan.fill_transfers(seed, first + index + 1, scratch);
            plan.step_states(scratch);
            true
        });
        scratch.draws = draws;
    }

    /// Runs iteration `iteration` of trial `trial` (after its earlier
    /// iterations, in order, with the same `scratch`), the same draws as
    /// [`TrialPlan::run`] makes for it, and returns per slot and worker
    /// (slot-major) how many of the worker's results are in the slot's
    /// update, for the slots whose strategy records it (see [`Scratch`]'s
    /// `used`).
    pub fn run_iteration_marked<'s>(
        &self,
        seed: u64,
        trial: u64,
        iteration: u64,
        scratch: &'s mut Scratch,
        out: &mut [f64],
    ) -> &'s [u32] {
        scratch.carried.iteration = iteration;
        scratch.used.get_or_insert_with(|| vec![0; self.slots * self.n]);
        self.run_iteration(seed, trial * self.iterations + iteration, scratch, out);
        scratch.used.as_deref().expect("set above")
    }
}
