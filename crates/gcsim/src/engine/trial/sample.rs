//! Sampling: one trial's worker times, by draws (one per worker, or per
//! unit of work) or by order statistics (Rényi's representation, the top
//! block first and deeper ones on demand; worker classes' runs merged). See
//! the notes of the parent module for the formulas.

use super::draws::{fill, fill_in_state};
use super::laws::{OverLaw, erlang_loads, hypoexponential_arrivals};
use super::strategy::{async_reads_order_statistics, copies_on_order_statistics};
use super::*;
use crate::dist::{Dist, next_state};
use crate::rng::weighted_exponentials;

/// Key of the stream that assigns ranks to workers (XORed with the seed).
pub(super) const RANK_STREAM: u64 = 0x4A2C_5EED_0F0F_5EED;

/// Key of the stream of the fastest worker's draw below the top block, for
/// deadlines (XORed with the seed).
pub(super) const FASTEST_STREAM: u64 = 0xFA57_E575_0F0F_5EED;

/// How many of the largest order statistics every order-statistic trial
/// draws: the top half of the workers and one more (every s ≤ n/2), at
/// least 32 and at most 1024; the rest are drawn on demand.
pub fn top_block(n: usize) -> usize {
    (n / 2 + 1).clamp(32, 1024).min(n)
}

/// Whether some configuration of `study` needs to know which worker
/// finished when, not only the order statistics: one decoded with its real
/// code (the rank decoder, a custom code), or one whose workers' loads
/// differ.
pub fn needs_identities(study: &Study) -> bool {
    study
        .schemes()
        .iter()
        .any(|s| study.decodes_by_code(s) || study.per_worker_loads(s).is_some())
}

/// Whether `study`'s worker times can be drawn as order statistics: i.i.d.
/// workers whose law is an increasing function of a standard exponential
/// (`Standard`: exponential, shifted-exponential, Pareto, log-normal and
/// Weibull laws without a straggler mixture, and the bootstrap from a
/// trace) under a monotone load or Erlang loads (see `erlang_loads`),
/// with the threshold decoder and no transfer times or hypoexponential
/// arrivals (see `hypoexponential_arrivals`); or a heterogeneous cluster
/// whose every class is such a law (each class's order statistics,
/// merged). A deadline, which reads the fastest
/// worker's time besides its rule's, takes it with one law for all workers
/// and no transfers. Mixtures take the draw path, and so do studies with a
/// strategy's timeline (which needs each worker's draw and more), except
/// K-async with exponential workers ([`async_reads_order_statistics`]) and
/// speculative copies from one law (`copies_on_order_statistics`).
pub fn order_statistics_apply(study: &Study) -> bool {
    if study.parallel().is_some() {
        return false;
    }
    // A deadline reads the fastest worker's time too: drawn by its own law
    // below the top block (see `fastest_standard`), for one law shared by
    // every slot (no per-slot laws, no classes, no transfers).
    // Under a collective a deadline's participants are the workers in by
    // it, a count the top block does not give: the draw path counts them.
    let deadlines_apply = study.load_model().is_monotone()
        && !study.comm().transfers()
        && Standard::of(study.workers()).is_some()
        && study.aggregation().collective().is_none();
    (!study.comm().transfers() || hypoexponential_arrivals(study))
        && study.schemes().iter().all(|s| {
            (s.strategy().is_none() || async_reads_order_statistics(study, s) || copies_on_order_statistics(study, s))
                && (s.deadline().is_none() || deadlines_apply)
        })
        && !needs_identities(study)
        && study.decoder() == Decoder::Threshold
        && (study.load_model().is_monotone() || erlang_loads(study))
        // A shuffled placement holds for a trial's iterations; the
        // classes' order statistics place them anew in each.
        && (study.iterations() == 1 || !matches!(study.workers(), Workers::Classes { shuffle: true, .. }))
        && (Standard::of(study.workers()).is_some() || ClassLaws::of(study.workers()).is_some())
}

