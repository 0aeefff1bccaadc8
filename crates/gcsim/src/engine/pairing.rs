//! How each configuration's estimates move with the baseline's on the same
//! draws: what the paired intervals of `speedup` and `p99_speedup` need.
//!
//! Both speedups are ratios of two estimates from the same trials (common
//! random numbers), so their errors are correlated, and an interval that
//! treated them as independent would be too wide (or, for a negative
//! correlation, too narrow). The delta method on the log scale (see
//! [`ratio_interval`]) needs each estimate's standard error, which the run
//! gives from all its trials, and the correlation of the two estimates:
//! - of two sample means, the correlation of the two times;
//! - of two sample p-quantiles, by their Bahadur representation (Serfling
//!   1980, §2.5), the correlation of the indicators 1{X ≤ x_p} and
//!   1{U ≤ u_p}.
//!
//! Both correlations are properties of the joint law, not of the number of
//! trials, and are estimated from the pairing sample: the pilot's trials
//! (the first min(N, 65 536)), or, where a run took its percentile windows
//! from the exact law and had no pilot, its first 16 384 trials ([`CHUNKS`]
//! chunks), kept by its first pass (or simulated again where that pass did
//! not run them: a shard's other blocks). On n pairs, the correlation of the means has a
//! standard error of about (1 − ρ²)/√n; that of the p99 indicators about
//! √(q/n)/(0.99 · 0.01), q the share of trials above both p99s (0.0001
//! for independent times to 0.01 for equal ones): 0.004 to 0.039 at
//! n = 65 536, twice that at 16 384. The windows come from the law only for
//! independent workers, whose p99 indicators are weakly correlated.

use rayon::prelude::*;

use super::pilot::{Pilot, atom_at_rank, sorted_atoms, step_counts};
use super::trial::StepRows;
use crate::stats::{Z95, quantile};

/// Chunks of the pairing sample of a run without a pilot.
pub const CHUNKS: u64 = 2;

/// The level whose paired interval is computed besides the mean's: p99.
const LEVEL: f64 = 0.99;

/// One configuration's correlations with the baseline, on the pairing sample.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pairing {
    /// Correlation of the configuration's time with the baseline's; `None`
    /// where a time is infinite (the mean is then not estimated).
    pub mean: Option<f64>,
    /// Correlation of the indicators below each one's sample p99.
    pub p99: Option<f64>,
}

impl super::Started<'_> {
    /// The pairings on the pilot's trials, or where the run had no pilot
    /// on its first [`CHUNKS`] chunks, as the first pass kept them or
    /// simulated again (without progress).
    pub(super) fn pairing(&self) -> Vec<Pairing> {
        if let Some(rows) = self.runner.plan.step_rows() {
            let steps = match &self.pilot {
                Pilot::Steps(chunks) => chunks.concat(),
                Pilot::Values(_) => (0..CHUNKS.min(self.runner.pilot_chunks()))
                    .into_par_iter()
                    .map(|c| self.runner.chunk_steps(c))
                    .collect::<Vec<_>>()
                    .concat(),
            };
            return pairings_of_steps(rows, &steps);
        }
        if let Some(pairings) = &self.pilot_pairings {
            return pairings.clone();
        }
        // As the first pass kept them, or simulated again (the same values:
        // a chunk's values depend on its index alone).
        let kept: Option<Vec<Vec<f64>>> =
            std::mem::take(&mut *self.kept.lock().expect("no panic while keeping chunks"))
                .into_iter()
                .collect();
        let stored: Vec<Vec<f64>> = match kept {
            Some(kept) if kept.len() as u64 == self.runner.pairing_chunks() => kept,
            _ => (0..self.runner.pairing_chunks())
                .into_par_iter()
                .map_init(
                    || self.runner.plan.scratch(),
                    |scratch, c| self.runner.chunk_values(c, scratch, &super::Silent),
                )
                .collect(),
        };
        let slots = self.runner.plan.slots();
        let trials = stored.iter().map(|v| v.len() / slots).sum();
        let mut columns: Vec<Vec<f64>> = (0..slots).map(|_| Vec::with_capacity(trials)).collect();
        for (c, values) in stored.iter().enumerate() {
            self.runner.stored_batches(c as u64, values, |b, count| {
                for (j, column) in columns.iter_mut().enumerate() {
                    column.extend_from_slice(&b[j * count..(j + 1) * count]);
                }
            });
        }
        pairings(&columns)
    }
}

