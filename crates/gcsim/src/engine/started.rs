//! The run's stages once its trial plan is fixed: the pilot, the passes
//! over the trials and their refinement.

use super::*;

impl<'a> Started<'a> {
    pub(crate) fn new(plan: &'a TrialPlan, study: &Study, options: &Options, progress: &dyn Progress) -> Self {
        Self::with_values(plan, study, options, progress, None)
    }

    /// As [`Self::new`], where `given` holds every chunk's values (laid out
    /// as [`Runner::run_chunk`] lays them out), which are read instead of
    /// simulated.
    pub(crate) fn with_values(
        plan: &'a TrialPlan,
        study: &Study,
        options: &Options,
        progress: &dyn Progress,
        given: Option<&'a [Vec<f64>]>,
    ) -> Self {
        let runner = Runner::new(plan, study, given);
        progress.pass(1, runner.total);
        let slots = plan.slots();
        let pilot_trials = runner.pilot_chunks() * CHUNK;
        let laws = exact_windows(study, &runner, pilot_trials);
        // Where every slot has them and no survival curve is asked for, the
        // pilot has nothing left to decide: the run goes straight to its pass.
        let pilot = if laws.iter().all(Option::is_some) && options.survival_points == 0 {
            Pilot::Values(Vec::new())
        } else {
            runner.pilot(progress)
        };
        let trials = match &pilot {
            // Each stored batch holds a slot's values contiguously.
            Pilot::Values(chunks) => chunks.iter().map(|values| values.len() / slots).sum(),
            Pilot::Steps(chunks) => chunks.iter().map(Vec::len).sum(),
        };
        let step_counts = match (&pilot, plan.step_rows()) {
            (Pilot::Steps(chunks), Some(rows)) => {
                Some((rows, pilot::step_counts(rows, chunks.iter().flatten().copied())))
            }
            _ => None,
        };
        let column_of = |j: usize, values: &mut Vec<f64>| pilot_column(&runner, &pilot, trials, j, values);
        let columns: Vec<(PilotColumn, Option<f64>)> = laws
            .into_par_iter()
            .enumerate()
            // A column buffer per thread, reused slot after slot: fresh
            // memory for every slot's copy costs more in page faults than
            // the selection.
            .map_init(Vec::new, |values: &mut Vec<f64>, (j, law)| {
                if pilot.is_empty()
                    && let Some((reference, windows)) = law
                {
                    let column = PilotColumn {
                        reference,
                        sample_quantiles: Targets::UNKNOWN,
                        windows,
                        span: (f64::NAN, f64::NAN),
                    };
                    return (column, None);
                }
                let (mut column, p99) = match &step_counts {
                    Some((rows, counts)) => (PilotColumn::of_steps(rows, j, counts, runner.total), None),
                    None => {
                        column_of(j, values);
                        let (column, q) = PilotColumn::with_rank(values, runner.total, pairing::p99_rank(trials));
                        (column, Some(q))
                    }
                };
                if let Some((reference, windows)) = law {
                    // As without a pilot, so that asking for a survival
                    // curve does not change a bit of the statistics.
                    column.reference = reference;
                    column.windows = windows;
                }
                (column, p99)
            })
            .collect();
        // Every configuration's pairing with the baseline (the last slot),
        // where the pilot's values gave them.
        let pilot_pairings = match columns.last() {
            Some(&(_, Some(qu))) if step_counts.is_none() => {
                let p99s: Vec<_> = columns.iter().map(|(_, q)| *q).collect();
                Some(pilot_pairings(&runner, &pilot, trials, &p99s[..slots - 1], qu))
            }
            _ => None,
        };
        let columns: Vec<PilotColumn> = columns.into_iter().map(|(c, _)| c).collect();
        let refs = columns.iter().map(|c| c.reference).collect();
        let survival = (options.survival_points > 0).then(|| survival_bins(&columns, options.survival_points));
        Self {
            runner,
            pilot,
            pilot_pairings,
            columns,
            refs,
            survival,
            deadline: options.deadline,
            discrete: piles_on_atoms(study),
            kept: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Where the pairings will need the run's first [`pairing::CHUNKS`]
    /// chunks (it has no pilot of values), their places, for the first
    /// pass to keep them in.
    pub(super) fn keep(&self) -> Option<&std::sync::Mutex<Vec<Option<Vec<f64>>>>> {
        if self.runner.plan.step_rows().is_some() || self.pilot_pairings.is_some() {
            return None;
        }
        let mut kept = self.kept.lock().expect("no panic while keeping chunks");
        if kept.is_empty() {
            kept.resize(self.runner.pairing_chunks() as usize, None);
        }
        Some(&self.kept)
    }

    /// The outcome over every trial: from the pilot where it is the whole
    /// run, else from a first pass and its refinements.
    pub(crate) fn outcome_of_all(&self, progress: &dyn Progress) -> Outcome {
        if self.pilot_is_whole_run() {
            self.whole_run_outcome(progress)
        } else {
            let first = self.first_pass(0..self.runner.chunks(), progress);
            self.finish(first.totals, progress)
        }
    }

    /// Whether the pilot is the whole run (its sample quantiles are the run's).
    pub(crate) fn pilot_is_whole_run(&self) -> bool {
        self.pilot.chunks() as u64 == self.runner.chunks()
    }

    pub(crate) fn whole_run_outcome(&self, progress: &dyn Progress) -> Outcome {
        let pass =
            Pass::new(&self.refs, Vec::new(), self.runner.plan.slots(), self.survival).with_deadline(self.deadline);
        let totals = self
            .runner
            .pass(&pass, self.pilot.values(), 0..self.runner.chunks(), None, progress)
            .totals;
        let summaries = self
            .columns
            .iter()
            .zip(&totals.moments)
            .map(|(c, m)| Summary::new(self.runner.total, m, c.reference, c.sample_quantiles))
            .collect();
        self.outcome(summaries, 1, &totals)
    }

    pub(crate) fn first_pass_spec(&self) -> Pass<'_> {
        let mut watches = Vec::new();
        for (slot, c) in self.columns.iter().enumerate() {
            for window in c.windows {
                watches.push(Watch { slot, window });
            }
        }
        let pass = Pass::new(&self.refs, watches, self.runner.plan.slots(), self.survival).with_deadline(self.deadline);
        if self.discrete { pass.with_bin_ranges() } else { pass }
    }

    /// The first pass over the trials of chunks `chunks`.
    pub(crate) fn first_pass(&self, chunks: std::ops::Range<u64>, progress: &dyn Progress) -> FirstPass {
        self.runner.pass(
            &self.first_pass_spec(),
            self.pilot.values(),
            chunks,
            self.keep(),
            progress,
        )
    }

    /// Resolves every quantile from the first pass's totals, running
    /// refinement passes over all trials where a window was not enough.
    pub(crate) fn finish(&self, mut totals: PassTotals, progress: &dyn Progress) -> Outcome {
        let runner = &self.runner;
        let slots = runner.plan.slots();
        let first = self.first_pass_spec();
        let range = totals.range.clone();
        // Each quantile's window also serves the two order statistics of its
        // 95% interval, which lie well inside it.
        let levels = Targets::levels(runner.total);
        let mut values = vec![Targets::UNKNOWN; slots];
        // (slot, target index, window, tally) still to resolve; a window's
        // tally is shared by its targets (it can hold 65 536 bins).
        let mut open: Vec<(usize, usize, Window, Rc<Tally>)> = Vec::new();
        for (w, (watch, tally)) in first
            .watches
            .iter()
            .zip(std::mem::take(&mut totals.tallies))
            .enumerate()
        {
            let qi = w % QUANTILES.len();
            let tally = Rc::new(tally);
            for t in Targets::of_quantile(qi) {
                open.push((watch.slot, t, watch.window, Rc::clone(&tally)));
            }
        }
        let mut passes = 1;
        loop {
            let mut next = Vec::new();
            for (slot, t, window, tally) in open {
                match quantile::judge(levels[t], runner.total, &window, &tally, range[slot]) {
                    Verdict::Resolved(x) => values[slot][t] = x,
                    Verdict::Refine(w) if passes < MAX_PASSES => next.push((slot, t, w)),
                    Verdict::Refine(w) => values[slot][t] = 0.5 * (w.lo + w.hi.next_down()),
                }
            }
            if next.is_empty() {
                break;
            }
            passes += 1;
            progress.pass(passes, runner.total);
            let watches = next.iter().map(|&(slot, _, window)| Watch { slot, window }).collect();
            let pass = Pass::new(&[], watches, slots, None).with_bin_ranges();
            let refined = runner.pass(&pass, &[], 0..runner.chunks(), None, progress).totals;
            open = next
                .into_iter()
                .zip(refined.tallies)
                .map(|((s, qi, w), t)| (s, qi, w, Rc::new(t)))
                .collect();
        }
        let summaries = totals
            .moments
            .iter()
            .zip(&self.refs)
            .zip(values)
            .map(|((m, &r), v)| Summary::new(runner.total, m, r, v))
            .collect();
        self.outcome(summaries, passes, &totals)
    }

    pub(super) fn outcome(&self, mut summaries: Vec<Summary>, passes: u32, totals: &PassTotals) -> Outcome {
        if let Some(bins) = &self.survival {
            for (slot, summary) in summaries.iter_mut().enumerate() {
                summary.survival = totals.survival(bins, slot, self.runner.total);
            }
        }
        if self.deadline.is_some() {
            for (summary, &c) in summaries.iter_mut().zip(&totals.at_most) {
                summary.within_deadline = Some(c as f64 / self.runner.total as f64);
            }
        }
        let baseline = summaries.pop().expect("the baseline slot is always present");
        Outcome {
            configs: summaries,
            baseline,
            passes,
            pairing: self.pairing(),
            pipelines: self.runner.pipelines.get().cloned(),
            tallies: self.runner.tallies(),
        }
    }
}

/// Each slot's reference (its exact median) and percentile windows from its
/// exact law, where the run is long enough past the pilot for them to beat
/// the pilot's (see [`LAW_WINDOWS_AFTER`]) and the values follow that law;
/// `None` for a slot without one.
/// Whether the run's values pile on atoms, so that its bins should track
/// their ends. A trace's values are atoms. So are many of a deadline's
/// across a pipeline job's replicas: every trial in which some stage waits
/// to its deadline ends at T plus the same sum and optimizer time, and
/// p999's interval often falls in that atom's bin. Bins that know their
/// ends resolve it in the first pass, where otherwise a second pass over
/// every trial would.
fn piles_on_atoms(study: &Study) -> bool {
    matches!(study.workers(), Workers::Trace(_) | Workers::Replay(_))
        || (study.parallel().is_some() && study.schemes().iter().any(|s| s.deadline().is_some()))
}

fn exact_windows(study: &Study, runner: &Runner, pilot_trials: u64) -> Vec<Option<(f64, [Window; 4])>> {
    if runner.total >= LAW_WINDOWS_AFTER * pilot_trials && values_follow_the_exact_law(study) {
        let baseline = study.baseline();
        let schemes: Vec<&Scheme> = study.schemes().iter().chain(std::iter::once(&baseline)).collect();
        schemes
            .par_iter()
            .map(|s| {
                let law = study.exact_law(s)?;
                let median = law.quantile(0.5);
                Some((
                    if median.is_finite() { median } else { 0.0 },
                    law_windows(&law, runner.total)?,
                ))
            })
            .collect()
    } else {
        vec![None; runner.plan.slots()]
    }
}

/// Each configuration's pairing with the baseline (the last slot) on the
/// pilot's `trials` trials, given each configuration's p99 (`p99s`) and
/// the baseline's: each trial's pair read from the pilot's batches in
/// trial order.
fn pilot_pairings(
    runner: &Runner,
    pilot: &Pilot,
    trials: usize,
    p99s: &[Option<f64>],
    qu: f64,
) -> Vec<pairing::Pairing> {
    let baseline = p99s.len();
    let pairs = |j: usize| {
        let chunks = pilot.values().iter().enumerate();
        chunks
            .flat_map(move |(c, stored)| runner.batches(c as u64, stored))
            .flat_map(move |(b, count)| (0..count).map(move |t| (b[j * count + t], b[baseline * count + t])))
    };
    p99s.par_iter()
        .enumerate()
        .map(|(j, q)| pairing::pairing_of_pairs(pairs(j), trials, (*q, Some(qu))))
        .collect()
}

/// Slot j's pilot values in trial order, into `values`.
fn pilot_column(runner: &Runner, pilot: &Pilot, trials: usize, j: usize, values: &mut Vec<f64>) {
    values.clear();
    values.reserve(trials);
    for (c, stored) in pilot.values().iter().enumerate() {
        runner.stored_batches(c as u64, stored, |b, count| {
            values.extend_from_slice(&b[j * count..(j + 1) * count]);
        });
    }
}
