//! Unit tests of the constructions and the decoder. Tolerances: residuals
//! against [`TOLERANCE`] (1e-9 relative), end-to-end errors against
//! [`check::E2E_TOLERANCE`]; every random matrix has a fixed seed.

use super::check::{self, E2E_TOLERANCE};
use super::*;
use crate::encoding;
use crate::scheme::{Params, Rule};

fn scheme(kind: SchemeKind, n: usize, s: usize, m: Option<usize>) -> Scheme {
    Scheme::new(
        kind,
        n,
        Params {
            s: Some(s),
            m,
            k: None,
            d: None,
            ..Params::default()
        },
    )
    .unwrap()
}

fn subsets(n: usize) -> impl Iterator<Item = Vec<usize>> {
    (0u32..1 << n).map(move |mask| (0..n).filter(|&i| mask >> i & 1 == 1).collect())
}

/// Every set of at least n − s workers decodes, and (for these general-position
/// codes) every smaller set does not.
fn decodes_exactly_above_threshold(code: &Code) {
    let (n, k) = (code.scheme().n(), code.scheme().k());
    for f in subsets(n) {
        let d = code.decode(&f);
        if f.len() >= k {
            assert!(d.decodable && d.residual < TOLERANCE, "{}: {f:?} {d:?}", code.scheme());
        } else {
            assert!(
                !d.decodable && d.residual > 1e-3,
                "{}: {f:?} residual {}",
                code.scheme(),
                d.residual
            );
        }
    }
}

#[test]
fn every_pattern_of_at_most_s_stragglers_decodes() {
    let mut codes = Vec::new();
    for s in [0, 1, 2, 3, 5] {
        codes.push(Code::new(&scheme(SchemeKind::Frc, 12, s, None), 0).unwrap());
    }
    for s in 0..=5 {
        codes.push(Code::new(&scheme(SchemeKind::Crc, 11, s, None), 1).unwrap());
    }
    for (s, m) in [(1, 1), (1, 2), (2, 2), (3, 3), (2, 8)] {
        let ce = scheme(SchemeKind::CommEfficient, 10, s, Some(m));
        codes.push(Code::new(&ce, 2).unwrap());
        codes.push(Code::with_generator(&ce, Generator::Vandermonde, 2).unwrap());
    }
    for s in [0, 3, 9] {
        let mds = scheme(SchemeKind::Mds, 10, s, None);
        codes.push(Code::new(&mds, 3).unwrap());
        codes.push(Code::with_generator(&mds, Generator::Vandermonde, 3).unwrap());
    }
    for code in &codes {
        let row = check::check(code, 1_000_000, 0, &|| ());
        assert!(row.exhaustive, "{}", code.scheme());
        assert_eq!(row.decodable_fraction, 1.0, "{}: {row:?}", code.scheme());
        assert!(row.max_residual < TOLERANCE, "{}: {row:?}", code.scheme());
        assert!(row.e2e_error < E2E_TOLERANCE, "{}: {row:?}", code.scheme());
        assert!(row.pass);
    }
}

#[test]
fn frc_decodability_is_the_groups_rule() {
    for (n, s) in [(8, 0), (8, 1), (8, 3), (8, 7), (9, 2), (12, 5)] {
        let sch = scheme(SchemeKind::Frc, n, s, None);
        assert_eq!(sch.rule(), Rule::Groups { size: s + 1 });
        let code = Code::new(&sch, 0).unwrap();
        for f in subsets(n) {
            let mut mask = vec![false; n];
            f.iter().for_each(|&i| mask[i] = true);
            let d = code.decode(&f);
            assert_eq!(d.decodable, sch.rule().decodable(&mask), "n={n} s={s} {f:?} {d:?}");
            // A missing group loses at least √((s+1)/n) of 1.
            if !d.decodable {
                assert!(d.residual >= ((s + 1) as f64 / n as f64).sqrt() - 1e-12);
            }
        }
    }
}

#[test]
fn crc_comm_efficient_and_mds_need_their_threshold() {
    decodes_exactly_above_threshold(&Code::new(&scheme(SchemeKind::Crc, 8, 2, None), 5).unwrap());
    decodes_exactly_above_threshold(&Code::new(&scheme(SchemeKind::Crc, 9, 4, None), 6).unwrap());
    decodes_exactly_above_threshold(&Code::new(&scheme(SchemeKind::CommEfficient, 8, 2, Some(2)), 7).unwrap());
    decodes_exactly_above_threshold(&Code::new(&scheme(SchemeKind::CommEfficient, 9, 3, Some(3)), 8).unwrap());
    decodes_exactly_above_threshold(&Code::new(&scheme(SchemeKind::Mds, 8, 3, None), 9).unwrap());
}

