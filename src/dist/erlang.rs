//! The Erlang quantile as a function of a standard exponential, for drawing
//! the order statistics of additive loads from exponential ones.
//!
//! Under the `additive` load model a worker of load ℓ (a whole number of
//! units) whose units are i.i.d. exponential with rate μ takes
//! Gamma(ℓ, μ), the Erlang law. Its survival function is
//! Q(ℓ, x) = e^(−x) Σ_{j<ℓ} x^j/j! (x in units of 1/μ), and its cumulative
//! hazard H(x) = −ln Q(ℓ, x) maps it to a standard exponential: H(X) ~
//! Exp(1). So the Erlang time of a standard exponential e is the root of
//! H(x) = e, an increasing function of e, and the k-th order statistic of n
//! Erlang workers is that of E_(k), as for the laws the order-statistic
//! sampler already writes as functions of E.
//!
//! H is evaluated by the two series of the regularized incomplete gamma
//! function (Abramowitz & Stegun 6.5.29 and 6.5.13; Press et al., Numerical
//! Recipes §6.2), each on the side of x = ℓ where it converges fastest:
//! - x < ℓ: P(ℓ, x) = f(x)·(x/ℓ)·Σ_{i≥0} x^i/((ℓ+1)⋯(ℓ+i)), H = −ln(1 − P);
//! - x ≥ ℓ: Q(ℓ, x) = f(x)·R, R = Σ_{i<ℓ} (ℓ−1)⋯(ℓ−i)/x^i, H = −ln f − ln R,
//!
//! with f(x) = e^(−x) x^(ℓ−1)/(ℓ−1)! the density; H'(x) = f/Q. Both sums
//! stop once a term no longer changes the total, after O(√ℓ) terms near the
//! median. The Gamma hazard increases for ℓ ≥ 1, so H is convex and Newton's
//! method converges from any start: from the left, the first step lands to
//! the right of the root, and from the right the iterates decrease to it.
//! The start is Wilson & Hilferty's cube-root approximation (1931), or the
//! left tail's x ≈ (e·ℓ!)^(1/ℓ) where that approximation goes negative.
//!
//! Newton's method costs a few series of O(√ℓ) terms per value. The
//! sampler calls [`ErlangQuantile::at`] instead: piecewise quintic Hermite
//! interpolation (the value and its first two derivatives in e at the
//! knots) on 32 cells per binade of e, from 2⁻⁸ to 2⁷, each binade built on
//! first use. The cell and the position within it come from the bits of e,
//! so a value costs one table read and a polynomial of degree 5. The
//! interpolation error is h⁶/46080·|x⁽⁶⁾| for a cell of width h ≤ e/32:
//! near 1e-13 relative where x bends most (ℓ = 2 in the left tail, x ∝ √e),
//! and the tests check it against the Newton root; outside the table, the
//! root itself.

use std::sync::OnceLock;

/// The largest load (units per worker) the table serves: above it, the
/// cancellation in −ln f (terms of size ℓ·ln ℓ) costs more digits than the
/// interpolation keeps.
pub const MAX_ERLANG_SHAPE: u32 = 1024;

/// Binades of e the table covers: [2^LOW, 2^HIGH).
const LOW: i32 = -8;
const HIGH: i32 = 7;
/// Cells per binade: 2^CELL_BITS.
const CELL_BITS: u32 = 5;
const CELLS: usize = 1 << CELL_BITS;
/// Mantissa bits below the cell index: the position within a cell.
const FRACTION_BITS: u32 = 52 - CELL_BITS;

/// The Erlang law of shape ℓ with rate 1, as a function of a standard
/// exponential: `at(e)` is the x with Q(ℓ, x) = e^(−e).
#[derive(Debug)]
pub struct ErlangQuantile {
    shape: u32,
    /// ln (ℓ−1)!.
    ln_factorial: f64,
    /// Per binade, per cell, the quintic's coefficients in the position
    /// t ∈ [0, 1) within the cell, constant term first.
    binades: Vec<OnceLock<Box<[[f64; 6]; CELLS]>>>,
}

