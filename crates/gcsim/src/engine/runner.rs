//! The runner that simulates a chunk of trials and folds it into a pass.

use std::sync::atomic::{AtomicU64, Ordering};

use super::*;
use pipelines::PipelineSums;
use trial::{PipelineTotals, SumTotals, TrialTotals};

impl<'a> Runner<'a> {
    /// The runner of `study`'s trials by `plan`, reading `given` where it
    /// holds every chunk's values.
    pub(super) fn new(plan: &'a TrialPlan, study: &Study, given: Option<&'a [Vec<f64>]>) -> Self {
        let tally_trials = match given {
            Some(_) => 0,
            None => approx::tallies_in_pass(study, plan).min(study.trials()),
        };
        Self {
            plan,
            seed: study.seed(),
            total: study.trials(),
            given,
            pipelines: Default::default(),
            tally_trials,
            tallies: (0..tally_trials.div_ceil(CHUNK)).map(|_| Default::default()).collect(),
        }
    }
}

impl Runner<'_> {
    pub(super) fn chunks(&self) -> u64 {
        self.total.div_ceil(CHUNK)
    }

    pub(super) fn trials_of(&self, chunk: u64) -> std::ops::Range<u64> {
        chunk * CHUNK..((chunk + 1) * CHUNK).min(self.total)
    }

    /// Simulates one chunk, calling `batch` with the slot values of
    /// [`BATCH`] trials at a time (the last batch may be shorter),
    /// column-major: `(values, count)` with slot j's values, in trial order,
    /// at `values[j·count..(j+1)·count]`.
    /// Where trials are costly ([`TrialPlan::decodes_by_rank`],
    /// [`TrialPlan::costly_trials`]) the chunk's trials run in parallel
    /// first (see [`Self::costly_values`]), so that one chunk uses every
    /// core (same bytes: a trial's values depend on its index alone).
    ///
    /// `progress` advances after each batch, and after each costly trial
    /// (a decoding of a large code takes seconds): a chunk of slow trials,
    /// K-batch-async's event walk at n = 5000 say, is minutes of work that
    /// a count per chunk would leave silent.
    pub(super) fn run_chunk(
        &self,
        chunk: u64,
        scratch: &mut Scratch,
        progress: &dyn Progress,
        mut batch: impl FnMut(&[f64], usize),
    ) {
        if let Some(given) = self.given {
            progress.advance(self.trials_of(chunk).count() as u64);
            self.stored_batches(chunk, &given[chunk as usize], batch);
            return;
        }
        let slots = self.plan.slots();
        let mut collect = self.collects_pipelines(chunk);
        let counting = self.counts_tallies(chunk);
        let trials = self.trials_of(chunk);
        let costly = self.plan.decodes_by_rank() || self.plan.costly_trials();
        let by_trial =
            costly.then(|| self.costly_values(trials.clone(), collect.as_mut(), counting.as_deref(), progress));
        // Four trials' values trial-major (see below), then a batch's
        // slot-major.
        let (mut quads, mut values) = (vec![0.0; 4 * slots], vec![0.0; BATCH * slots]);
        let mut t = trials.start;
        while t < trials.end {
            let count = (trials.end - t).min(BATCH as u64) as usize;
            let place = |values: &mut [f64], i: usize, out: &[f64]| {
                for (j, &v) in out.iter().enumerate() {
                    values[j * count + i] = v;
                }
            };
            if let Some(by_trial) = &by_trial {
                let first = (t - trials.start) as usize;
                by_trial[first * slots..(first + count) * slots]
                    .chunks_exact(slots)
                    .enumerate()
                    .for_each(|(i, out)| place(&mut values, i, out));
            } else {
                // Each trial's pipeline totals, for those that collect them.
                let mut entries: Vec<Option<&mut TrialTotals>> = match collect.as_mut() {
                    Some(c) => c.iter_mut().skip(t as usize).map(Some).collect(),
                    None => Vec::new(),
                };
                entries.resize_with(count, || None);
                // Four trials' rows at a time, each four placed while their
                // values are hot, a slot's four in one store: one scalar
                // store per value, strided a column apart, cost a tenth of
                // the headline's trial.
                let rows = &mut quads[..];
                let mut i = 0;
                while i < count {
                    let quad = (count - i).min(4);
                    if self.plan.pipelines_in_pass() {
                        let (first, outs) = (t + i as u64, &mut rows[..quad * slots]);
                        self.plan
                            .run_batch(self.seed, first, scratch, outs, &mut entries[i..i + quad]);
                    } else {
                        for (r, out) in rows.chunks_exact_mut(slots).take(quad).enumerate() {
                            let entry = entries[i + r].as_deref_mut();
                            self.run_counted(t + (i + r) as u64, scratch, out, entry, counting.as_deref());
                        }
                    }
                    if quad == 4 {
                        transpose_rows4(rows, &mut values[..count * slots], count, i);
                    } else {
                        rows.chunks_exact(slots)
                            .take(quad)
                            .enumerate()
                            .for_each(|(r, out)| place(&mut values, i + r, out));
                    }
                    i += quad;
                }
                progress.advance(count as u64);
            }
            batch(&values[..count * slots], count);
            t += count as u64;
        }
        if let Some(per_trial) = collect {
            let (programs, _) = self.plan.pipeline_programs().expect("a layout");
            let mut sums = PipelineSums::new(programs, slots);
            per_trial.iter().for_each(|(totals, spans)| sums.add(totals, spans));
            // A chunk simulated again (never, where the pilot keeps it) has the same sums.
            let _ = self.pipelines.set(sums);
        }
        if let Some(sums) = counting {
            // Likewise its tallies.
            let _ = self.tallies[chunk as usize].set(sums.into_iter().map(AtomicU64::into_inner).collect());
        }
    }

    /// The values of the costly trials `trials`, trial-major (trial
    /// `trials.start + i`'s slots at `i·slots`), simulated in parallel, each
    /// one's pipeline totals added to its place in `collect` where it has
    /// one and its tallies to `counting`.
    ///
    /// A whole chunk at a time: with the trials of a batch of [`BATCH`] in
    /// parallel instead, the threads met at every batch's end, and the
    /// 1,024-rank job of `bench/hybrid.sh large` (10⁴ trials of 25 µs) took
    /// 1.06 times its one thread's time halved on two cores, against 1.02
    /// times now (133 and 127 ms, `perf stat -r 10`).
    fn costly_values(
        &self,
        trials: std::ops::Range<u64>,
        collect: Option<&mut Vec<TrialTotals>>,
        counting: Option<&[AtomicU64]>,
        progress: &dyn Progress,
    ) -> Vec<f64> {
        let (slots, count) = (self.plan.slots(), (trials.end - trials.start) as usize);
        let mut entries: Vec<Option<&mut TrialTotals>> = match collect {
            Some(c) => c.iter_mut().map(Some).collect(),
            None => Vec::new(),
        };
        entries.resize_with(count, || None);
        let mut rows = vec![0.0; count * slots];
        rows.par_chunks_mut(slots)
            .zip(entries.par_iter_mut())
            .enumerate()
            .for_each_init(
                || self.plan.scratch(),
                |scratch, (i, (out, entry))| {
                    let entry = entry.as_deref_mut();
                    self.run_counted(trials.start + i as u64, scratch, out, entry, counting);
                    progress.advance(1);
                },
            );
        rows
    }

    /// Where chunk `chunk` holds trials whose strategies' tallies the pass
    /// counts and they are not yet counted: a sum per slot.
    fn counts_tallies(&self, chunk: u64) -> Option<Vec<AtomicU64>> {
        let unset = self.tallies.get(chunk as usize)?.get().is_none();
        unset.then(|| (0..self.plan.slots()).map(|_| AtomicU64::new(0)).collect())
    }

    /// [`Self::run_trial`], adding what the trial adds to the strategies'
    /// tallies to `sums` where they are given and it is one of the trials
    /// they count. Integer sums: the same in any order of the trials.
    fn run_counted(
        &self,
        trial: u64,
        scratch: &mut Scratch,
        out: &mut [f64],
        entry: Option<&mut TrialTotals>,
        sums: Option<&[AtomicU64]>,
    ) {
        let Some(sums) = sums.filter(|_| trial < self.tally_trials) else {
            return self.run_trial(trial, scratch, out, entry);
        };
        let before = scratch.tally().to_vec();
        self.run_trial(trial, scratch, out, entry);
        for ((sum, &after), before) in sums.iter().zip(scratch.tally()).zip(before) {
            sum.fetch_add(after.wrapping_sub(before), Ordering::Relaxed);
        }
    }

    /// The strategies' tallies per slot over the trials the pass counts
    /// them on, where it counted every one of them.
    pub(super) fn tallies(&self) -> Option<Vec<u64>> {
        let mut total = vec![0u64; self.plan.slots()];
        for chunk in (!self.tallies.is_empty()).then_some(&self.tallies)? {
            total.iter_mut().zip(chunk.get()?).for_each(|(t, c)| *t += c);
        }
        Some(total)
    }

    /// Where chunk `chunk` holds the trials a hybrid-parallel job's
    /// pipeline shares are averaged over and they are not yet summed: a
    /// place for each of those trials' totals.
    fn collects_pipelines(&self, chunk: u64) -> Option<Vec<TrialTotals>> {
        if chunk != 0 || self.pipelines.get().is_some() || !self.plan.pipelines_in_pass() {
            return None;
        }
        let (programs, _) = self.plan.pipeline_programs()?;
        let trials = pipelines::pipeline_trials(self.total) as usize;
        Some(vec![
            (
                vec![PipelineTotals::default(); programs],
                vec![SumTotals::default(); self.plan.slots()]
            );
            trials
        ])
    }

    /// Runs trial `trial` into `out`, adding its pipeline totals to `entry`
    /// where it is given (the same values either way).
    fn run_trial(&self, trial: u64, scratch: &mut Scratch, out: &mut [f64], entry: Option<&mut TrialTotals>) {
        match entry {
            Some((totals, sums)) => self.plan.run_pipelines(self.seed, trial, scratch, out, totals, sums),
            None => self.plan.run(self.seed, trial, scratch, out),
        }
    }

    /// Calls `batch` with each stored batch of a chunk's values, as
    /// [`Self::run_chunk`] laid them out.
    pub(super) fn stored_batches(&self, chunk: u64, values: &[f64], mut batch: impl FnMut(&[f64], usize)) {
        self.batches(chunk, values).for_each(|(b, count)| batch(b, count));
    }

    /// A stored chunk's batches, as [`Self::run_chunk`] laid them out: each
    /// one's values and its number of trials.
    pub(super) fn batches<'a>(
        &self,
        chunk: u64,
        values: &'a [f64],
    ) -> impl Iterator<Item = (&'a [f64], usize)> + Clone + 'a {
        let (slots, trials) = (self.plan.slots(), self.trials_of(chunk).count());
        (0..trials).step_by(BATCH).map(move |first| {
            let count = BATCH.min(trials - first);
            (&values[first * slots..(first + count) * slots], count)
        })
    }

    /// The pilot chunks' values, one vector per chunk, in batches as
    /// [`Self::run_chunk`] lays them out.
    /// Where every trial's values are one step's row, the pilot keeps its
    /// trials' start steps instead.
    pub(super) fn pilot(&self, progress: &dyn Progress) -> Pilot {
        if self.plan.step_rows().is_some() {
            return Pilot::Steps(
                (0..self.pilot_chunks())
                    .into_par_iter()
                    .map(|c| {
                        let steps = self.chunk_steps(c);
                        progress.advance(steps.len() as u64);
                        steps
                    })
                    .collect(),
            );
        }
        let values = (0..self.pilot_chunks())
            .into_par_iter()
            .map_init(
                || self.plan.scratch(),
                |scratch, c| self.chunk_values(c, scratch, progress),
            )
            .collect();
        Pilot::Values(values)
    }

    /// One chunk's trials' start steps, in trial order (where the plan
    /// keeps step rows).
    pub(super) fn chunk_steps(&self, chunk: u64) -> Vec<u32> {
        self.trials_of(chunk)
            .map(|t| self.plan.start_step(self.seed, t) as u32)
            .collect()
    }

    /// One chunk's values, in batches as [`Self::run_chunk`] lays them out.
    pub(super) fn chunk_values(&self, chunk: u64, scratch: &mut Scratch, progress: &dyn Progress) -> Vec<f64> {
        let mut values = Vec::with_capacity(CHUNK as usize * self.plan.slots());
        self.run_chunk(chunk, scratch, progress, |batch, _| values.extend_from_slice(batch));
        values
    }

    /// Chunks of the pairing sample of a run without a pilot
    /// ([`pairing::CHUNKS`], at most the pilot's).
    pub(super) fn pairing_chunks(&self) -> u64 {
        pairing::CHUNKS.min(self.pilot_chunks())
    }

    /// Chunks in the pilot: [`PILOT_CHUNKS`], within [`PILOT_BYTES`], at least one.
    pub(super) fn pilot_chunks(&self) -> u64 {
        let per_chunk = CHUNK * self.plan.slots() as u64 * 8;
        (PILOT_BYTES / per_chunk).clamp(1, PILOT_CHUNKS).min(self.chunks())
    }

    /// One pass over the trials of the chunks `chunks`; chunks held in
    /// `stored` are read, not simulated. Chunks fold in order into their
    /// block of [`BLOCK_CHUNKS`], blocks in order into the total. Each block
    /// the range covers whole has its power sums in the result's `blocks`;
    /// each chunk of a block it covers in part has its own in `chunks`
    /// (where a shard's range starts or ends inside a block). Where `keep`
    /// is given, chunk c's values (laid out as by [`Self::run_chunk`]) go
    /// to its place c, if it has one, as the chunk is simulated.
    pub(super) fn pass(
        &self,
        pass: &Pass,
        stored: &[Vec<f64>],
        chunks: std::ops::Range<u64>,
        keep: Option<&std::sync::Mutex<Vec<Option<Vec<f64>>>>>,
        progress: &dyn Progress,
    ) -> FirstPass {
        // The first block's totals are the pass's so far (adding them to
        // zeros gives the same values; a window's tally can hold 65 536
        // bins).
        let mut totals: Option<PassTotals> = None;
        let mut block_sums = Vec::new();
        let mut chunk_sums = Vec::new();
        let keep = keep.map(|k| (k, k.lock().expect("no panic while keeping chunks").len()));
        // Where every trial's values are one step's row, chunks are counted
        // by their trials' start steps (stored chunks too: the same trials).
        let rows = self.plan.step_rows();
        let table = rows.map(|r| StepTable::new(r.rows(), self.plan.slots(), pass));
        let (range, all) = (chunks.clone(), self.chunks());
        let blocks = (chunks.start / BLOCK_CHUNKS)..chunks.end.div_ceil(BLOCK_CHUNKS);
        for block in blocks {
            let mut block_totals = PassTotals::new(pass);
            let whole = block * BLOCK_CHUNKS..((block + 1) * BLOCK_CHUNKS).min(all);
            let chunks = whole.start.max(range.start)..whole.end.min(range.end);
            let part = chunks != whole;
            let counts: Vec<Counts> = chunks
                .clone()
                .into_par_iter()
                .map_init(
                    || self.plan.scratch(),
                    |scratch, c| {
                        let mut counts = Counts::new(pass);
                        if let Some(table) = &table {
                            let steps = self.chunk_steps(c);
                            counts.add_steps(pass, table, &steps);
                            if stored.get(c as usize).is_none() {
                                progress.advance(steps.len() as u64);
                            }
                            counts.seal();
                            return counts;
                        }
                        match stored.get(c as usize) {
                            Some(values) => self.stored_batches(c, values, |b, count| counts.add_batch(pass, b, count)),
                            None => {
                                let place = keep.filter(|&(_, places)| (c as usize) < places);
                                let mut kept = Vec::new();
                                self.run_chunk(c, scratch, progress, |b, count| {
                                    counts.add_batch(pass, b, count);
                                    if place.is_some() {
                                        kept.extend_from_slice(b);
                                    }
                                });
                                if let Some((k, _)) = place {
                                    k.lock().expect("no panic while keeping chunks")[c as usize] = Some(kept);
                                }
                            }
                        }
                        counts.seal();
                        counts
                    },
                )
                .collect();
            if part {
                chunk_sums.extend(chunks.zip(counts.iter().map(Counts::moments)));
            }
            block_totals.absorb_all(counts);
            if !part {
                block_sums.push((block, block_totals.moments.clone()));
            }
            match &mut totals {
                None => totals = Some(block_totals),
                Some(t) => t.merge(block_totals),
            }
        }
        FirstPass {
            totals: totals.unwrap_or_else(|| PassTotals::new(pass)),
            blocks: block_sums,
            chunks: chunk_sums,
        }
    }
}

