use super::max_of_group_minima;

/// The transform keeps the quantile: (1 − e^(−r·v))^(n/r) = (1 − e^(−e))^n,
/// i.e. (1/r)·ln(1 − e^(−r·v)) = ln(1 − e^(−e)), to a few ulps, from small
/// maxima (p small) to far in the tail (p within 1e-17 of 1), where the
/// plain formula −ln(1 − (1 − e^(−e))^r)/r returns 0 or loses every digit.
#[test]
fn the_group_maximum_has_the_maximums_quantile() {
    for e in [1e-3, 0.05, 0.7, 1.0, 3.0, 11.5, 25.0, 40.0, 300.0] {
        // ln(1 − e^(−x)), by expm1 for small x and ln_1p for large
        // (Mächler 2012, "Accurately computing log(1 − exp(−|a|))").
        let ln_p = |x: f64| {
            if x < 0.5 {
                (-(-x).exp_m1()).ln()
            } else {
                (-(-x).exp()).ln_1p()
            }
        };
        for r in [2usize, 3, 10, 100, 1000] {
            if r as f64 * ln_p(e) < -700.0 {
                // p^r underflows: v would be below the smallest double
                // (a maximum of n ≥ r workers is never this small).
                continue;
            }
            let v = max_of_group_minima(e, r);
            let (lhs, rhs) = (ln_p(r as f64 * v) / r as f64, ln_p(e));
            assert!(
                (lhs - rhs).abs() <= 1e-12 * rhs.abs(),
                "e {e} r {r}: v {v}, {lhs} vs {rhs}"
            );
            // Each group's minimum is at most the maximum of all, so
            // the group rule's law lies below the maximum's.
            assert!(v > 0.0 && v < e, "e {e} r {r}: v {v}");
        }
        assert_eq!(max_of_group_minima(e, 1), e);
    }
    // Far in the tail, v = (e − ln r)/r + O(e^(−e)).
    let v = max_of_group_minima(40.0, 10);
    assert!((v - (40.0 - 10f64.ln()) / 10.0).abs() < 1e-15, "{v}");
}

#[test]
fn merging_runs_sorts_them() {
    let runs: [&[f64]; 4] = [&[0.5, 1.0, 1.0, 7.0], &[], &[0.1, 1.0, 2.0, 2.0, 9.0, 10.0], &[3.0]];
    let mut src = Vec::new();
    let mut ends = Vec::new();
    for r in runs {
        src.extend_from_slice(r);
        ends.push(src.len());
    }
    let mut expected = src.clone();
    expected.sort_by(f64::total_cmp);
    let mut dst = vec![0.0; src.len()];
    super::merge_runs(&src, &ends, &mut dst, &mut Vec::new());
    assert_eq!(dst, expected);
    let inf = f64::INFINITY;
    for (a, b) in [
        (&[][..], &[1.0][..]),
        (&[2.0], &[]),
        (&[1.0, 3.0], &[2.0]),
        (&[5.0], &[1.0, 2.0, 3.0]),
        // Values equal to the sentinels.
        (&[1.0, 2.0], &[3.0, 4.0, inf, inf, inf, inf, inf, inf, inf, inf]),
        (&[inf, inf], &[0.5, inf]),
        (&[-inf, 0.0, inf], &[-inf, -inf, 1.0]),
        (&[inf], &[inf]),
    ] {
        let mut pad = Vec::new();
        super::merge_two(a, b, &mut pad);
        let mut e: Vec<f64> = a.iter().chain(b).copied().collect();
        e.sort_by(f64::total_cmp);
        assert_eq!(&pad[pad.len() - e.len()..], &e[..], "{a:?} {b:?}");
    }
}

