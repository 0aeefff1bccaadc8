//! Products, norms and linear solves of dense matrices (faer's `Mat<f64>`),
//! each in one fixed order of floating-point operations.
//!
//! faer picks its product and norm kernels by the processor it runs on, and
//! with them the order in which terms are added. The functions here add in
//! one order everywhere, so that the codes built with them (crc and
//! comm-efficient solve linear systems), their decodings, residuals and
//! end-to-end errors are the same bits on every processor (`f64::mul_add`
//! is correctly rounded everywhere); the golden outputs (`tests/golden`)
//! pin them to the last digit, so these orders are part of the output:
//!
//! - **Products** C = A·B ([`mul`]). Where C has more than five rows and
//!   more than five columns and the inner dimension is above five, each
//!   entry is a sum over the inner index in blocks of [`BLOCK`] consecutive
//!   terms: within a block, a chain of fused multiply-adds from zero in
//!   index order; the blocks' sums added in order (`blocked.rs`, which
//!   computes them as fast as a packed matrix-product kernel). Otherwise
//!   each entry is a_i0·b_0j + a_i1·b_1j + … added in index order, each
//!   product rounded.
//! - **Norms** ([`norm`], the Frobenius norm, and [`dot`]): column by
//!   column, a column's sum of products in eight interleaved partial sums
//!   over its first 8⌊len/8⌋ entries, folded in pairs (0 with 4, 1 with 5,
//!   …) into the column's sum, then its remaining entries one by one; the
//!   columns' sums added in order.
//! - **Linear systems** ([`lu_solve`]): Gaussian elimination with partial
//!   pivoting (the first entry of largest magnitude), each column below
//!   the pivot updated in row order, then forward and back substitution
//!   column by column of the right-hand side.
//!
//! [`Columns`] holds the large matrices a decoding builds and drops, with
//! their storage recycled on each thread.

use faer::mat::AsMatRef;
use faer::{Mat, MatMut, MatRef};

mod blocked;

/// Inner dimensions up to this are summed as one chain of fused
/// multiply-adds; longer ones in blocks of this many terms.
const BLOCK: usize = 256;

/// A dense matrix of `f64` with contiguous columns, or a view of one:
/// faer's `Mat`, a `MatRef` or `MatMut` over one (or over a slice, by
/// columns), or a reference to either.
pub(crate) trait Dense: AsMatRef<T = f64, Rows = usize, Cols = usize> {}

impl<M: AsMatRef<T = f64, Rows = usize, Cols = usize>> Dense for M {}

/// Column `j` of `m`.
///
/// # Panics
/// If the column is not contiguous.
pub(crate) fn column(m: MatRef<'_, f64>, j: usize) -> &[f64] {
    m.col(j).try_as_col_major().expect("contiguous columns").as_slice()
}

/// Column `j` of `m`, to write.
///
/// # Panics
/// If the column is not contiguous.
fn column_mut(m: MatMut<'_, f64>, j: usize) -> &mut [f64] {
    m.col_mut(j)
        .try_as_col_major_mut()
        .expect("contiguous columns")
        .as_slice_mut()
}

/// C = A·B in the order of the module notes.
///
/// # Panics
/// If A's columns are not B's rows.
pub(crate) fn mul(a: impl Dense, b: impl Dense) -> Mat<f64> {
    let (a, b) = (a.as_mat_ref(), b.as_mat_ref());
    let mut c = Mat::zeros(a.nrows(), b.ncols());
    mul_into(a, b, c.as_mut());
    c
}

/// C = A·B in the order of the module notes, written over `c` (whatever
/// it held): for a product whose intermediate need not be a `Mat`.
///
/// # Panics
/// If A's columns are not B's rows, or C is not A's rows by B's columns.
pub(crate) fn mul_into(a: MatRef<'_, f64>, b: MatRef<'_, f64>, mut c: MatMut<'_, f64>) {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    assert_eq!(k, b.nrows(), "a product of {m} × {k} by {} × {n}", b.nrows());
    assert_eq!((c.nrows(), c.ncols()), (m, n), "the product's shape");
    if m > 5 && n > 5 && k > 5 {
        return blocked::mul(a, b, c);
    }
    for j in 0..n {
        let out = column_mut(c.as_mut(), j);
        if k == 0 {
            out.fill(0.0);
            continue;
        }
        let x = b[(0, j)];
        out.iter_mut().zip(column(a, 0)).for_each(|(y, a)| *y = a * x);
        for l in 1..k {
            let x = b[(l, j)];
            out.iter_mut().zip(column(a, l)).for_each(|(y, a)| *y += a * x);
        }
    }
}

