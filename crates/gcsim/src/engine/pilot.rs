//! The pilot's trials and what they say about each slot.
//!
//! The pilot keeps its trials' values, or, where every trial's values are
//! one start step's row ([`super::trial::StepRows`]), only its trials'
//! start steps: a slot's order statistics are then read from the rows
//! sorted once with the number of trials at each step, the same values as
//! selecting them among the trials' (order statistics under
//! [`f64::total_cmp`] are values, not positions).

use super::trial::StepRows;
use crate::stats::QUANTILES;
use crate::stats::quantile::{self, Window};

use super::Targets;

/// The pilot's trials, chunk by chunk.
pub(crate) enum Pilot {
    /// Each chunk's values, in batches as the runner lays them out.
    Values(Vec<Vec<f64>>),
    /// Each chunk's trials' start steps, in trial order.
    Steps(Vec<Vec<u32>>),
}

impl Pilot {
    /// The number of chunks.
    pub(crate) fn chunks(&self) -> usize {
        match self {
            Pilot::Values(v) => v.len(),
            Pilot::Steps(s) => s.len(),
        }
    }

    /// Whether the run had no pilot.
    pub(crate) fn is_empty(&self) -> bool {
        self.chunks() == 0
    }

    /// The chunks whose values are stored (none where steps are).
    pub(crate) fn values(&self) -> &[Vec<f64>] {
        match self {
            Pilot::Values(v) => v,
            Pilot::Steps(_) => &[],
        }
    }
}

/// How many of a sample's trials start at each step.
pub(crate) fn step_counts(rows: &StepRows, steps: impl Iterator<Item = u32>) -> Vec<u64> {
    let mut counts = vec![0; rows.steps()];
    for s in steps {
        counts[s as usize] += 1;
    }
    counts
}

/// Slot `slot`'s values at the steps that occur, each with its count,
/// sorted by [`f64::total_cmp`].
pub(crate) fn sorted_atoms(rows: &StepRows, slot: usize, counts: &[u64]) -> Vec<(f64, u64)> {
    let mut atoms: Vec<(f64, u64)> = counts
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c > 0)
        .map(|(s, &c)| (rows.row(s)[slot], c))
        .collect();
    atoms.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    atoms
}

/// The value of 0-based rank `rank` among the values of `atoms` (sorted,
/// with counts), each counted as many times as it occurs.
pub(crate) fn atom_at_rank(atoms: &[(f64, u64)], rank: usize) -> f64 {
    let mut below = 0;
    for &(v, c) in atoms {
        below += c as usize;
        if rank < below {
            return v;
        }
    }
    panic!("rank {rank} is past the sample's {below} values")
}

/// What the pilot says about one slot.
pub(crate) struct PilotColumn {
    /// Reference of the power sums: the pilot median, or the exact median
    /// where the exact law places the windows (0 if not finite).
    pub(crate) reference: f64,
    /// The sample quantiles at the [`Targets::levels`], for a run no longer
    /// than the pilot ([`Targets::UNKNOWN`] for a longer one, which does
    /// not read them).
    pub(crate) sample_quantiles: Targets,
    /// First-pass windows of the four quantiles.
    pub(crate) windows: [Window; 4],
    /// Smallest positive and largest finite value, for survival bins.
    pub(crate) span: (f64, f64),
}

impl PilotColumn {
    /// From the pilot's values of one slot, for a run of `total` trials,
    /// and the value of 0-based rank `rank` among them: selects the ranks
    /// it needs instead of sorting. (Reorders `values`.)
    pub(crate) fn with_rank(values: &mut [f64], total: u64, rank: usize) -> (Self, f64) {
        let span = span_of(values);
        let mut at_rank = f64::NAN;
        let column = Self::of_ranks(values.len(), span, total, |ranks| {
            let mut all = ranks.to_vec();
            all.push(rank);
            let mut found = quantile::select_ranks(values, &all);
            at_rank = found.pop().expect("the extra rank's value");
            found
        });
        (column, at_rank)
    }

    /// From the pilot's trials' start steps, counted by `counts`, for slot
    /// `slot`: the same column as from the trials' values.
    pub(crate) fn of_steps(rows: &StepRows, slot: usize, counts: &[u64], total: u64) -> Self {
        let atoms = sorted_atoms(rows, slot, counts);
        let p = counts.iter().sum::<u64>() as usize;
        let span = span(atoms.iter().map(|a| a.0));
        Self::of_ranks(p, span, total, |ranks| {
            ranks.iter().map(|&r| atom_at_rank(&atoms, r)).collect()
        })
    }

