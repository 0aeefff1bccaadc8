//! The large products of [`super::mul`]: every entry of C = A·B a sum over
//! the inner index in blocks of [`BLOCK`] terms, each block a chain of fused
//! multiply-adds from zero in index order, the blocks' sums added in order.
//!
//! Each entry's chain is its own, so the entries can be computed in any
//! order and many at once: `ROWS` rows by [`COLS`] columns of C at a time,
//! their chains advanced together one inner index after another, each step
//! a few vector fused multiply-adds on registers (A's `ROWS` entries for
//! that index, from a packed panel, times one entry of B per column, from
//! a packed strip). A and B are packed a block of inner indices at a time,
//! A's rows [`TALL`] at a time, so that the panels and the strip's group of
//! columns in use stay in the first- and second-level caches, as in a
//! packed matrix-product kernel (Goto & van de Geijn 2008). On x86-64
//! processors with AVX-512F, or AVX2 and FMA, the same code is compiled for
//! those instructions and chosen at run time; elsewhere `f64::mul_add`,
//! correctly rounded everywhere, gives the same bits (slowly where the
//! processor has no fused multiply-add).
//!
//! What it buys, on an AVX-512 processor (Zen 5, one thread): a 900 × 900
//! product in 14–17 ms, as fast as matrixmultiply 0.3's packed AVX-512
//! kernel side by side, against 1.9 s for the same chains entry by entry
//! (`mul_add` in a loop over the entries, 100 times as slow); a decoding
//! of mds at n = 1000, k = 900 takes three such products, and `gcsim codes
//! --n 1000 --scheme mds --k 900 --limit 20` 8.1 s.

use faer::{MatMut, MatRef};

use super::{BLOCK, column, column_mut};

/// Rows of C computed together with AVX-512: two registers per column.
const WIDE: usize = 16;

/// Rows of C computed together otherwise: two AVX2 registers per column
/// (AVX2 has half as many registers, of half the width).
const NARROW: usize = 8;

/// Columns of C computed together: with two registers per column, 12
/// accumulators, enough independent chains to keep the multiply-add units
/// busy, and few enough to stay in registers.
const COLS: usize = 6;

/// Columns of B packed at a time (B's strip: a block of inner indices by
/// these columns), a whole number of groups of [`COLS`].
const WIDTH: usize = 170 * COLS;

/// Rows of A packed at a time, a multiple of [`WIDE`] and [`NARROW`]: its
/// panels for one block (96 × 256 × 8 bytes) stay in the second-level
/// cache while the strip's groups of columns go by.
const TALL: usize = 96;

const _: () = assert!(TALL.is_multiple_of(WIDE) && TALL.is_multiple_of(NARROW));