impl ErlangQuantile {
    /// The quantile of Gamma(`shape`, 1), for 1 ≤ shape ≤ [`MAX_ERLANG_SHAPE`].
    ///
    /// # Panics
    /// If `shape` is outside that range.
    pub fn new(shape: u32) -> Self {
        assert!(
            (1..=MAX_ERLANG_SHAPE).contains(&shape),
            "Erlang shape {shape} outside 1..={MAX_ERLANG_SHAPE}"
        );
        Self {
            shape,
            ln_factorial: (1..shape).map(|j| f64::from(j).ln()).sum(),
            binades: (LOW..HIGH).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The shape ℓ.
    pub fn shape(&self) -> u32 {
        self.shape
    }

    /// The Erlang(ℓ) time of the standard exponential `e` ≥ 0, by the table
    /// where e lies in it.
    #[inline]
    pub fn at(&self, e: f64) -> f64 {
        if self.shape == 1 {
            return e;
        }
        let bits = e.to_bits();
        let binade = ((bits >> 52) as i32) - 1023;
        if !(LOW..HIGH).contains(&binade) {
            // Negative e, zero, subnormals and NaN have binades below LOW.
            return self.root(e);
        }
        let mantissa = bits & ((1 << 52) - 1);
        let cell = (mantissa >> FRACTION_BITS) as usize;
        let t = (mantissa & ((1 << FRACTION_BITS) - 1)) as f64 * (1.0 / (1u64 << FRACTION_BITS) as f64);
        let c = &self.binade(binade)[cell];
        ((((c[5] * t + c[4]) * t + c[3]) * t + c[2]) * t + c[1]) * t + c[0]
    }

    /// The cells of `binade`, built on first use.
    fn binade(&self, binade: i32) -> &[[f64; 6]; CELLS] {
        self.binades[(binade - LOW) as usize].get_or_init(|| {
            let base = 2f64.powi(binade);
            let width = base / CELLS as f64;
            // Knots e_i = base·(1 + i/CELLS), each root started from the
            // last: the value and its first two derivatives in e, scaled to
            // the cell (x' = 1/λ, x'' = −λ'/λ³ for the hazard λ = H').
            let l = f64::from(self.shape);
            let mut knots = [(0.0, 0.0, 0.0); CELLS + 1];
            let mut x = self.start(base);
            for (i, knot) in knots.iter_mut().enumerate() {
                let e = base + i as f64 * width;
                x = self.newton(e, x);
                let (_, hazard) = self.hazard(x);
                // λ' = λ·(f'/f + λ), f'/f = (ℓ−1)/x − 1.
                let curvature = -((l - 1.0) / x - 1.0 + hazard) / (hazard * hazard);
                *knot = (x, width / hazard, width * width * curvature);
            }
            let mut cells = Box::new([[0.0; 6]; CELLS]);
            for (c, w) in cells.iter_mut().zip(knots.windows(2)) {
                let ((x0, m0, a0), (x1, m1, a1)) = (w[0], w[1]);
                let d = x1 - x0;
                *c = [
                    x0,
                    m0,
                    a0 / 2.0,
                    10.0 * d - 6.0 * m0 - 4.0 * m1 - (3.0 * a0 - a1) / 2.0,
                    -15.0 * d + 8.0 * m0 + 7.0 * m1 + (3.0 * a0 - 2.0 * a1) / 2.0,
                    6.0 * d - 3.0 * m0 - 3.0 * m1 - (a0 - a1) / 2.0,
                ];
            }
            cells
        })
    }

    /// The root of H(x) = e by Newton's method, to full precision.
    pub fn root(&self, e: f64) -> f64 {
        if self.shape == 1 || e <= 0.0 || e.is_nan() {
            return e.max(0.0);
        }
        self.newton(e, self.start(e))
    }

    /// Newton's method for H(x) = e from `x`.
    fn newton(&self, e: f64, mut x: f64) -> f64 {
        for _ in 0..200 {
            let (h, slope) = self.hazard(x);
            let step = (h - e) / slope;
            let next = x - step;
            // Quadratic convergence: once a step is below 1e-9 of x, the
            // error after it is far below one ulp.
            if step.abs() <= 1e-9 * x || !next.is_finite() {
                return next;
            }
            x = next;
        }
        x
    }

    /// A start for Newton's method: Wilson–Hilferty, or the left tail's
    /// x ≈ (e·ℓ!)^(1/ℓ) where the cube root's base is small.
    fn start(&self, e: f64) -> f64 {
        let l = f64::from(self.shape);
        let z = super::normal_of_exponential(e);
        let base = 1.0 - 1.0 / (9.0 * l) + z / (3.0 * l.sqrt());
        if base > 0.25 {
            l * base.powi(3)
        } else {
            ((e.ln() + self.ln_factorial + l.ln()) / l).exp()
        }
    }

    /// H(x) = −ln Q(ℓ, x) and H'(x), for x > 0.
    fn hazard(&self, x: f64) -> (f64, f64) {
        let l = f64::from(self.shape);
        // ln f(x), the density's logarithm.
        let ln_density = (l - 1.0) * x.ln() - x - self.ln_factorial;
        if x < l {
            let (mut term, mut sum, mut i) = (1.0, 1.0, 1.0);
            loop {
                term *= x / (l + i);
                let next = sum + term;
                if next == sum {
                    break;
                }
                sum = next;
                i += 1.0;
            }
            let density = ln_density.exp();
            let p = density * (x / l) * sum;
            let q = 1.0 - p;
            (-(-p).ln_1p(), density / q)
        } else {
            let (mut term, mut sum) = (1.0, 1.0);
            for j in (1..self.shape).rev() {
                term *= f64::from(j) / x;
                let next = sum + term;
                if next == sum {
                    break;
                }
                sum = next;
            }
            (-ln_density - sum.ln(), 1.0 / sum)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::function::gamma::{gamma_lr, gamma_ur};

    /// The root solves Q(ℓ, x) = e^(−e), checked through statrs's
    /// regularized upper incomplete gamma: the error in x that −ln Q(ℓ, root)
    /// − e implies, (H − e)/H', is under 1e-12 of x wherever Q is not too
    /// small for statrs (e ≤ 500).
    #[test]
    fn the_root_inverts_the_survival_function() {
        for shape in [2u32, 3, 5, 10, 26, 51, 100, 400, 1024] {
            let q = ErlangQuantile::new(shape);
            for &e in &[
                1e-9, 1e-4, 0.01, 0.1, 0.5, 0.693, 1.0, 2.0, 5.0, 10.0, 40.0, 100.0, 500.0,
            ] {
                let x = q.root(e);
                // Each side where statrs keeps its digits.
                let l = f64::from(shape);
                let h = if x < l {
                    -(-gamma_lr(l, x)).ln_1p()
                } else {
                    -gamma_ur(l, x).ln()
                };
                let (_, hazard) = q.hazard(x);
                assert!(
                    ((h - e) / hazard).abs() <= 1e-12 * x,
                    "shape {shape} e {e}: x {x}, H {h}"
                );
            }
        }
    }

    /// The table agrees with the root to 1e-12 relative everywhere in it:
    /// 40 points per cell edge to edge in three binades, and a spread of
    /// points over every binade.
    #[test]
    fn the_table_agrees_with_the_root() {
        for shape in [2u32, 3, 7, 26, 51, 200, 1024] {
            let q = ErlangQuantile::new(shape);
            let mut worst: f64 = 0.0;
            let mut check = |e: f64| {
                let (a, b) = (q.at(e), q.root(e));
                worst = worst.max((a - b).abs() / b);
            };
            for binade in [LOW, 0, HIGH - 1] {
                let base = 2f64.powi(binade);
                for i in 0..CELLS * 40 {
                    check(base * (1.0 + i as f64 / (CELLS * 40) as f64));
                }
            }
            let mut e = 2f64.powi(LOW);
            while e < 2f64.powi(HIGH) {
                check(e);
                e *= 1.0 + 1.0 / 997.0;
            }
            eprintln!("shape {shape}: worst {worst:e}");
            assert!(worst < 1e-12, "shape {shape}: worst relative error {worst:e}");
        }
    }

    /// One unit is the exponential itself, bit for bit; outside the table
    /// (tiny and huge e) the root answers.
    #[test]
    fn edges_of_the_table() {
        let one = ErlangQuantile::new(1);
        for e in [0.0, 1e-300, 0.3, 1.0, 700.0] {
            assert_eq!(one.at(e).to_bits(), e.to_bits());
        }
        let q = ErlangQuantile::new(4);
        for e in [1e-12, 2f64.powi(LOW) * 0.999, 2f64.powi(HIGH), 300.0] {
            assert_eq!(q.at(e), q.root(e));
        }
        assert_eq!(q.at(0.0), 0.0);
        // The left tail: Q ≈ 1 − x^ℓ/ℓ!, so x ≈ (e·ℓ!)^(1/ℓ).
        let x = q.at(1e-12);
        assert!((x / (24e-12f64).powf(0.25) - 1.0).abs() < 1e-3, "{x}");
    }
}
