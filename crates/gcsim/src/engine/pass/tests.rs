//! The accumulator against plain scans, and its two builds against each other.

use super::*;
use crate::stats::quantile::BinRanges;

/// The AVX2 build of the accumulator and the portable one give the same
/// counts and the same bits of every sum, on slots of four windows, of
/// fewer and of more, with and without bin ranges, on values that include
/// window edges, +∞ and NaN.
#[test]
fn avx2_and_portable_accumulators_agree() {
    use rand::SeedableRng;
    use rand_distr::{Distribution, Exp1};
    let slots = 7;
    let refs: Vec<f64> = (0..slots).map(|j| 0.5 + j as f64 * 0.1).collect();
    let watches: Vec<Watch> = (0..slots)
        .flat_map(|slot| {
            [(0.3, 0.6), (0.9, 1.1), (1.5, 1.6), (2.5, 3.0)].map(|(lo, hi)| Watch {
                slot,
                window: Window { lo, hi, bins: 64 },
            })
        })
        .collect();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
    let mut more = watches.clone();
    more.extend(watches[..3].iter().map(|w| Watch { slot: 2, ..*w }));
    for pass in [
        Pass::new(&refs, watches.clone(), slots, None),
        Pass::new(&refs, watches[..5].to_vec(), slots, Some(LogBins::new(0.1, 10.0, 5))).with_deadline(Some(1.0)),
        Pass::new(&refs, more, slots, None).with_bin_ranges(),
    ] {
        let mut a = Counts::new(&pass);
        let mut b = Counts::new(&pass);
        for count in [64, 64, 13, 1, 64] {
            let batch: Vec<f64> = (0..count * slots)
                .map(|i| match i % 31 {
                    3 => f64::INFINITY,
                    7 => f64::NAN,
                    11 => 0.9,
                    13 => 1.1,
                    17 => 1.5,
                    _ => Exp1.sample(&mut rng),
                })
                .collect();
            a.add_batch_portable(&pass, &batch, count);
            b.add_batch(&pass, &batch, count);
        }
        let bits = |c: &Counts| {
            let f = |v: &[[f64; 4]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
            (
                f(&c.s1),
                f(&c.s2),
                c.min.clone(),
                c.max.clone(),
                c.below.clone(),
                c.hits.clone(),
                c.runs.clone(),
                c.run.clone(),
                c.atoms.clone(),
                c.recent.clone(),
                c.held
                    .iter()
                    .map(|a| (a.value.to_bits(), a.bin, a.count))
                    .collect::<Vec<_>>(),
                c.infinite.clone(),
            )
        };
        assert_eq!(format!("{:?}", bits(&a)), format!("{:?}", bits(&b)));
        assert_eq!((a.histogram, a.at_most, a.trials), (b.histogram, b.at_most, b.trials));
    }
}

/// Windows counted four at a time give each window the counts a plain
/// scan gives: on a trace's few atoms (zero among them), on hundreds of
/// atoms (more than a window's table holds) and on continuous values, with
/// slots of no window, of overlapping windows (two quantiles on one
/// atom) and of more than four, with and without bin ranges, chunks sealed
/// or not.
#[test]
fn grouped_windows_count_as_a_plain_scan() {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
    let slots = 6;
    // Zero among the few atoms: its bits are those of a window's empty run.
    let few: Vec<f64> = (0..7)
        .map(|i| if i == 0 { 0.0 } else { 1.0 + 0.25 * i as f64 })
        .collect();
    let many: Vec<f64> = (0..300).map(|i| 0.8 + i as f64 / 150.0).collect();
    for (atoms, discrete) in [(&few, true), (&many, true), (&few, false)] {
        for bin_ranges in [true, false] {
            let mut watches = Vec::new();
            for (slot, windows) in [3, 0, 4, 9, 1, 5].into_iter().enumerate() {
                for _ in 0..windows {
                    let lo = if discrete {
                        atoms[rng.random_range(0..atoms.len())]
                    } else {
                        rng.random_range(0.8..2.5)
                    };
                    let hi = (lo + rng.random_range(0.0..0.6)).next_up();
                    let bins = rng.random_range(1..40);
                    watches.push(Watch {
                        slot,
                        window: Window { lo, hi, bins },
                    });
                }
            }
            let refs = vec![1.5; slots];
            let mut pass = Pass::new(&refs, watches.clone(), slots, None);
            if bin_ranges {
                pass = pass.with_bin_ranges();
            }
            let mut all: Vec<Vec<f64>> = vec![Vec::new(); slots];
            let mut counts = Vec::new();
            for (i, count) in [64, 37, 3, 64, 2000].into_iter().enumerate() {
                let mut c = Counts::new(&pass);
                let batch: Vec<f64> = (0..count * slots)
                    .map(|_| {
                        if discrete {
                            atoms[rng.random_range(0..atoms.len())]
                        } else {
                            rng.random_range(0.5..3.0)
                        }
                    })
                    .collect();
                for (j, col) in batch.chunks_exact(count).enumerate() {
                    all[j].extend_from_slice(col);
                }
                if i == 4 {
                    // Sealed before it counts: every atom goes to the lists.
                    c.seal();
                }
                c.add_batch(&pass, &batch, count);
                if i % 2 == 0 {
                    c.seal();
                }
                counts.push(c);
            }
            let mut totals = PassTotals::new(&pass);
            totals.absorb_all(counts);
            for (watch, tally) in watches.iter().zip(&totals.tallies) {
                let win = &watch.window;
                let mut want = Tally::new(win);
                if bin_ranges {
                    want.bin_range = BinRanges::tracking(win.bins);
                }
                for &v in &all[watch.slot] {
                    if v < win.lo {
                        want.below += 1;
                    } else if v < win.hi {
                        want.add(win.bin(v), v);
                        want.min_in = want.min_in.min(v);
                        want.max_in = want.max_in.max(v);
                    }
                }
                assert_eq!(tally, &want, "discrete {discrete}, bin ranges {bin_ranges}, {watch:?}");
            }
        }
    }
}

/// Infinite values (trials a code never decodes) are counted in the
/// four lanes and in the tail of a batch whose length is not a multiple
/// of four, and nowhere else.
#[test]
fn infinite_values_are_counted_in_lanes_and_tail() {
    let slots = 2;
    let refs = vec![1.0; slots];
    let pass = Pass::new(&refs, Vec::new(), slots, None);
    let mut c = Counts::new(&pass);
    // Slot 0: 13 values, infinite at 1 and 6 (lanes) and 12 (the tail);
    // slot 1: infinite at 11 and 12 (both in the tail).
    let mut batch = vec![0.5; 2 * 13];
    for i in [1, 6, 12, 13 + 11, 13 + 12] {
        batch[i] = f64::INFINITY;
    }
    c.add_batch(&pass, &batch, 13);
    assert_eq!(c.infinite, vec![3, 2]);
    let mut finite = Counts::new(&pass);
    finite.add_batch(&pass, &[0.5; 2 * 13], 13);
    assert_eq!(finite.infinite, vec![0, 0]);
}

#[test]
fn log_bins_cover_and_survival_counts_exceedances() {
    let bins = LogBins::new(1.0, 100.0, 2);
    assert_eq!(bins.index(0.5), 0);
    assert_eq!(bins.index(1.0), 1);
    assert_eq!(bins.index(9.99), 1);
    assert_eq!(bins.index(10.0), 2);
    assert_eq!(bins.index(100.0), 3);
    let pass = Pass::new(&[], Vec::new(), 1, Some(bins));
    let mut c = Counts::new(&pass);
    c.add_batch(&pass, &[0.5, 2.0, 20.0, 30.0, 500.0], 5);
    let mut t = PassTotals::new(&pass);
    t.absorb(c);
    let sf = t.survival(&bins, 0, 5);
    let expected = [(1.0, 0.8), (10.0, 0.6), (100.0, 0.2)];
    for ((x, p), (ex, ep)) in sf.iter().zip(expected) {
        assert!((x - ex).abs() < 1e-9 && (p - ep).abs() < 1e-12, "{sf:?}");
    }
}

/// A chunk counted by its trials' start steps gives the counts of the same
/// values batch by batch: the same bits of every power sum, the same range,
/// infinite values, window tallies (with and without bin ranges), survival
/// histogram and deadline count, on rows that include window edges, +∞
/// and NaN, over a chunk whose last batch is not a multiple of four.
#[test]
fn counting_by_step_equals_counting_every_value() {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    let (slots, steps) = (5, 9);
    let atoms = [0.5, 0.9, 1.1, 1.25, 1.5, 2.0, 3.0, f64::INFINITY, f64::NAN];
    // Rows of atoms and specials, and rows of finite values whose sums
    // show a value added to the wrong lane.
    let atom_rows: Vec<f64> = (0..steps * slots)
        .map(|_| atoms[rng.random_range(0..atoms.len())])
        .collect();
    let finite_rows: Vec<f64> = (0..steps * slots).map(|_| rng.random_range(0.5..3.0)).collect();
    let trials: Vec<u32> = (0..64 * 3 + 11).map(|_| rng.random_range(0..steps as u32)).collect();
    let refs: Vec<f64> = (0..slots).map(|j| 1.0 + j as f64 * 0.1).collect();
    let watches: Vec<Watch> = (0..slots)
        .flat_map(|slot| {
            [(0.9, 1.2), (1.1, 1.6), (2.0, 3.5), (0.4, 0.6), (1.0, 2.5)][..slot + 1]
                .iter()
                .map(move |&(lo, hi)| Watch {
                    slot,
                    window: Window { lo, hi, bins: 7 },
                })
        })
        .collect();
    let bins = LogBins::new(0.5, 4.0, 6);
    let cases = [
        (&atom_rows, &refs[..], true),
        (&atom_rows, &refs[..], false),
        (&atom_rows, &[][..], true),
        (&finite_rows, &refs[..], true),
    ];
    for (rows, refs, bin_ranges) in cases {
        let mut pass = Pass::new(refs, watches.clone(), slots, Some(bins)).with_deadline(Some(1.25));
        if bin_ranges {
            pass = pass.with_bin_ranges();
        }
        let mut by_value = Counts::new(&pass);
        for batch in trials.chunks(64) {
            let count = batch.len();
            let mut values = vec![0.0; count * slots];
            for (i, &s) in batch.iter().enumerate() {
                for j in 0..slots {
                    values[j * count + i] = rows[s as usize * slots + j];
                }
            }
            by_value.add_batch(&pass, &values, count);
        }
        let mut by_step = Counts::new(&pass);
        by_step.add_steps(&pass, &StepTable::new(rows, slots, &pass), &trials);
        let sums = |c: &Counts| {
            let f = |v: &[[f64; 4]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
            (f(&c.s1), f(&c.s2), c.trials)
        };
        assert_eq!(sums(&by_value), sums(&by_step));
        let mut totals = [PassTotals::new(&pass), PassTotals::new(&pass)];
        totals[0].absorb_all(vec![by_value]);
        totals[1].absorb_all(vec![by_step]);
        let [a, b] = totals;
        assert_eq!(format!("{:?}", a.moments), format!("{:?}", b.moments));
        assert_eq!(a.range, b.range);
        assert_eq!(a.tallies, b.tallies, "bin ranges {bin_ranges}");
        assert_eq!((a.histogram, a.at_most), (b.histogram, b.at_most));
    }
}