/// The pairing of each column but the last with the last (the baseline),
/// the columns holding the same trials in the same order.
pub(crate) fn pairings(columns: &[Vec<f64>]) -> Vec<Pairing> {
    let Some((baseline, configs)) = columns.split_last() else {
        return Vec::new();
    };
    let u = (baseline.as_slice(), sample_p99(baseline));
    configs.par_iter().map(|x| pairing_of((x, sample_p99(x)), u)).collect()
}

/// The pairing of a configuration's sample `x` with the baseline's `u`
/// (the same trials in the same order), each given with its own sample
/// p99 ([`sample_p99`]).
pub(crate) fn pairing_of(x: (&[f64], Option<f64>), u: (&[f64], Option<f64>)) -> Pairing {
    if x.0.len() != u.0.len() {
        return Pairing { mean: None, p99: None };
    }
    let pairs = x.0.iter().copied().zip(u.0.iter().copied());
    pairing_of_pairs(pairs, x.0.len(), (x.1, u.1))
}

/// [`pairing_of`] the `n` pairs `pairs`, a configuration's value and the
/// baseline's of each trial in trial order, with the two samples' own
/// p99s: read where they lie, not copied into columns.
pub(crate) fn pairing_of_pairs<I>(pairs: I, n: usize, (qx, qu): (Option<f64>, Option<f64>)) -> Pairing
where
    I: Iterator<Item = (f64, f64)> + Clone,
{
    let p99 = match (qx, qu) {
        (Some(qx), Some(qu)) => {
            let below = pairs.clone().map(|(a, b)| (a <= qx, b <= qu, 1));
            indicator_correlation_of(below, n as u64)
        }
        _ => None,
    };
    Pairing {
        mean: correlation_of(pairs, n),
        p99,
    }
}

/// The sample's own p99, the value of rank [`quantile::target_index`]
/// (`None` for an empty sample).
fn sample_p99(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut sorted = v.to_vec();
    let (_, &mut q, _) = sorted.select_nth_unstable_by(p99_rank(v.len()), f64::total_cmp);
    Some(q)
}

/// The 0-based rank of the p99 among `len` values.
pub(crate) fn p99_rank(len: usize) -> usize {
    quantile::target_index(LEVEL, len as u64) as usize
}

/// The pairings of a sample given by its trials' start steps, where every
/// trial's values are one step's row: the same as of the trials' columns
/// (the sums run over the trials in order, the p99s and the indicator
/// counts come from the number of trials at each step).
pub(crate) fn pairings_of_steps(rows: &StepRows, steps: &[u32]) -> Vec<Pairing> {
    let Some(baseline) = rows.slots().checked_sub(1) else {
        return Vec::new();
    };
    let counts = step_counts(rows, steps.iter().copied());
    let below_u = below_p99_of_steps(rows, baseline, &counts);
    (0..baseline)
        .into_par_iter()
        .map(|j| {
            let pairs = steps.iter().map(|&s| {
                let row = rows.row(s as usize);
                (row[j], row[baseline])
            });
            let p99 = below_u.as_ref().and_then(|u| {
                let x = below_p99_of_steps(rows, j, &counts)?;
                let weighted = x.iter().zip(u).zip(&counts).map(|((&a, &b), &c)| (a, b, c));
                indicator_correlation_of(weighted, steps.len() as u64)
            });
            Pairing {
                mean: correlation_of(pairs, steps.len()),
                p99,
            }
        })
        .collect()
}

/// Pearson's correlation of two equally long samples; 0 where one is
/// constant, `None` where a value is not finite or there are fewer than two.
#[cfg(test)]
fn correlation(x: &[f64], u: &[f64]) -> Option<f64> {
    if x.len() != u.len() {
        return None;
    }
    correlation_of(x.iter().copied().zip(u.iter().copied()), x.len())
}