#[test]
fn supports_are_the_stated_partitions() {
    let (n, s, m) = (9, 2, 3);
    let crc = Code::new(&scheme(SchemeKind::Crc, n, s, None), 4).unwrap();
    let ce = Code::new(&scheme(SchemeKind::CommEfficient, n, s, Some(m)), 4).unwrap();
    for i in 0..n {
        let holds = |j: usize, width: usize| (j + n - i) % n < width;
        for j in 0..n {
            assert_eq!(crc.encoding()[(i, j)] != 0.0, holds(j, s + 1), "crc ({i}, {j})");
            for u in 0..m {
                assert_eq!(
                    ce.encoding()[(i, j * m + u)] != 0.0,
                    holds(j, s + m),
                    "ce ({i}, {j}, {u})"
                );
            }
        }
    }
    for code in [&crc, &ce] {
        let b = code.encoding();
        let norm = |i: usize| (0..b.ncols()).map(|j| b[(i, j)] * b[(i, j)]).sum::<f64>().sqrt();
        assert!((0..b.nrows()).all(|i| (norm(i) - 1.0).abs() < 1e-12));
    }
}

#[test]
fn a_damaged_code_is_caught() {
    // Zeroing one coefficient of crc breaks the span condition for the sets
    // that rely on that row: the check must say so.
    let sch = scheme(SchemeKind::Crc, 8, 2, None);
    let good = Code::new(&sch, 0).unwrap();
    let mut bad = good.clone();
    bad.b[(3, 4)] = 0.0;
    let row = check::check(&bad, 1_000_000, 0, &|| ());
    assert!(row.decodable_fraction < 1.0 && !row.pass, "{row:?}");
    assert!(check::end_to_end(&bad, 64, 0, &|| ()) > 1e-3);
}

#[test]
fn ignore_residual_is_the_lost_fraction() {
    let code = Code::new(&scheme(SchemeKind::Ignore, 10, 3, None), 0).unwrap();
    for f in [vec![], vec![0, 1], (0..7).collect(), (0..10).collect::<Vec<_>>()] {
        let d = code.decode(&f);
        assert!((d.residual - ignore_residual(10, f.len())).abs() < 1e-15, "{f:?} {d:?}");
        assert_eq!(d.decodable, f.len() == 10);
    }
    let row = check::check(&code, 1_000_000, 0, &|| ());
    assert!((row.max_residual - 0.3_f64.sqrt()).abs() < 1e-15 && !row.pass);
}

#[test]
fn vandermonde_conditioning_grows_and_gaussian_does_not_blow_up() {
    let cond = |n: usize, g: Generator| {
        let sch = scheme(SchemeKind::Mds, n, n / 10, None);
        let code = Code::with_generator(&sch, g, 0).unwrap();
        code.decode(&(0..sch.k()).collect::<Vec<_>>()).condition
    };
    let v: Vec<f64> = [10, 20, 30, 40]
        .iter()
        .map(|&n| cond(n, Generator::Vandermonde))
        .collect();
    // Exponential growth, at least 10× per 10 more workers, until the
    // smallest singular value drowns in rounding (σ_min ≈ ε·σ_max, κ ≈ 1e13
    // and more, where float64 can no longer measure it).
    assert!(v[..3].windows(2).all(|w| w[1] > 10.0 * w[0]), "{v:?}");
    assert!(v[3] > 1e12, "{v:?}");
    let g: Vec<f64> = [10, 20, 30, 40].iter().map(|&n| cond(n, Generator::Gaussian)).collect();
    assert!(g.iter().all(|&c| c < 1e4), "{g:?}");
}

#[test]
fn seeds_fix_the_matrices() {
    let sch = scheme(SchemeKind::Crc, 10, 3, None);
    let a = Code::new(&sch, 11).unwrap();
    assert_eq!(a.encoding(), Code::new(&sch, 11).unwrap().encoding());
    assert_ne!(a.encoding(), Code::new(&sch, 12).unwrap().encoding());
}

#[test]
fn errors_name_the_parameter() {
    let crc = scheme(SchemeKind::Crc, 10, 3, None);
    let err = Code::with_generator(&crc, Generator::Vandermonde, 0).unwrap_err();
    assert!(err.to_string().starts_with("generator vandermonde"), "{err}");
    let flags = |p: crate::param::Param| format!("--{}", p.key());
    assert!(err.describe(&flags).starts_with("--generator vandermonde"), "{err}");
    let big = scheme(SchemeKind::Crc, MAX_CODE_N + 1, 3, None);
    assert!(Code::new(&big, 0).unwrap_err().to_string().starts_with("n "));
}