/// C = A·B (module notes), written over C. The caller checks the shapes.
pub(super) fn mul(a: MatRef<'_, f64>, b: MatRef<'_, f64>, c: MatMut<'_, f64>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the processor has AVX-512F and FMA.
            return unsafe { mul_avx512(a, b, c) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the processor has AVX2 and FMA.
            return unsafe { mul_avx2(a, b, c) };
        }
    }
    product::<NARROW>(a, b, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn mul_avx512(a: MatRef<'_, f64>, b: MatRef<'_, f64>, c: MatMut<'_, f64>) {
    product::<WIDE>(a, b, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mul_avx2(a: MatRef<'_, f64>, b: MatRef<'_, f64>, c: MatMut<'_, f64>) {
    product::<NARROW>(a, b, c)
}

/// C = A·B, `ROWS` rows of C at a time.
#[inline(always)]
fn product<const ROWS: usize>(a: MatRef<'_, f64>, b: MatRef<'_, f64>, mut c: MatMut<'_, f64>) {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let mut panels = vec![0.0; TALL.min(m.next_multiple_of(ROWS)) * BLOCK.min(k)];
    let mut strip = vec![0.0; BLOCK.min(k) * WIDTH.min(n.next_multiple_of(COLS))];
    for (block, start) in (0..k).step_by(BLOCK).enumerate() {
        let len = BLOCK.min(k - start);
        for first in (0..n).step_by(WIDTH) {
            let width = WIDTH.min(n - first);
            let strip = &mut strip[..len * width.next_multiple_of(COLS)];
            pack_strip(b, strip, start, len, first, width);
            for high in (0..m).step_by(TALL) {
                let height = TALL.min(m - high);
                let panels = &mut panels[..height.next_multiple_of(ROWS) * len];
                for (p, panel) in panels.chunks_exact_mut(ROWS * len).enumerate() {
                    let top = high + p * ROWS;
                    pack_panel::<ROWS>(a, panel, start, top, ROWS.min(m - top));
                }
                for (g, group) in strip.chunks_exact(COLS * len).enumerate() {
                    let left = first + g * COLS;
                    for (p, panel) in panels.chunks_exact(ROWS * len).enumerate() {
                        let top = high + p * ROWS;
                        let sums = chains::<ROWS>(panel, group);
                        store(
                            c.as_mut(),
                            &sums,
                            top,
                            ROWS.min(m - top),
                            left,
                            COLS.min(first + width - left),
                            block > 0,
                        );
                    }
                }
            }
        }
    }
}

/// A's rows `top..top + rows` for the inner indices `start..`, one index's
/// `ROWS` entries after another (zero past the last row).
#[inline(always)]
fn pack_panel<const ROWS: usize>(a: MatRef<'_, f64>, panel: &mut [f64], start: usize, top: usize, rows: usize) {
    for (l, p) in panel.chunks_exact_mut(ROWS).enumerate() {
        p[..rows].copy_from_slice(&column(a, start + l)[top..top + rows]);
        p[rows..].fill(0.0);
    }
}

/// B's columns `first..first + width` for `len` inner indices from
/// `start`, [`COLS`] columns at a time: within a group, one index's
/// entries after another (zero past the last column).
#[inline(always)]
fn pack_strip(b: MatRef<'_, f64>, strip: &mut [f64], start: usize, len: usize, first: usize, width: usize) {
    for (g, group) in strip.chunks_exact_mut(COLS * len).enumerate() {
        for col in 0..COLS {
            let j = g * COLS + col;
            if j < width {
                let source = &column(b, first + j)[start..start + len];
                for (x, y) in group.chunks_exact_mut(COLS).zip(source) {
                    x[col] = *y;
                }
            } else {
                group.chunks_exact_mut(COLS).for_each(|x| x[col] = 0.0);
            }
        }
    }
}

/// One block's chains of fused multiply-adds for the panel's `ROWS` rows
/// and a group's [`COLS`] columns.
#[inline(always)]
fn chains<const ROWS: usize>(panel: &[f64], group: &[f64]) -> [[f64; ROWS]; COLS] {
    let mut acc = [[0.0; ROWS]; COLS];
    for (p, x) in panel.chunks_exact(ROWS).zip(group.chunks_exact(COLS)) {
        let p: &[f64; ROWS] = p.try_into().unwrap();
        let x: &[f64; COLS] = x.try_into().unwrap();
        for c in 0..COLS {
            for r in 0..ROWS {
                acc[c][r] = p[r].mul_add(x[c], acc[c][r]);
            }
        }
    }
    acc
}

/// Writes one block's sums into C (rows `top..top + rows`, columns
/// `left..left + cols`), or adds them to C's sums of the earlier blocks.
#[inline(always)]
fn store<const ROWS: usize>(
    mut c: MatMut<'_, f64>,
    sums: &[[f64; ROWS]; COLS],
    top: usize,
    rows: usize,
    left: usize,
    cols: usize,
    add: bool,
) {
    for (j, s) in sums.iter().take(cols).enumerate() {
        let out = &mut column_mut(c.as_mut(), left + j)[top..top + rows];
        if add {
            out.iter_mut().zip(s).for_each(|(y, x)| *y += x);
        } else {
            out.copy_from_slice(&s[..rows]);
        }
    }
}