/// Trial-major values (trial t's slots at `rows[t·slots..(t+1)·slots]`)
/// laid out chunk by chunk as [`Runner::run_chunk`] lays them out: in
/// batches of [`BATCH`] trials, slot-major within a batch.
pub(super) fn chunk_layout(rows: &[f64], slots: usize, total: u64) -> Vec<Vec<f64>> {
    let trials = (rows.len() / slots.max(1)) as u64;
    debug_assert_eq!(trials, total);
    (0..chunk_count(trials))
        .map(|c| {
            let first = (c * CHUNK) as usize;
            let end = ((c + 1) * CHUNK).min(trials) as usize;
            let mut out = Vec::with_capacity((end - first) * slots);
            for start in (first..end).step_by(BATCH) {
                let count = BATCH.min(end - start);
                for j in 0..slots {
                    out.extend((start..start + count).map(|t| rows[t * slots + j]));
                }
            }
            out
        })
        .collect()
}

/// Trials per task where [`TrialPlan::values_of`] runs trials in parallel:
/// few enough that a short range of costly trials (the rank decoder's)
/// still spreads over every core.
const VALUE_TASK: usize = 16;

impl TrialPlan {
    /// The values of the trials `trials`, trial by trial (each trial's
    /// slots in order), on every core: a trial's values depend on its index
    /// alone, so they are the values a whole run gives these trials.
    pub fn values_of(&self, seed: u64, trials: std::ops::Range<u64>, progress: &dyn Progress) -> Vec<f64> {
        let slots = self.slots();
        let mut out = vec![0.0; (trials.end - trials.start) as usize * slots];
        out.par_chunks_mut(slots * VALUE_TASK).enumerate().for_each_init(
            || self.scratch(),
            |scratch, (task, rows)| {
                let first = trials.start + (task * VALUE_TASK) as u64;
                for (i, row) in rows.chunks_exact_mut(slots).enumerate() {
                    self.run(seed, first + i as u64, scratch, row);
                }
                progress.advance((rows.len() / slots) as u64);
            },
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::load::LoadModel;
    use crate::scheme::{Params, SchemeKind};

    /// The strategies' tallies the main pass counts are the walk's, over
    /// more trials than a chunk holds: K-batch-async, whose timeline does
    /// not read the rule path, beside a scheme without a strategy; and
    /// speculative copies on the order statistics the walk takes too.
    #[test]
    fn tallies_counted_in_the_pass_are_the_walks() {
        let scheme = |kind, params| Scheme::new(kind, 12, params).unwrap();
        for schemes in [
            vec![
                scheme(SchemeKind::KBatchAsync, Params::with_k(3)),
                scheme(SchemeKind::Mds, Params::with_k(3)),
            ],
            vec![scheme(SchemeKind::Speculative, Params::default())],
        ] {
            let study = Study::new(12, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, 20_000, 7).unwrap();
            let plan = TrialPlan::new(&study);
            assert!(approx::tallies_in_pass(&study, &plan) > CHUNK);
            let outcome = simulate_with(&plan, &study, &Silent);
            let counted = outcome.tallies.expect("counted in the pass");
            assert_eq!(
                approx::tallies(&study, Some(&counted), &Silent),
                approx::tallies(&study, None, &Silent)
            );
        }
    }
}