/// The random regular graphs of approx-regular: 0/1 entries, every worker
/// and every partition of degree d, for degrees up to n/2 (unions of
/// matchings, repaired by swaps) and above it (complements), over many
/// seeds so that the repair is exercised; and one graph pinned entry by
/// entry, so that a change of its random stream is seen.
#[test]
fn regular_graphs_are_regular_and_reproducible() {
    for (n, d) in [
        (6, 1),
        (6, 2),
        (6, 3),
        (6, 4),
        (6, 6),
        (7, 3),
        (7, 4),
        (10, 5),
        (10, 7),
        (12, 11),
    ] {
        for seed in 0..40 {
            let b = encoding::regular_graph(n, d, seed);
            assert!(
                (0..n).all(|j| b.col_as_slice(j).iter().all(|&x| x == 0.0 || x == 1.0)),
                "n={n} d={d} seed={seed}"
            );
            for i in 0..n {
                assert_eq!(b.row(i).sum(), d as f64, "n={n} d={d} seed={seed}: row {i}");
                assert_eq!(b.col(i).sum(), d as f64, "n={n} d={d} seed={seed}: column {i}");
            }
        }
    }
    // At d = n/2 the union of matchings is drawn, above it a complement.
    for (d, pinned) in [(2, PINNED_GRAPH), (3, PINNED_HALF), (4, PINNED_DENSE)] {
        let b = encoding::regular_graph(6, d, 7);
        let entries: Vec<Vec<u8>> = (0..6).map(|i| (0..6).map(|j| b[(i, j)] as u8).collect()).collect();
        assert_eq!(entries, pinned.map(|r| r.to_vec()).to_vec(), "d={d}");
    }
}

/// `regular_graph(6, 4, 7)`, as first drawn: the complement of
/// [`PINNED_GRAPH`], which is drawn from the same stream.
const PINNED_DENSE: [[u8; 6]; 6] = [
    [1, 0, 1, 1, 0, 1],
    [1, 0, 0, 1, 1, 1],
    [0, 1, 1, 0, 1, 1],
    [0, 1, 1, 0, 1, 1],
    [1, 1, 0, 1, 1, 0],
    [1, 1, 1, 1, 0, 0],
];

/// `regular_graph(6, 3, 7)`, as first drawn.
const PINNED_HALF: [[u8; 6]; 6] = [
    [0, 1, 0, 1, 1, 0],
    [0, 1, 1, 0, 0, 1],
    [1, 0, 0, 1, 1, 0],
    [1, 0, 1, 1, 0, 0],
    [1, 0, 1, 0, 0, 1],
    [0, 1, 0, 0, 1, 1],
];

/// `regular_graph(6, 2, 7)`, as first drawn (see the test above).
const PINNED_GRAPH: [[u8; 6]; 6] = [
    [0, 1, 0, 0, 1, 0],
    [0, 1, 1, 0, 0, 0],
    [1, 0, 0, 1, 0, 0],
    [1, 0, 0, 1, 0, 0],
    [0, 0, 1, 0, 0, 1],
    [0, 0, 0, 0, 1, 1],
];

/// The decodings `gcsim codes` counts for its progress bar are those it
/// makes: every pattern of at most s stragglers when there are at most
/// `limit`, else `limit`, and the end-to-end sets.
#[test]
fn decodings_count_patterns_and_end_to_end_sets() {
    let code = Code::new(&scheme(SchemeKind::Crc, 6, 1, None), 0).unwrap();
    // 1 + 6 patterns of at most one straggler.
    assert_eq!(check::decodings(&code, 100), 7 + check::E2E_SETS as u64);
    assert_eq!(check::decodings(&code, 7), 7 + check::E2E_SETS as u64);
    assert_eq!(check::decodings(&code, 3), 3 + check::E2E_SETS as u64);
}

/// The pass's copy of B's rows is B's: each row dense and, as (column,
/// value), exactly its nonzeros in column order, for a sparse code (frc),
/// a banded one (crc) and a user's (custom, with zero rows).
#[test]
fn rows_copy_the_encoding() {
    let rows = [[0.0, 2.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.0], [5.0, 0.0, 0.5, 0.0]];
    let b = Mat::from_fn(3, 4, |i, j| rows[i][j]);
    let shape = crate::scheme::CustomShape {
        n: 3,
        partitions: 4,
        max_support: 2,
    };
    let custom = Code::custom(&Scheme::custom(shape, None).unwrap(), b);
    for code in [
        Code::new(&scheme(SchemeKind::Frc, 12, 2, None), 0).unwrap(),
        Code::new(&scheme(SchemeKind::Crc, 11, 3, None), 0).unwrap(),
        custom,
    ] {
        let b = code.encoding();
        for i in 0..b.nrows() {
            let row: Vec<f64> = (0..b.ncols()).map(|j| b[(i, j)]).collect();
            assert_eq!(code.rows().dense(i), &row[..], "{} row {i}", code.scheme());
            let nonzeros: Vec<(usize, f64)> = row.iter().copied().enumerate().filter(|e| e.1 != 0.0).collect();
            assert_eq!(code.rows().nonzeros(i), &nonzeros[..], "{} row {i}", code.scheme());
        }
    }
}