/// [`correlation`] of the `n` pairs `pairs`, summed in their order.
fn correlation_of<I: Iterator<Item = (f64, f64)> + Clone>(pairs: I, n: usize) -> Option<f64> {
    if n < 2 {
        return None;
    }
    // Both sums in one pass, each in the pairs' order (folds: over pairs
    // read from nested batches, a fold runs each batch's loop on its own,
    // where `next` would step through the nesting pair by pair).
    let (sx, su, finite) = pairs.clone().fold((0.0, 0.0, true), |(sx, su, finite), (a, b)| {
        (sx + a, su + b, finite & a.is_finite() & b.is_finite())
    });
    if !finite {
        return None;
    }
    let (mx, mu) = (sx / n as f64, su / n as f64);
    let (sxx, suu, sxu) = pairs.fold((0.0, 0.0, 0.0), |(sxx, suu, sxu), (a, b)| {
        let (dx, du) = (a - mx, b - mu);
        (sxx + dx * dx, suu + du * du, sxu + dx * du)
    });
    if sxx == 0.0 || suu == 0.0 {
        return Some(0.0);
    }
    Some((sxu / (sxx * suu).sqrt()).clamp(-1.0, 1.0))
}

/// Per step, whether slot `slot`'s value lies at or below the sample's own
/// p99, the sample holding `counts[s]` trials at step s; `None` for an
/// empty sample.
fn below_p99_of_steps(rows: &StepRows, slot: usize, counts: &[u64]) -> Option<Vec<bool>> {
    let n = counts.iter().sum::<u64>();
    if n == 0 {
        return None;
    }
    let atoms = sorted_atoms(rows, slot, counts);
    let q = atom_at_rank(&atoms, quantile::target_index(LEVEL, n) as usize);
    Some((0..counts.len()).map(|s| rows.row(s)[slot] <= q).collect())
}

/// The correlation of two indicator samples; 0 where one is constant (an
/// atom at the quantile can make every value lie at or below it).
#[cfg(test)]
fn indicator_correlation(a: &[bool], b: &[bool]) -> Option<f64> {
    if a.len() != b.len() {
        return None;
    }
    indicator_correlation_of(a.iter().zip(b).map(|(&a, &b)| (a, b, 1)), a.len() as u64)
}

/// [`indicator_correlation`] of `n` pairs given as distinct pairs
/// `(a, b, times)`.
fn indicator_correlation_of<I: Iterator<Item = (bool, bool, u64)>>(pairs: I, n: u64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    // The three counts in one pass (integers: the order does not matter).
    let (ca, cb, cab) = pairs.fold((0u64, 0u64, 0u64), |(ca, cb, cab), (a, b, times)| {
        (
            ca + u64::from(a) * times,
            cb + u64::from(b) * times,
            cab + u64::from(a & b) * times,
        )
    });
    let share = |c: u64| c as f64 / n as f64;
    let (fa, fb, fab) = (share(ca), share(cb), share(cab));
    let spread = (fa * (1.0 - fa) * fb * (1.0 - fb)).sqrt();
    if spread == 0.0 {
        return Some(0.0);
    }
    Some(((fab - fa * fb) / spread).clamp(-1.0, 1.0))
}

/// The 95% interval of the ratio `a / b` of two positive estimates with
/// standard errors `se_a` and `se_b` and correlation `rho`, by the delta
/// method on the log scale: log(a/b) has variance (se_a/a)² + (se_b/b)² −
/// 2ρ(se_a/a)(se_b/b), and the interval is (a/b)·exp(∓1.96·√that). `None`
/// where a value is not positive and finite.
pub fn ratio_interval(a: f64, se_a: f64, b: f64, se_b: f64, rho: f64) -> Option<(f64, f64)> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    if !(ok(a) && ok(b) && se_a.is_finite() && se_b.is_finite() && rho.is_finite()) || se_a < 0.0 || se_b < 0.0 {
        return None;
    }
    let (ra, rb) = (se_a / a, se_b / b);
    let var = (ra * ra + rb * rb - 2.0 * rho * ra * rb).max(0.0);
    let (r, half) = (a / b, Z95 * var.sqrt());
    Some((r * (-half).exp(), r * half.exp()))
}