/// Σ x_i·y_i in the order of one column of [`norm`] (module notes).
///
/// # Panics
/// If the lengths differ.
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "a dot product of vectors of one length");
    let split = x.len() / 8 * 8;
    let mut acc = [0.0; 8];
    for (x, y) in x[..split].chunks_exact(8).zip(y[..split].chunks_exact(8)) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut sum = 0.0;
    for l in 0..4 {
        sum += acc[l] + acc[l + 4];
    }
    for (x, y) in x[split..].iter().zip(&y[split..]) {
        sum += x * y;
    }
    sum
}

/// The Frobenius norm ‖M‖_F (module notes); a column's is its Euclidean
/// norm.
pub(crate) fn norm(m: impl Dense) -> f64 {
    let m = m.as_mat_ref();
    let mut sum = 0.0;
    for j in 0..m.ncols() {
        let col = column(m, j);
        sum += dot(col, col);
    }
    sum.sqrt()
}

/// A matrix stored by columns in a plain `Vec`, for the large matrices a
/// decoding builds and drops: B_F and its singular vectors.
///
/// Its storage is recycled on each thread ([`SPARE`]): a dropped matrix's
/// buffer is kept for the next one built there, whose entries are then
/// written over pages already mapped. Allocated afresh, buffers of tens of
/// megabytes came back from the allocator as new pages, one page fault
/// each when first written: `gcsim codes --n 2000 --scheme frc --s 19`
/// spent 0.5 s in them against 0.8 s of decoding, on one thread.
#[derive(Debug, PartialEq)]
pub(crate) struct Columns {
    data: Vec<f64>,
    rows: usize,
    cols: usize,
}

/// The most buffers [`SPARE`] keeps on a thread: as many large matrices as
/// one decoding holds at once (B_F, U and V).
const SPARES: usize = 3;

/// Buffers of fewer entries than this (512 KiB) are left to the allocator,
/// which reuses them well.
const RECYCLED: usize = 1 << 16;

thread_local! {
    /// Buffers of dropped [`Columns`], for the next ones built on the
    /// thread.
    static SPARE: std::cell::RefCell<Vec<Vec<f64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Columns {
    /// The `rows` × `cols` zero matrix.
    pub(crate) fn zeros(rows: usize, cols: usize) -> Self {
        let len = rows * cols;
        // The smallest spare buffer that holds the matrix, if any.
        let spare = (len >= RECYCLED).then(|| {
            SPARE.with_borrow_mut(|spare| {
                let fits = (0..spare.len()).filter(|&i| spare[i].capacity() >= len);
                let best = fits.min_by_key(|&i| spare[i].capacity())?;
                Some(spare.swap_remove(best))
            })
        });
        let mut data = spare.flatten().unwrap_or_default();
        data.clear();
        data.resize(len, 0.0);
        Columns { data, rows, cols }
    }

    /// The rows.
    pub(crate) fn nrows(&self) -> usize {
        self.rows
    }

    /// The columns.
    pub(crate) fn ncols(&self) -> usize {
        self.cols
    }

    /// Column `j`.
    pub(crate) fn col(&self, j: usize) -> &[f64] {
        &self.data[j * self.rows..(j + 1) * self.rows]
    }

    /// The matrix, as faer sees it.
    pub(crate) fn as_ref(&self) -> MatRef<'_, f64> {
        view(&self.data, self.rows, self.cols)
    }

    /// The matrix, as faer writes it.
    pub(crate) fn as_mut(&mut self) -> MatMut<'_, f64> {
        view_mut(&mut self.data, self.rows, self.cols)
    }
}

impl Drop for Columns {
    fn drop(&mut self) {
        let data = std::mem::take(&mut self.data);
        if data.capacity() < RECYCLED {
            return;
        }
        // `try_with`: nothing to keep once the thread's storage is gone.
        let _ = SPARE.try_with(|spare| {
            let mut spare = spare.borrow_mut();
            if spare.len() < SPARES {
                spare.push(data);
            }
        });
    }
}

impl Clone for Columns {
    fn clone(&self) -> Self {
        let mut copy = Columns::zeros(self.rows, self.cols);
        copy.data.copy_from_slice(&self.data);
        copy
    }
}

impl AsMatRef for Columns {
    type T = f64;
    type Rows = usize;
    type Cols = usize;
    type Owned = Mat<f64>;

    fn as_mat_ref(&self) -> MatRef<'_, f64> {
        self.as_ref()
    }
}

impl std::ops::Index<(usize, usize)> for Columns {
    type Output = f64;

    fn index(&self, (i, j): (usize, usize)) -> &f64 {
        assert!(i < self.rows, "row {i} of {}", self.rows);
        &self.data[j * self.rows + i]
    }
}

