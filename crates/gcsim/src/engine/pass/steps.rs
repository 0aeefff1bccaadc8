//! A chunk counted by its trials' start steps, where every trial's values
//! are one of M rows (a replayed trace, see
//! [`crate::engine::trial::StepRows`]).
//!
//! The power sums still add one value per trial, lane by lane in trial
//! order, as [`Counts::add_batch`] does, so they are the same bits; each
//! step's deviations from the references and their squares are computed
//! once per pass instead of once per trial (the same operations on the
//! same operands). Everything else a chunk counts (range, infinite values,
//! window tallies with their atoms, histograms, deadline counts) is a count
//! or an extreme, the same in any order: it is added once per step that
//! occurs, weighted by how many trials start at it.

use super::{Counts, Pass};

/// Each step's row and, for the slots with a reference, its deviations
/// from the references and their squares: what a pass adds per trial.
pub struct StepTable<'a> {
    rows: &'a [f64],
    slots: usize,
    /// Slots with a reference (the first `summed`; all or none in practice).
    summed: usize,
    /// Step s's `v − r` of slot j at `s·summed + j`, and its square.
    d1: Vec<f64>,
    d2: Vec<f64>,
}

impl<'a> StepTable<'a> {
    /// The table of `rows` (step-major, `slots` values per step) for `pass`.
    pub fn new(rows: &'a [f64], slots: usize, pass: &Pass) -> Self {
        let summed = pass.refs.len().min(slots);
        let mut d1 = Vec::with_capacity(rows.len() / slots * summed);
        for row in rows.chunks_exact(slots) {
            d1.extend(row.iter().zip(pass.refs).map(|(&v, &r)| v - r));
        }
        let d2 = d1.iter().map(|&d| d * d).collect();
        Self {
            rows,
            slots,
            summed,
            d1,
            d2,
        }
    }

    fn steps(&self) -> usize {
        self.rows.len() / self.slots
    }
}

impl Counts {
    /// Counts a chunk's trials by their start steps, `steps`, in trial
    /// order from the chunk's first trial (its lanes are those of
    /// [`Counts::add_batch`], trial i of the chunk in lane i mod 4, as a
    /// batch starts at a multiple of four).
    pub(crate) fn add_steps(&mut self, pass: &Pass, table: &StepTable, steps: &[u32]) {
        self.trials += steps.len() as u64;
        #[cfg(target_arch = "x86_64")]
        if pass.avx2 {
            // SAFETY: `pass.avx2` is set only where the processor has AVX2.
            unsafe { self.add_sums_avx2(table, steps) };
        } else {
            self.add_sums(table, steps);
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.add_sums(table, steps);
        self.add_by_step(pass, table, steps);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn add_sums_avx2(&mut self, table: &StepTable, steps: &[u32]) {
        self.add_sums(table, steps);
    }

    /// The power sums: each trial's row of deviations added to its lane.
    #[inline(always)]
    fn add_sums(&mut self, table: &StepTable, steps: &[u32]) {
        let r = table.summed;
        if r == 0 {
            return;
        }
        // Lane-major copies of the sums: lane l of slot j at `l·r + j`.
        let mut s1 = vec![0.0; 4 * r];
        let mut s2 = vec![0.0; 4 * r];
        for j in 0..r {
            for l in 0..4 {
                (s1[l * r + j], s2[l * r + j]) = (self.s1[j][l], self.s2[j][l]);
            }
        }
        for (i, &s) in steps.iter().enumerate() {
            let (l, s) = (i % 4, s as usize);
            let (a1, a2) = (&mut s1[l * r..(l + 1) * r], &mut s2[l * r..(l + 1) * r]);
            let (d1, d2) = (&table.d1[s * r..(s + 1) * r], &table.d2[s * r..(s + 1) * r]);
            for (a, &d) in a1.iter_mut().zip(d1) {
                *a += d;
            }
            for (a, &d) in a2.iter_mut().zip(d2) {
                *a += d;
            }
        }
        for j in 0..r {
            for l in 0..4 {
                (self.s1[j][l], self.s2[j][l]) = (s1[l * r + j], s2[l * r + j]);
            }
        }
    }

    /// The counts and extremes, once per step that occurs, weighted by its
    /// trials.
    fn add_by_step(&mut self, pass: &Pass, table: &StepTable, steps: &[u32]) {
        let occurring = occurring(steps, table.steps());
        let slots = table.slots;
        for j in 0..slots {
            let groups = &pass.groups[pass.slot_groups[j]..pass.slot_groups[j + 1]];
            let (mut mn, mut mx) = (self.min[j], self.max[j]);
            for &(s, c) in &occurring {
                let v = table.rows[s * slots + j];
                mn = if v < mn { v } else { mn };
                mx = if v > mx { v } else { mx };
                self.infinite[j] += u64::from(c) * u64::from(v == f64::INFINITY);
                for g in groups {
                    for i in 0..4 {
                        let w = g.watch[i];
                        if w == usize::MAX {
                            continue;
                        }
                        if v < g.lo[i] {
                            self.below[w] += u64::from(c);
                        } else if v < g.hi[i] {
                            self.hit::<true>(pass, w, v, c);
                        }
                    }
                }
                if let Some(bins) = &pass.survival {
                    self.histogram[j * bins.slots() + bins.index(v)] += u64::from(c);
                }
                if let Some(t) = pass.deadline {
                    self.at_most[j] += u64::from(c) * u64::from(v <= t);
                }
            }
            (self.min[j], self.max[j]) = (mn, mx);
        }
    }
}

/// The steps that occur among `steps` (each below `m`), with how many
/// times each does, in no particular order: counted in a table of the `m`
/// steps where `m` is not much more than the trials, by sorting the
/// trials' steps where it is (a trace of many more steps than a chunk's
/// trials).
fn occurring(steps: &[u32], m: usize) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    if m <= 4 * steps.len() {
        let mut count = vec![0u32; m];
        for &s in steps {
            count[s as usize] += 1;
        }
        out.extend(count.iter().enumerate().filter(|&(_, &c)| c > 0).map(|(s, &c)| (s, c)));
    } else {
        let mut sorted = steps.to_vec();
        sorted.sort_unstable();
        for run in sorted.chunk_by(|a, b| a == b) {
            out.push((run[0] as usize, run.len() as u32));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::occurring;

    /// Counted in a table of the steps or by sorting the trials' steps:
    /// the same steps with the same counts.
    #[test]
    fn occurring_steps_by_table_and_by_sort_agree() {
        let steps: Vec<u32> = (0..500u32).map(|i| (i * i * 7 + 3) % 97).collect();
        let mut by_table = occurring(&steps, 97);
        let mut by_sort = occurring(&steps, 97 * 100);
        by_table.sort_unstable();
        by_sort.sort_unstable();
        assert_eq!(by_table, by_sort);
        assert_eq!(by_sort.iter().map(|&(_, c)| c as usize).sum::<usize>(), steps.len());
        assert!(by_sort.len() > 10);
    }
}
