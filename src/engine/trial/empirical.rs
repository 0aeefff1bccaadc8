//! The bootstrap from a trace as a function of a standard exponential E:
//! the ⌊M·U⌋-th smallest of its M values (0-based) for U = 1 − e^(−E),
//! each value with probability 1/M.
//!
//! Evaluating U takes an `exp_m1` per order statistic. The index is a step
//! function of E, which steps up by one at the edges e_k = −ln(1 − k/M),
//! k = 1..M−1; a table of the edges gives it with a few loads and
//! comparisons. The table's answer is taken only where E lies clear of both
//! edges of its step, by a relative margin G = 10⁻⁷: there M·U is at least
//! G·(M−k)·e_k ≥ G·ln 2 (k < M) away from the integers on either side (as
//! dU/dE = 1 − U), a million times more than the rounding of `exp_m1` (an
//! ulp or two of U) and of the product can move it for M ≤ 10⁸, so the
//! formula itself would give the same index. Anywhere else, about one value
//! in 10⁴ for a trace of a few thousand times, the formula is evaluated:
//! the result is the formula's, bit for bit, for every E.

/// The edges' relative margin (see the module notes).
const MARGIN: f64 = 1e-7;

/// Buckets of the edge table at most.
const MAX_BUCKETS: usize = 1 << 16;

/// A trace's sorted values, and the edges of E at which the index steps.
#[derive(Debug)]
pub(in crate::engine) struct Empirical {
    /// Step k for k = 0..M−1: what one lookup reads, in one cache line.
    steps: Vec<Step>,
    /// For bucket b, covering E in [b/scale, (b+1)/scale), the edges at or
    /// below its start: where the step search begins.
    bucket: Vec<u32>,
    scale: f64,
}

/// The step of index k, for E in [e_k, e_(k+1)).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Step {
    /// e_(k+1) (+∞ for k = M − 1).
    next_edge: f64,
    /// e_k·(1 + G): at or above, the index is certainly at least k (0 for
    /// k = 0).
    clear_above: f64,
    /// e_(k+1)·(1 − G): below, the index is certainly under k + 1 (+∞ for
    /// k = M − 1).
    clear_below: f64,
    /// The k-th smallest value.
    value: f64,
}

impl Empirical {
    /// The bootstrap from the values `sorted` (ascending, at least one).
    pub(in crate::engine) fn new(sorted: Vec<f64>) -> Self {
        let m = sorted.len();
        assert!(
            m > 0 && m < u32::MAX as usize,
            "the bootstrap needs 1 to 2^32 - 2 values"
        );
        let mut edge: Vec<f64> = (0..m).map(|k| -(-(k as f64) / m as f64).ln_1p()).collect();
        edge.push(f64::INFINITY);
        let steps = (0..m)
            .map(|k| Step {
                next_edge: edge[k + 1],
                clear_above: edge[k] * (1.0 + MARGIN),
                clear_below: if k + 1 < m {
                    edge[k + 1] * (1.0 - MARGIN)
                } else {
                    f64::INFINITY
                },
                value: sorted[k],
            })
            .collect();
        // Edges are at least 1/M apart: 2M buckets per unit of E hold at
        // most one each, up to the last edge, ln M.
        let last = edge[m - 1];
        let scale = if last > 0.0 {
            (2.0 * m as f64).min((MAX_BUCKETS - 1) as f64 / last)
        } else {
            1.0
        };
        let buckets = (last * scale) as usize + 1;
        let mut k = 0;
        let bucket = (0..buckets)
            .map(|b| {
                let start = b as f64 / scale;
                while k + 1 < m && edge[k + 1] <= start {
                    k += 1;
                }
                k as u32
            })
            .collect();
        Self { steps, bucket, scale }
    }

    /// The value at ⌊M·(1 − e^(−e))⌋ (at most M − 1), as the formula
    /// computes it.
    #[inline(always)]
    pub(in crate::engine) fn apply(&self, e: f64) -> f64 {
        let m = self.steps.len();
        let b = ((e * self.scale) as usize).min(self.bucket.len() - 1);
        // A bucket holds at most one edge (or the check below fails): one
        // step up at most, without a branch.
        let k = self.bucket[b] as usize;
        let k = (k + usize::from(e >= self.steps[k].next_edge)).min(m - 1);
        let step = &self.steps[k];
        if e >= step.clear_above && e < step.clear_below {
            step.value
        } else {
            self.steps[Self::index_by_formula(e, m)].value
        }
    }

    /// [`Self::apply`], not inlined.
    #[inline(never)]
    pub(in crate::engine) fn apply_outlined(&self, e: f64) -> f64 {
        self.apply(e)
    }

    /// ⌊M·U⌋ for U = 1 − e^(−e), at most M − 1.
    #[inline]
    fn index_by_formula(e: f64, m: usize) -> usize {
        let u = -(-e).exp_m1();
        ((u * m as f64) as usize).min(m - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::Empirical;
    use rand::{RngExt, SeedableRng};

    /// The table gives the formula's index for random E, for E at and
    /// around every edge (where the formula's rounding decides), and for
    /// the ends: 0, tiny, huge, +∞ and NaN.
    #[test]
    fn table_gives_the_formulas_index_everywhere() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        for m in [1usize, 2, 3, 7, 100, 2752, 100_000] {
            let emp = Empirical::new((0..m).map(|i| i as f64).collect());
            let check = |e: f64| {
                let want = Empirical::index_by_formula(e, m) as f64;
                assert_eq!(emp.apply(e).to_bits(), want.to_bits(), "M = {m}, E = {e:e}");
            };
            for e in [0.0, 1e-300, 1e-9, 50.0, 1e300, f64::INFINITY, f64::NAN] {
                check(e);
            }
            for k in 1..m.min(5000) {
                let edge = -(-(k as f64) / m as f64).ln_1p();
                let mut e = edge;
                let mut up = edge;
                for _ in 0..40 {
                    check(e);
                    check(up);
                    e = e.next_down();
                    up = up.next_up();
                }
                for f in [1e-12, 1e-9, 1e-7, 2e-7, 1e-5] {
                    check(edge * (1.0 + f));
                    check(edge * (1.0 - f));
                }
            }
            for _ in 0..200_000 {
                let e: f64 = rand_distr::Distribution::sample(&rand_distr::Exp1, &mut rng);
                check(e * rng.random_range(0.5..3.0));
            }
        }
    }
}