/// The standard error of a sample quantile from its distribution-free 95%
/// interval (the order statistics at levels q ∓ 1.96·√(q(1−q)/N)): the
/// interval's width over 2 × 1.96, the Siddiqui–Bloch–Gastwirth estimate
/// of √(q(1−q)/N)/f(x_q).
pub(crate) fn quantile_std_err(interval: (f64, f64)) -> f64 {
    (interval.1 - interval.0) / (2.0 * Z95)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlations_of_known_samples() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(correlation(&x, &[2.0, 4.0, 6.0, 8.0]), Some(1.0));
        assert_eq!(correlation(&x, &[8.0, 6.0, 4.0, 2.0]), Some(-1.0));
        assert_eq!(correlation(&x, &[5.0; 4]), Some(0.0));
        assert_eq!(correlation(&x, &[1.0, 2.0, 3.0, f64::INFINITY]), None);
        // 2 / √(5 · 4).
        let r = correlation(&x, &[1.0, 3.0, 1.0, 3.0]).unwrap();
        assert!((r - 0.447_213_595_499_958).abs() < 1e-12, "{r}");
        // (1, 0, 1, 0) against (1, 1, 0, 0): uncorrelated.
        let (a, b) = ([true, false, true, false], [true, true, false, false]);
        assert_eq!(indicator_correlation(&a, &b), Some(0.0));
        assert_eq!(indicator_correlation(&a, &a), Some(1.0));
        assert_eq!(indicator_correlation(&a, &[true; 4]), Some(0.0));
    }

    /// The pairings of a sample given by start steps equal those of its
    /// trials' columns: atoms tied across steps, a slot constant at its
    /// p99, an infinite value (no mean correlation), steps that never occur.
    #[test]
    fn pairings_of_steps_equal_those_of_the_columns() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(4);
        let (slots, steps) = (4, 12);
        let rows: Vec<f64> = (0..steps * slots)
            .map(|i| match (i % slots, i / slots) {
                (1, _) => 2.0,
                (2, 7) => f64::INFINITY,
                _ => [1.0, 1.5, 2.5, 3.0][rng.random_range(0..4)] + (i % 3) as f64 * 0.125,
            })
            .collect();
        let rows = StepRows::new(rows, slots);
        let trials: Vec<u32> = (0..3000).map(|_| rng.random_range(0..steps as u32 - 2)).collect();
        let columns: Vec<Vec<f64>> = (0..slots)
            .map(|j| trials.iter().map(|&s| rows.row(s as usize)[j]).collect())
            .collect();
        let by_steps = pairings_of_steps(&rows, &trials);
        assert_eq!(by_steps, pairings(&columns));
        assert!(by_steps[0].mean.is_some() && by_steps[0].p99.is_some());
    }

    #[test]
    fn the_p99_indicator_marks_the_lower_99_percent() {
        let v: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        // Rank ⌈0.99 · 200⌉ = 198: the values 1..=198.
        assert_eq!(sample_p99(&v), Some(198.0));
        assert_eq!(sample_p99(&[]), None);
        // Against a sample whose indicator is the same, the correlation is 1.
        let shifted: Vec<f64> = v.iter().map(|x| x + 1000.0).collect();
        let p = pairing_of((&v, sample_p99(&v)), (&shifted, sample_p99(&shifted)));
        assert_eq!(p.p99, Some(1.0));
        assert_eq!(p.mean, Some(1.0));
    }

    /// crc at n with each tolerance of `s`.
    fn crc(n: usize, s: [usize; 2]) -> [crate::scheme::Scheme; 2] {
        use crate::scheme::{Params, Scheme, SchemeKind};
        s.map(|s| {
            let params = Params {
                s: Some(s),
                ..Default::default()
            };
            Scheme::new(SchemeKind::Crc, n, params).unwrap()
        })
    }

    /// Each slot's values over the first `trials` trials of `study`.
    fn columns_of(plan: &crate::engine::TrialPlan, study: &crate::study::Study, trials: u64) -> Vec<Vec<f64>> {
        let mut scratch = plan.scratch();
        let mut out = vec![0.0; plan.slots()];
        let mut columns = vec![Vec::new(); plan.slots()];
        for t in 0..trials {
            plan.run(study.seed(), t, &mut scratch, &mut out);
            columns.iter_mut().zip(&out).for_each(|(c, v)| c.push(*v));
        }
        columns
    }

    /// The pairings the pilot finds with its columns are those of the
    /// pilot's trials' columns.
    #[test]
    fn pairings_on_the_pilot_equal_those_of_its_columns() {
        use crate::dist::Dist;
        use crate::engine::{Silent, TrialPlan};
        use crate::load::LoadModel;
        use crate::study::Study;
        let n = 12;
        let schemes = crc(n, [1, 3]);
        // Transfer times: no exact law, so the run has a pilot of 3 chunks.
        let comm = crate::comm::Comm::new(Some(0.1), None, crate::comm::Link::Shared, 0.0).unwrap();
        let study = Study::new(
            n,
            Dist::pareto(1.0, 1.5).unwrap(),
            LoadModel::Scaled,
            schemes.to_vec(),
            3 * 8192 + 5,
            4,
        )
        .unwrap()
        .with_comm(comm);
        let plan = TrialPlan::new(&study);
        let run = super::super::Started::new(&plan, &study, &Default::default(), &Silent);
        let columns = columns_of(&plan, &study, study.trials());
        let from_pilot = run.pilot_pairings.clone().expect("a pilot of values");
        assert_eq!(from_pilot, pairings(&columns));
        assert!(from_pilot.iter().all(|p| p.mean.is_some() && p.p99.is_some()));
    }

    /// A run without a pilot (its windows from the exact law) pairs on
    /// its first [`CHUNKS`] chunks as its first pass kept them: the
    /// pairings of those trials' columns.
    #[test]
    fn pairings_without_a_pilot_are_on_the_kept_chunks() {
        use crate::dist::Dist;
        use crate::engine::{LAW_WINDOWS_AFTER, PILOT_CHUNKS, Silent, TrialPlan};
        use crate::load::LoadModel;
        use crate::study::Study;
        let n = 8;
        let schemes = crc(n, [1, 2]);
        let trials = LAW_WINDOWS_AFTER * PILOT_CHUNKS * super::super::CHUNK + 3;
        let study = Study::new(
            n,
            Dist::exp(2.0).unwrap(),
            LoadModel::Scaled,
            schemes.to_vec(),
            trials,
            9,
        )
        .unwrap();
        let plan = TrialPlan::new(&study);
        let run = super::super::Started::new(&plan, &study, &Default::default(), &Silent);
        assert!(run.pilot.is_empty() && run.pilot_pairings.is_none());
        run.first_pass(0..super::super::BLOCK_CHUNKS, &Silent);
        assert!(
            run.kept.lock().unwrap().iter().filter(|c| c.is_some()).count() == CHUNKS as usize,
            "the first pass keeps the pairing's chunks"
        );
        let columns = columns_of(&plan, &study, CHUNKS * super::super::CHUNK);
        let kept = run.pairing();
        assert!(run.kept.lock().unwrap().is_empty(), "the pairing takes the kept chunks");
        assert_eq!(kept, pairings(&columns));
        assert!(kept.iter().all(|p| p.mean.is_some() && p.p99.is_some()));
    }

    #[test]
    fn ratio_intervals_follow_the_delta_method() {
        // Independent: relative errors add in quadrature.
        let (lo, hi) = ratio_interval(10.0, 0.3, 5.0, 0.2, 0.0).unwrap();
        let half = Z95 * (0.03f64.powi(2) + 0.04f64.powi(2)).sqrt();
        assert!((lo - 2.0 * (-half).exp()).abs() < 1e-12 && (hi - 2.0 * half.exp()).abs() < 1e-12);
        // Perfectly correlated with equal relative errors: no error at all.
        assert_eq!(ratio_interval(10.0, 0.3, 5.0, 0.15, 1.0), Some((2.0, 2.0)));
        // Negative correlation widens it.
        let wide = ratio_interval(10.0, 0.3, 5.0, 0.2, -0.5).unwrap();
        assert!(wide.0 < lo && wide.1 > hi);
        assert_eq!(ratio_interval(f64::INFINITY, 0.3, 5.0, 0.2, 0.0), None);
        assert_eq!(ratio_interval(1.0, f64::NAN, 5.0, 0.2, 0.0), None);
    }
}