/// The run of ranks down by one from the first, and the gather with
/// it: each slot with a rank gets that rank's value, the others keep
/// theirs.
#[test]
fn the_top_is_gathered_by_rank() {
    let none = u32::MAX;
    let cases: [(&[u32], usize); 7] = [
        (&[9, 8, 7, 2, none, 9], 3),
        (&[none, 8, 7], 0),
        (&[0], 1),
        (&[3, 2, 1, 0], 4),
        (&[5, 5, 4], 1),
        (&[4, 5], 1),
        (&[], 0),
    ];
    let sorted: Vec<f64> = (0..10).map(|i| 10.0 + i as f64).collect();
    for (ranks, run) in cases {
        assert_eq!(super::descending_run(ranks), run, "{ranks:?}");
        let mut out = vec![-1.0; ranks.len()];
        super::gather_top(&sorted, ranks, run, &mut out);
        let want: Vec<f64> = ranks
            .iter()
            .map(|&r| if r == none { -1.0 } else { sorted[r as usize] })
            .collect();
        assert_eq!(out, want, "{ranks:?}");
    }
}

/// The top merge gives the last entries of the full merge, for every
/// `need`, with empty runs, ties and infinite values.
#[test]
fn top_merge_gives_the_full_merges_top() {
    use rand::{RngExt, SeedableRng};
    let inf = f64::INFINITY;
    let cases: [&[&[f64]]; 5] = [
        &[&[0.5, 1.0, 1.0, 7.0], &[], &[0.1, 1.0, 2.0, 2.0, 9.0, 10.0], &[3.0]],
        &[&[1.0, 2.0, inf], &[0.5, inf, inf]],
        // Real infinities tie the exhausted sides' sentinels.
        &[&[-inf, -inf, 1.0], &[-inf, 2.0, inf, inf]],
        &[&[], &[4.0, 5.0]],
        &[&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]],
    ];
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(4);
    let random: Vec<Vec<Vec<f64>>> = (0..200)
        .map(|_| {
            (0..rng.random_range(1..4))
                .map(|_| {
                    let mut r: Vec<f64> = (0..rng.random_range(0..12))
                        .map(|_| rng.random_range(0..8) as f64)
                        .collect();
                    r.sort_by(f64::total_cmp);
                    r
                })
                .collect()
        })
        .collect();
    let random: Vec<Vec<&[f64]>> = random.iter().map(|c| c.iter().map(Vec::as_slice).collect()).collect();
    for runs in cases.iter().copied().chain(random.iter().map(Vec::as_slice)) {
        let mut src = Vec::new();
        let mut ends = Vec::new();
        for r in runs {
            src.extend_from_slice(r);
            ends.push(src.len());
        }
        let mut full = vec![0.0; src.len()];
        super::merge_runs(&src, &ends, &mut full, &mut Vec::new());
        for need in 1..=src.len() {
            let mut dst = vec![f64::NAN; src.len()];
            super::merge_runs_top(runs.iter().copied(), need, &mut dst, &mut Vec::new());
            let n = src.len();
            assert_eq!(&dst[n - need..], &full[n - need..], "{runs:?}, need {need}");
        }
    }
}

#[test]
fn prefix_sum_is_a_running_sum() {
    for len in [0, 1, 3, 4, 7, 8, 100, 101] {
        let mut v: Vec<f64> = (0..len).map(|i| (i % 7) as f64 + 0.5).collect();
        let expected: Vec<f64> = v
            .iter()
            .scan(0.0, |acc, x| {
                *acc += x;
                Some(*acc)
            })
            .collect();
        super::prefix_sum(&mut v);
        assert_eq!(v, expected, "len {len}");
    }
}

#[test]
fn four_rows_transpose_into_their_columns() {
    for slots in [1, 3, 4, 5, 8, 52] {
        let count = 12;
        let rows: Vec<f64> = (0..4 * slots).map(|x| x as f64 + 0.25).collect();
        for i in [0, 4, 8] {
            let mut values = vec![f64::NAN; slots * count];
            super::transpose_rows4(&rows, &mut values, count, i);
            for (k, &v) in values.iter().enumerate() {
                let (j, t) = (k / count, k % count);
                if (i..i + 4).contains(&t) {
                    assert_eq!(v, rows[(t - i) * slots + j], "slots {slots}, slot {j}, trial {t}");
                } else {
                    assert!(v.is_nan(), "slots {slots}: trial {t} written");
                }
            }
        }
    }
}