/// The law of E_(k₀), k₀ = n − B + 1, the lowest of the top `block`
/// order statistics of n (none when the block is every worker).
pub(super) fn split_law(n: usize, block: usize) -> Option<Arc<HazardQuantile>> {
    let k0 = n - block + 1;
    (k0 > 1).then(|| Arc::new(HazardQuantile::order_statistic(k0 as u64, n as u64)))
}

impl TrialPlan {
    /// The block B every trial draws (see [`OrderStatisticSampler`]'s
    /// `block`) and the law of its lowest, from the slots' rules.
    pub(super) fn plan_block(&mut self) {
        // Where every slot reads only the largest time (the uncoded time,
        // s = 0, frc's groups, deadlines, which read the fastest below it),
        // a trial draws that alone, by its quantile: one exponential instead
        // of the top block's B. Its values are then other samples of the
        // same law than in a study that reads deeper.
        let only_largest = self.sampling == Sampling::OrderStatistics
            && self.path == RulePath::Fast
            && self.order.class_laws.is_none()
            && self.order.copies.is_empty()
            && self
                .order
                .top_ranks
                .iter()
                .all(|&r| r == u32::MAX || r as usize == self.n - 1)
            && self
                .order
                .other_evals
                .iter()
                .all(|e| matches!(e.rule, Rule::Groups { .. }));
        let block = if only_largest { 1 } else { top_block(self.n) };
        if block != self.order.block {
            self.order.block = block;
            self.order.split = split_law(self.n, block);
        }
    }

    /// The worker law as an increasing function of a standard exponential.
    #[inline]
    pub(super) fn law_of_standard(&self, e: f64) -> f64 {
        self.order.standard.apply(e)
    }