    /// From `p` pilot values whose positive finite span is `span`, and
    /// `select`, which gives the values at 0-based ranks.
    fn of_ranks(p: usize, span: (f64, f64), total: u64, select: impl FnOnce(&[usize]) -> Vec<f64>) -> Self {
        let mut ranks = vec![quantile::target_index(0.5, p as u64) as usize];
        ranks.extend(QUANTILES.iter().flat_map(|&q| quantile::pilot_ranks(q, p)));
        let whole_run = p as u64 >= total;
        if whole_run {
            let levels = Targets::levels(total);
            ranks.extend(levels.iter().map(|&l| quantile::target_index(l, p as u64) as usize));
        }
        let at = select(&ranks);
        let windows = std::array::from_fn(|i| {
            // After the median come two pilot ranks per quantile.
            quantile::window_from_pilot(at[1 + 2 * i], at[2 + 2 * i], QUANTILES[i], p, total)
        });
        let targets = 1 + 2 * QUANTILES.len();
        Self {
            reference: Some(at[0]).filter(|m| m.is_finite()).unwrap_or(0.0),
            sample_quantiles: if whole_run {
                Targets::from_fn(|t| at[targets + t])
            } else {
                Targets::UNKNOWN
            },
            windows,
            span,
        }
    }
}

/// [`span`] of a slice, in four lanes (the same values: a minimum and a
/// maximum do not depend on the order they are taken in).
fn span_of(values: &[f64]) -> (f64, f64) {
    let (mut lo, mut hi) = ([f64::INFINITY; 4], [0.0f64; 4]);
    let quads = values.chunks_exact(4);
    let tail = span(quads.remainder().iter().copied());
    for q in quads {
        for l in 0..4 {
            let v = q[l];
            // Positive and finite (false for NaN).
            let counted = v > 0.0 && v < f64::INFINITY;
            lo[l] = if counted && v < lo[l] { v } else { lo[l] };
            hi[l] = if counted && v > hi[l] { v } else { hi[l] };
        }
    }
    lo.into_iter().zip(hi).fold(tail, |(a, b), (l, h)| (a.min(l), b.max(h)))
}

/// The smallest positive and the largest finite of `values`.
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        if v > 0.0 && v.is_finite() {
            (lo.min(v), hi.max(v))
        } else {
            (lo, hi)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four-lane span is the fold's: zeros, negatives, infinities and
    /// NaN left out, every length of tail.
    #[test]
    fn span_of_a_slice_is_the_fold() {
        let values = [
            3.0,
            0.0,
            -1.0,
            f64::INFINITY,
            0.5,
            f64::NAN,
            7.25,
            1e-300,
            f64::NEG_INFINITY,
            2.0,
            9.5,
        ];
        for len in 0..=values.len() {
            for start in 0..len {
                let v = &values[start..len];
                assert_eq!(span_of(v), span(v.iter().copied()), "{v:?}");
            }
        }
        assert_eq!(span_of(&values), (1e-300, 9.5));
    }

    /// A slot's column from the pilot's start steps equals the column from
    /// its trials' values, within a short run and a long one: values tied
    /// across steps, zero and infinite values (outside the span), steps
    /// that never occur.
    #[test]
    fn columns_of_steps_equal_columns_of_values() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(6);
        let (slots, steps) = (3, 50);
        let rows: Vec<f64> = (0..steps * slots)
            .map(|i| match i / slots {
                3 => 0.0,
                4 => f64::INFINITY,
                _ => 1.0 + rng.random_range(0..20) as f64 * 0.25,
            })
            .collect();
        let rows = StepRows::new(rows, slots);
        let trials: Vec<u32> = (0..20_000).map(|_| rng.random_range(0..steps as u32 - 5)).collect();
        let counts = step_counts(&rows, trials.iter().copied());
        for total in [20_000, 5_000_000] {
            for j in 0..slots {
                let mut values: Vec<f64> = trials.iter().map(|&s| rows.row(s as usize)[j]).collect();
                let (a, b) = (
                    PilotColumn::with_rank(&mut values, total, 0).0,
                    PilotColumn::of_steps(&rows, j, &counts, total),
                );
                let show =
                    |c: &PilotColumn| format!("{} {:?} {:?} {:?}", c.reference, c.sample_quantiles, c.windows, c.span);
                assert_eq!(show(&a), show(&b), "slot {j}, total {total}");
            }
        }
    }
}