impl std::ops::IndexMut<(usize, usize)> for Columns {
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut f64 {
        assert!(i < self.rows, "row {i} of {}", self.rows);
        &mut self.data[j * self.rows + i]
    }
}

/// `x` as a `rows` × `cols` matrix, by columns.
///
/// # Panics
/// If `x` does not hold `rows · cols` entries.
pub(crate) fn view(x: &[f64], rows: usize, cols: usize) -> MatRef<'_, f64> {
    MatRef::from_column_major_slice(x, rows, cols)
}

/// `x` as a `rows` × `cols` matrix, by columns, to write.
///
/// # Panics
/// If `x` does not hold `rows · cols` entries.
pub(crate) fn view_mut(x: &mut [f64], rows: usize, cols: usize) -> MatMut<'_, f64> {
    MatMut::from_column_major_slice_mut(x, rows, cols)
}

/// The rows `rows` of M, in that order.
pub(crate) fn select_rows(m: &Mat<f64>, rows: &[usize]) -> Columns {
    let mut out = Columns::zeros(rows.len(), m.ncols());
    for j in 0..m.ncols() {
        let (from, to) = (m.col_as_slice(j), &mut out.data[j * rows.len()..(j + 1) * rows.len()]);
        to.iter_mut().zip(rows).for_each(|(x, &i)| *x = from[i]);
    }
    out
}

/// The columns `cols` of M, in that order.
pub(crate) fn select_columns(m: &Mat<f64>, cols: &[usize]) -> Mat<f64> {
    Mat::from_fn(m.nrows(), cols.len(), |i, j| m[(i, cols[j])])
}

/// X with A·X = B for a square A, by Gaussian elimination with partial
/// pivoting (module notes); `None` if A is singular (a zero pivot).
///
/// # Panics
/// If A is not square or B's rows are not A's.
pub(crate) fn lu_solve(a: &Mat<f64>, mut b: Mat<f64>) -> Option<Mat<f64>> {
    let dim = a.nrows();
    assert!(a.ncols() == dim && b.nrows() == dim, "a square system");
    let (lu, swaps) = factor(a);
    for &(i, piv) in &swaps {
        for j in 0..b.ncols() {
            let x = b[(i, j)];
            b[(i, j)] = b[(piv, j)];
            b[(piv, j)] = x;
        }
    }
    for k in 0..b.ncols() {
        let col = b.col_as_slice_mut(k);
        for i in 0..dim.saturating_sub(1) {
            let coeff = col[i];
            let l = &lu[i * dim + i + 1..(i + 1) * dim];
            col[i + 1..].iter_mut().zip(l).for_each(|(y, x)| *y += -coeff * x);
        }
        for i in (0..dim).rev() {
            let diag = lu[i * dim + i];
            if diag == 0.0 {
                return None;
            }
            let coeff = col[i] / diag;
            col[i] = coeff;
            let u = &lu[i * dim..i * dim + i];
            col[..i].iter_mut().zip(u).for_each(|(y, x)| *y += -coeff * x);
        }
    }
    Some(b)
}

/// P·A = L·U with L unit lower triangular: L below the diagonal and U on
/// and above it, by columns (column j is `[j·dim..(j + 1)·dim]`), and the
/// row swaps (i, pivot row) in the order made. A column without a nonzero
/// pivot is left as it is (U then has a zero on its diagonal).
fn factor(a: &Mat<f64>) -> (Vec<f64>, Vec<(usize, usize)>) {
    let dim = a.nrows();
    let mut lu: Vec<f64> = (0..dim).flat_map(|j| a.col_as_slice(j).iter().copied()).collect();
    let mut swaps = Vec::with_capacity(dim);
    for i in 0..dim {
        let column = &lu[i * dim + i..(i + 1) * dim];
        let mut piv = 0;
        for (r, x) in column.iter().enumerate().skip(1) {
            if x.abs() > column[piv].abs() {
                piv = r;
            }
        }
        let piv = piv + i;
        let diag = lu[i * dim + piv];
        if diag == 0.0 {
            continue;
        }
        if piv != i {
            swaps.push((i, piv));
            for j in 0..dim {
                lu.swap(j * dim + i, j * dim + piv);
            }
        }
        let inv_diag = 1.0 / diag;
        let (done, rest) = lu.split_at_mut((i + 1) * dim);
        let coeffs = &mut done[i * dim + i + 1..];
        coeffs.iter_mut().for_each(|x| *x *= inv_diag);
        for col in rest.chunks_exact_mut(dim) {
            let pivot = col[i];
            col[i + 1..]
                .iter_mut()
                .zip(&*coeffs)
                .for_each(|(y, x)| *y += -pivot * x);
        }
    }
    (lu, swaps)
}

#[cfg(test)]
mod tests;