    pub(super) fn run_order_statistics(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        let mut rng = trial_rng(seed, trial);
        let mut lower = self.draw_top(&mut rng, scratch);
        if self.path == RulePath::Events {
            // A uniformly random permutation, on the trial's rank stream.
            let mut rank_rng = trial_rng(seed ^ RANK_STREAM, trial);
            for (i, r) in scratch.worker_rank.iter_mut().enumerate() {
                *r = i as u32;
            }
            shuffle(&mut scratch.worker_rank, &mut rank_rng);
        }
        // Where each slot has its own law (Erlang loads, hypoexponential
        // arrivals), the walk runs on the standard exponentials and each
        // slot's law applies after it (each is increasing in E).
        let per_slot = !self.order.slot_laws.is_empty();
        if self.path == RulePath::Events {
            self.reach(0, &mut rng, scratch, &mut lower);
            for i in 0..self.n {
                let e = self.order_statistic(scratch.worker_rank[i] as usize, scratch, lower);
                scratch.times[i] = if per_slot { e } else { self.law_of_standard(e) };
            }
            for e in self
                .load_groups
                .iter()
                .flat_map(|g| &g.evals)
                .filter(|e| e.strategy.is_none())
            {
                let raw = completion_by_events(e.rule, &scratch.times, &mut scratch.order);
                out[e.slot] = if per_slot { raw } else { self.model.apply(e.load, raw) };
            }
            if per_slot {
                self.apply_slot_laws(out);
            }
            if !self.order.deadlines.is_empty() {
                self.apply_deadlines(seed, trial, scratch, out);
            }
            self.run_copies((seed, trial), &mut rng, scratch, &mut lower, out);
            return;
        }
        // Each configuration's standard order statistic, by slot, then the
        // law and the load model applied in one loop per (law, model) pair.
        gather_top(&scratch.sorted, &self.order.top_ranks, self.order.top_run, out);
        let maximum = scratch.sorted[self.n - 1];
        for e in &self.order.other_evals {
            out[e.slot] = match e.rule {
                Rule::KOfN(k) => {
                    if k - 1 < lower {
                        self.reach(k - 1, &mut rng, scratch, &mut lower);
                    }
                    self.order_statistic(k - 1, scratch, lower)
                }
                Rule::Groups { size } => max_of_group_minima(maximum, size),
            };
        }
        if per_slot {
            self.apply_slot_laws(out);
            return;
        }
        // One loop per law, each law's transform inlined.
        struct Loads<'a> {
            plan: &'a TrialPlan,
            out: &'a mut [f64],
        }
        impl OverLaw for Loads<'_> {
            type Out = ();
            #[inline(always)]
            fn run(self, law: impl Fn(f64) -> f64) {
                self.plan.apply_loads(self.out, law);
            }
            fn run_empirical(self, table: &Empirical) {
                table.apply_in_place(self.out);
                self.plan.apply_loads(self.out, |v| v);
            }
        }
        self.order.standard.with_law(Loads { plan: self, out });
        if !self.order.deadlines.is_empty() {
            self.apply_deadlines(seed, trial, scratch, out);
        }
        if !self.order.copies.is_empty() {
            self.run_copies((seed, trial), &mut rng, scratch, &mut lower, out);
        }
    }

    /// Each speculative slot's time, by rank (see
    /// [`Self::speculative_by_ranks`]).
    // Out of line, so that the trial's loop without copies stays as
    // compact as before (its law's transform inlined).
    #[inline(never)]
    fn run_copies(
        &self,
        at: (u64, u64),
        rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
        scratch: &mut Scratch,
        lower: &mut usize,
        out: &mut [f64],
    ) {
        for copies in &self.order.copies {
            out[copies.slot] = self.speculative_by_ranks(copies, at, rng, scratch, lower);
        }
    }

    /// `out[slot] ← model.apply(load of slot, law(out[slot]))` for every
    /// slot, as [`Self::law_of_standard`] and [`LoadModel::apply`] compute it
    /// (the same operations, so the same bits as the event walk).
    #[inline(always)]
    pub(super) fn apply_loads(&self, out: &mut [f64], law: impl Fn(f64) -> f64) {
        let loads = &self.slot_loads;
        match self.model {
            LoadModel::Fixed => out.iter_mut().for_each(|v| *v = law(*v)),
            LoadModel::Scaled => out.iter_mut().zip(loads).for_each(|(v, &l)| *v = l * law(*v)),
            LoadModel::Affine { unit_time } => out
                .iter_mut()
                .zip(loads)
                .for_each(|(v, &l)| *v = unit_time * l + law(*v)),
            LoadModel::Additive => unreachable!("Erlang loads apply in apply_slot_laws"),
        }
    }

    /// `out[slot] ← offset + quantile(out[slot])·scale` for every slot, by
    /// the slot's own law (see [`super::laws::slot_laws`]).
    /// Four slots at a time ([`HazardQuantile::at4`]), the same bits.
    fn apply_slot_laws(&self, out: &mut [f64]) {
        let n = out.len().min(self.order.slot_laws.len());
        let (out, laws) = (&mut out[..n], &self.order.slot_laws[..n]);
        let mut quads = out.chunks_exact_mut(4);
        let mut law_quads = laws.chunks_exact(4);
        for (v, law) in (&mut quads).zip(&mut law_quads) {
            let q = HazardQuantile::at4(
                std::array::from_fn(|l| &*law[l].quantile),
                std::array::from_fn(|l| v[l]),
            );
            for l in 0..4 {
                v[l] = law[l].offset + q[l] * law[l].scale;
            }
        }
        for (v, law) in quads.into_remainder().iter_mut().zip(law_quads.remainder()) {
            *v = law.offset + law.quantile.at(*v) * law.scale;
        }
    }

    /// Draws the top B (`block`, see [`top_block`]) standard exponential order statistics
    /// into `scratch.sorted` (index j holds E_(j+1)); returns the index of
    /// the lowest one drawn.
    pub(super) fn draw_top(&self, rng: &mut rand_xoshiro::Xoshiro256PlusPlus, scratch: &mut Scratch) -> usize {
        let lowest = if self.order.split.is_some() {
            let k0 = self.n - self.order.block + 1;
            scratch.sorted[k0 - 1] = self.lowest_of_top(rng);
            k0 - 1
        } else {
            0
        };
        let block = &mut scratch.sorted[lowest..];
        let weights = &self.order.weights[lowest..];
        let first = usize::from(lowest > 0);
        weighted_exponentials(rng, &mut block[first..], &weights[first..]);
        prefix_sum(block);
        lowest
    }

    /// E_(k₀), the lowest of the top block, by its quantile at the trial's
    /// first standard exponential.
    #[inline]
    pub(super) fn lowest_of_top(&self, rng: &mut rand_xoshiro::Xoshiro256PlusPlus) -> f64 {
        let law = self.order.split.as_ref().expect("a top block below n");
        let e: f64 = Exp1.sample(rng);
        law.at(e)
    }

    /// Extends the trial's order statistics down to index `rank`, top down
    /// in ln U (see the module notes), updating `lowest`.
    pub(super) fn reach(
        &self,
        rank: usize,
        rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
        scratch: &mut Scratch,
        lowest: &mut usize,
    ) {
        if *lowest > rank && *lowest + self.order.block == self.n {
            // ln U_(k₀) = ln(1 − e^(−E_(k₀))).
            scratch.low_order[*lowest] = -neg_ln_one_minus_exp(-scratch.sorted[*lowest]);
        }
        while *lowest > rank {
            let k = *lowest; // the next index down holds the k-th smallest
            let z: f64 = Exp1.sample(rng);
            scratch.low_order[k - 1] = scratch.low_order[k] - z / k as f64;
            *lowest = k - 1;
        }
    }

    /// E_(rank+1), for a `rank` at or above the lowest drawn.
    #[inline]
    pub(super) fn order_statistic(&self, rank: usize, scratch: &Scratch, lowest: usize) -> f64 {
        debug_assert!(rank >= lowest);
        match &self.order.split {
            Some(_) if rank < self.n - self.order.block => neg_ln_one_minus_exp(scratch.low_order[rank]),
            _ => scratch.sorted[rank],
        }
    }

    /// A heterogeneous cluster by order statistics: each class's sorted
    /// times by Rényi's representation (its own count of draws, in class
    /// order), merged into `scratch.sorted`; where a rule needs to know
    /// which worker finished, each class's times go to its workers in a
    /// uniformly random order (they are exchangeable), placed as
    /// [`Self::draw`] places classes.
    pub(super) fn run_class_order_statistics(
        &self,
        laws: &ClassLaws,
        seed: u64,
        trial: u64,
        scratch: &mut Scratch,
        out: &mut [f64],
    ) {
        let mut rng = trial_rng(seed, trial);
        match self.order.class_top {
            Some(need) if !self.delivery.comm.transfers() => {
                // Every slot a k-of-n rule on the merged top: its order
                // statistic and its load, as `evaluate` would take them.
                laws.draw_top(need, (seed, trial), &mut rng, scratch);
                gather_top(&scratch.sorted, &self.order.top_ranks, self.order.top_run, out);
                self.apply_loads(out, |x| x);
                return;
            }
            Some(need) => {
                laws.draw_whole(&mut rng, &mut scratch.class_runs);
                let runs = laws.runs(&scratch.class_runs, None);
                merge_runs_top(runs, need, &mut scratch.sorted, &mut scratch.merge);
            }
            None => {
                laws.draw_whole(&mut rng, &mut scratch.class_runs);
                merge_runs(
                    &scratch.class_runs,
                    &laws.starts[1..],
                    &mut scratch.sorted,
                    &mut scratch.merge,
                );
            }
        }
        let group = &self.load_groups[0];
        if self.path == RulePath::Events || !group.group_sizes.is_empty() {
            let mut rank_rng = trial_rng(seed ^ RANK_STREAM, trial);
            let counts = laws.classes.iter().map(|(m, _, _)| *m);
            place_classes(&mut scratch.worker_class, counts, laws.shuffle, &mut rank_rng);
            // Each class's run in random order, dealt to its workers in turn.
            for w in laws.starts.windows(2) {
                shuffle(&mut scratch.class_runs[w[0]..w[1]], &mut rank_rng);
            }
            let next = &mut scratch.class_next;
            next.clear();
            next.extend_from_slice(&laws.starts);
            for (t, &c) in scratch.times.iter_mut().zip(&scratch.worker_class) {
                *t = scratch.class_runs[next[c as usize]];
                next[c as usize] += 1;
            }
        }
        let times = std::mem::take(&mut scratch.times);
        self.evaluate(group, &times, scratch, out);
        scratch.times = times;
    }

    pub(super) fn run_draws(&self, seed: u64, trial: u64, scratch: &mut Scratch, out: &mut [f64]) {
        let mut rng = trial_rng(seed, trial);
        self.draw(&mut rng, scratch);
        if self.has_strategy {
            scratch.extra = Some(trial_rng(seed ^ super::strategy::EXTRA_STREAM, trial));
        }
        let n = self.n;
        if self.model.is_monotone() {
            let group = &self.load_groups[0];
            let raw = std::mem::take(&mut scratch.draws);
            self.evaluate(group, &raw[..n], scratch, out);
            scratch.draws = raw;
            return;
        }
        // Additive: load groups ascend in load, so running unit sums are extended in place.
        scratch.unit_sums.fill(0.0);
        let mut summed = 0;
        for group in &self.load_groups {
            let whole = group.load.floor() as usize;
            let frac = group.load - whole as f64;
            while summed < whole {
                let unit = &scratch.draws[summed * n..(summed + 1) * n];
                scratch.unit_sums.iter_mut().zip(unit).for_each(|(c, u)| *c += u);
                summed += 1;
            }
            if frac > 0.0 {
                let unit = &scratch.draws[whole * n..(whole + 1) * n];
                for ((t, c), u) in scratch.times.iter_mut().zip(&scratch.unit_sums).zip(unit) {
                    *t = c + frac * u;
                }
            } else {
                scratch.times.copy_from_slice(&scratch.unit_sums);
            }
            let times = std::mem::take(&mut scratch.times);
            self.evaluate(group, &times, scratch, out);
            scratch.times = times;
        }
    }

    /// One iteration's worker times (unit-major under `additive`).
    ///
    /// Workers that carry a state (see [`super::laws::stateful`]) draw it first, each
    /// group's then each worker's (one uniform each, in index order, by
    /// [`next_state`] from the previous iteration's), then their base draws
    /// in that state. A class placement is drawn in a trial's first
    /// iteration only, and a replay's start step; later iterations replay
    /// the steps that follow it.
    pub(super) fn draw(&self, rng: &mut rand_xoshiro::Xoshiro256PlusPlus, scratch: &mut Scratch) {
        let n = self.n;
        let first = scratch.carried.iteration == 0;
        match &self.workers {
            Workers::Iid(dist) if self.stateful => {
                self.draw_states(rng, &mut scratch.carried, |_| dist);
                let carried = &scratch.carried;
                if dist.groups().is_none() {
                    // The own state alone (the common straggler mixture): no
                    // group to look up per draw, every unit in one loop.
                    fill_in_state(dist, rng, &mut scratch.draws, &carried.own);
                } else {
                    for unit in scratch.draws.chunks_exact_mut(n) {
                        for (w, d) in unit.iter_mut().enumerate() {
                            *d = carried.draw(dist, rng, w);
                        }
                    }
                }
            }
            Workers::Iid(dist) => fill(dist, rng, &mut scratch.draws),
            Workers::Classes { classes, shuffle } => {
                if first {
                    place_classes(
                        &mut scratch.worker_class,
                        classes.iter().map(|(m, _)| *m),
                        *shuffle,
                        rng,
                    );
                }
                if self.stateful {
                    let class = &scratch.worker_class;
                    self.draw_states(rng, &mut scratch.carried, |w| &classes[class[w] as usize].1);
                }
                let carried = &scratch.carried;
                for unit in scratch.draws.chunks_exact_mut(n) {
                    for (w, (d, &c)) in unit.iter_mut().zip(&scratch.worker_class).enumerate() {
                        let law = &classes[c as usize].1;
                        *d = if self.stateful {
                            carried.draw(law, rng, w)
                        } else {
                            law.sample(rng)
                        };
                    }
                }
            }
            Workers::Trace(trace) => {
                let all = trace.all();
                scratch
                    .draws
                    .iter_mut()
                    .for_each(|d| *d = all[rng.random_range(0..all.len())]);
            }
            Workers::Replay(trace) => {
                // One recorded step per trial; over several iterations,
                // consecutive steps from a random start, wrapping, each
                // worker replaying the same recorded worker throughout.
                let carried = &mut scratch.carried;
                if first {
                    carried.replay_start = match carried.given_start {
                        Some(step) => step,
                        None => rng.random_range(0..trace.steps()),
                    };
                    carried.replay_workers.clear();
                    if trace.workers() != n {
                        let m = trace.workers();
                        carried.replay_workers.extend((0..n).map(|_| rng.random_range(0..m)));
                    }
                }
                let at = (carried.replay_start as u64 + carried.iteration) % trace.steps() as u64;
                let step = trace.step(at as usize);
                if carried.replay_workers.is_empty() {
                    scratch.draws.copy_from_slice(step);
                    carried.replayed_step = Some(at as usize);
                } else {
                    for (d, &w) in scratch.draws.iter_mut().zip(&carried.replay_workers) {
                        *d = step[w];
                    }
                }
            }
        }
    }

    /// Steps the workers' states once more, on the stream of draws beyond
    /// the trial's first (the asynchronous trainer's per-update step).
    pub(super) fn step_states(&self, scratch: &mut Scratch) {
        if !self.stateful {
            return;
        }
        let mut rng = scratch.extra.take().expect("the trial seeded the extra stream");
        scratch.carried.iteration += 1;
        match &self.workers {
            Workers::Iid(dist) => self.draw_states(&mut rng, &mut scratch.carried, |_| dist),
            Workers::Classes { classes, .. } => {
                let class = &scratch.worker_class;
                self.draw_states(&mut rng, &mut scratch.carried, |w| &classes[class[w] as usize].1);
            }
            Workers::Trace(_) | Workers::Replay(_) => {}
        }
        scratch.extra = Some(rng);
    }

    /// Draws the iteration's states into `carried`: each group's, then each
    /// worker's, from the previous iteration's (the stationary law in the
    /// first), with `law(w)` worker w's law.
    pub(super) fn draw_states<'a>(
        &self,
        rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
        carried: &mut Carried,
        law: impl Fn(usize) -> &'a Dist,
    ) {
        let n = self.n;
        let first = carried.iteration == 0;
        if let Some(g) = law(0).groups() {
            let count = n.div_ceil(g.size);
            carried.group.resize(count, false);
            let rho = law(0).persist();
            for slow in carried.group.iter_mut() {
                let previous = (!first).then_some(*slow);
                *slow = next_state(g.p, rho, previous, rng.random::<f64>());
            }
        }
        carried.own.resize(n, false);
        for (w, slow) in carried.own.iter_mut().enumerate() {
            let d = law(w);
            *slow = match d.stragglers() {
                Some((p, _)) => {
                    let previous = (!first).then_some(*slow);
                    next_state(p, d.persist(), previous, rng.random::<f64>())
                }
                None => false,
            };
        }
    }
}

