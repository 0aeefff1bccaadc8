use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;

/// A rows × cols matrix of uniform entries in [−1, 1), about a third of
/// them zeros of either sign when `sparse`.
fn random(rows: usize, cols: usize, sparse: bool, seed: u64) -> Mat<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    Mat::from_fn(rows, cols, |_, _| {
        let x = rng.random::<f64>() * 2.0 - 1.0;
        match rng.random_range(0..6) {
            0 if sparse => 0.0,
            1 if sparse => -0.0,
            _ => x,
        }
    })
}

/// The product entry by entry, as the module notes state the order.
fn by_the_notes(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    Mat::from_fn(m, n, |i, j| {
        if m > 5 && n > 5 && k > 5 {
            let mut c = 0.0;
            for (block, start) in (0..k).step_by(BLOCK).enumerate() {
                let mut s = 0.0_f64;
                for l in start..(start + BLOCK).min(k) {
                    s = a[(i, l)].mul_add(b[(l, j)], s);
                }
                c = if block == 0 { s } else { c + s };
            }
            c
        } else if k == 0 {
            0.0
        } else {
            (1..k).fold(a[(i, 0)] * b[(0, j)], |c, l| c + a[(i, l)] * b[(l, j)])
        }
    })
}

/// Every entry of every product is the bits of the order in the notes:
/// small and large shapes, ragged edges for the kernel's tiles, inner
/// dimensions of one and of several blocks, and zeros of both signs.
#[test]
fn products_add_in_the_order_of_the_notes() {
    let sizes = [0, 1, 3, 5, 6, 7, 15, 16, 17, 31, 97, 100];
    let mut seed = 0;
    for &m in &sizes {
        for &n in &sizes {
            for k in [0, 1, 5, 6, 9, 64, 255, 256, 257, 600] {
                seed += 1;
                let (a, b) = (
                    random(m, k, seed % 2 == 0, seed),
                    random(k, n, seed % 3 == 0, seed + 1000),
                );
                let (got, want) = (mul(&a, &b), by_the_notes(&a, &b));
                let same = (0..m).all(|i| (0..n).all(|j| got[(i, j)].to_bits() == want[(i, j)].to_bits()));
                assert!(same, "{m} × {k} by {k} × {n}");
            }
        }
    }
    let (a, b) = (random(1030, 300, false, 1), random(300, 1100, true, 2));
    assert!(mul(&a, &b) == by_the_notes(&a, &b), "wider than a strip");
}

#[test]
fn norms_and_dot_products() {
    let m = Mat::from_fn(2, 2, |i, j| [[3.0, 0.0], [-4.0, 12.0]][i][j]);
    assert_eq!(norm(&m), 13.0);
    assert_eq!(norm(Mat::zeros(0, 3)), 0.0);
    let x: Vec<f64> = (1..=11).map(f64::from).collect();
    assert_eq!(dot(&x, &x), 506.0);
    let a = random(37, 5, true, 3);
    let by_columns: f64 = (0..5).map(|j| dot(a.col_as_slice(j), a.col_as_slice(j))).sum();
    assert!((norm(&a) - by_columns.sqrt()).abs() <= 1e-15 * norm(&a));
}

/// Solutions of random systems (one and several right-hand sides, a zero
/// leading entry that needs a row swap) leave residuals at rounding level;
/// a singular system has none.
#[test]
fn lu_solves_square_systems() {
    for (dim, cols) in [(1, 1), (2, 3), (7, 1), (40, 4)] {
        let mut a = random(dim, dim, false, dim as u64);
        if dim > 1 {
            a[(0, 0)] = 0.0;
        }
        let b = random(dim, cols, false, 99);
        let x = lu_solve(&a, b.clone()).unwrap();
        let residual = norm(&(mul(&a, &x) - &b));
        assert!(residual <= 1e-12 * norm(&b) * norm(&a) * norm(&x), "{dim}: {residual}");
    }
    let singular = Mat::from_fn(3, 3, |i, j| (i + j) as f64);
    assert_eq!(lu_solve(&singular, Mat::from_fn(3, 1, |i, _| i as f64)), None);
    assert_eq!(lu_solve(&Mat::zeros(2, 2), Mat::zeros(2, 1)), None);
    assert_eq!(
        select_rows(&singular, &[2, 0]).as_ref(),
        Mat::from_fn(2, 3, |i, j| ((2 - 2 * i) + j) as f64)
    );
    assert_eq!(
        select_columns(&singular, &[1]),
        Mat::from_fn(3, 1, |i, _| (i + 1) as f64)
    );
}