/// What a trial of several iterations carries from one to the next: the
/// workers' and groups' slow/normal states, where the placement of worker
/// classes is, and which recorded step a replay is at. Iteration 0 draws
/// each from its stationary law, as a trial of one iteration does.
#[derive(Debug, Clone, Default)]
pub(super) struct Carried {
    /// The iteration within the trial.
    pub(super) iteration: u64,
    /// Per worker, whether its own state is slow.
    pub(super) own: Vec<bool>,
    /// Per group of workers, whether it is slow.
    group: Vec<bool>,
    /// The replayed trace's first step, and the recorded worker behind each
    /// worker where n differs from the trace's workers.
    replay_start: usize,
    replay_workers: Vec<usize>,
    /// The start step where it is given, not drawn (to evaluate the
    /// plan's step rows).
    pub(super) given_start: Option<usize>,
    /// The step this iteration replays, where its n times are the step's
    /// own (n is the trace's workers), whose sorted times the plan keeps.
    pub(super) replayed_step: Option<usize>,
}

impl Carried {
    /// A draw of worker `w` of law `law` in its iteration's state.
    #[inline]
    pub(super) fn draw(&self, law: &Dist, rng: &mut rand_xoshiro::Xoshiro256PlusPlus, w: usize) -> f64 {
        let x = law.sample_in_state(rng, self.own[w]);
        match law.groups() {
            Some(g) if self.group[w / g.size] => x * g.slowdown,
            _ => x,
        }
    }
}
