//! Quantiles of laws given by their cumulative hazard, as functions of a
//! standard exponential, for drawing order statistics of such laws from
//! exponential ones: a law with survival S and cumulative hazard
//! H = −ln S maps to a standard exponential, H(X) ~ Exp(1), so the law's
//! value at a standard exponential e is the root of H(x) = e, increasing in
//! e, and the k-th order statistic of n such workers is that of E_(k).
//!
//! Two laws, each with a hazard that increases, so that H is convex and
//! Newton's method converges from any start (from the left, the first step
//! lands right of the root; from the right, the iterates decrease to it):
//!
//! - **Erlang**, Gamma(ℓ, 1) for whole ℓ: under the `additive` load model a
//!   worker of load ℓ with exponential units. Q(ℓ, x) = e^(−x) Σ_{j<ℓ}
//!   x^j/j! is evaluated by the two series of the regularized incomplete
//!   gamma function (Abramowitz & Stegun 6.5.29 and 6.5.13; Press et al.,
//!   Numerical Recipes §6.2), each on the side of x = ℓ where it converges
//!   fastest: x < ℓ: P = f·(x/ℓ)·Σ_{i≥0} x^i/((ℓ+1)⋯(ℓ+i)), H = −ln(1 − P);
//!   x ≥ ℓ: Q = f·R, R = Σ_{i<ℓ} (ℓ−1)⋯(ℓ−i)/x^i, H = −ln f − ln R, with
//!   f(x) = e^(−x) x^(ℓ−1)/(ℓ−1)! the density and λ = H' = f/Q. Both sums
//!   stop once a term no longer changes the total, after O(√ℓ) terms near
//!   the median. Newton starts from Wilson & Hilferty's cube root (1931), or
//!   the left tail's x ≈ (e·ℓ!)^(1/ℓ) where that goes negative.
//! - **Hypoexponential**, the sum of two independent exponentials of rates
//!   1 and r ≥ 1: a worker's exponential time plus its message's
//!   exponential transfer time on a dedicated link. With d = r − 1 and
//!   g(x) = (1 − e^(−dx))/d (g = x at d = 0), S(x) = e^(−x)(1 + g(x)), so
//!   H = x − ln(1 + g), λ = r·g/(1 + g) and λ' = r·e^(−dx)/(1 + g)², all
//!   without cancellation (the rates' symmetric form (r e^(−x) −
//!   e^(−rx))/(r − 1) loses every digit as r → 1).
//!
//! Newton's method costs a few series or exponentials per value. The
//! sampler calls [`HazardQuantile::at`] instead: piecewise quintic Hermite
//! interpolation (the value and its first two derivatives in e at the
//! knots: x' = 1/λ, x'' = −λ'/λ³) on 32 cells per binade of e, from 2⁻⁸ to
//! 2⁷, each binade built on first use. The cell and the position within it
//! come from the bits of e, so a value costs one table read and a
//! polynomial of degree 5. The interpolation error is h⁶/46080·|x⁽⁶⁾| for a
//! cell of width h ≤ e/32: near 1e-13 relative where x bends most (x ∝ √e
//! in the left tail), and the tests check it against the Newton root;
//! outside the table, the root itself.

use std::sync::OnceLock;

/// The largest Erlang shape (units per worker) the table serves: above it,
/// the cancellation in −ln f (terms of size ℓ·ln ℓ) costs more digits than
/// the interpolation keeps.
pub const MAX_ERLANG_SHAPE: u32 = 1024;

/// Binades of e the table covers: [2^LOW, 2^HIGH).
const LOW: i32 = -8;
const HIGH: i32 = 7;
/// Cells per binade: 2^CELL_BITS.
const CELL_BITS: u32 = 5;
const CELLS: usize = 1 << CELL_BITS;
/// Mantissa bits below the cell index: the position within a cell.
const FRACTION_BITS: u32 = 52 - CELL_BITS;

/// A law with an increasing hazard, by its cumulative hazard.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Law {
    /// The standard exponential itself: H(x) = x.
    Exponential,
    /// Gamma(ℓ, 1), with ln (ℓ−1)!.
    Erlang { shape: u32, ln_factorial: f64 },
    /// Exp(1) + Exp(r), r ≥ 1.
    Hypoexponential { ratio: f64 },
}

/// A law as a function of a standard exponential: `at(e)` is the x with
/// H(x) = e (see the module notes).
#[derive(Debug)]
pub struct HazardQuantile {
    law: Law,
    /// Per binade, per cell, the quintic's coefficients in the position
    /// t ∈ [0, 1) within the cell, constant term first.
    binades: Vec<OnceLock<Box<[[f64; 6]; CELLS]>>>,
}

impl HazardQuantile {
    fn with(law: Law) -> Self {
        Self {
            law,
            binades: (LOW..HIGH).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Gamma(`shape`, 1), for 1 ≤ shape ≤ [`MAX_ERLANG_SHAPE`] (shape 1 is
    /// the exponential, returned bit for bit).
    ///
    /// # Panics
    /// If `shape` is outside that range.
    pub fn erlang(shape: u32) -> Self {
        assert!(
            (1..=MAX_ERLANG_SHAPE).contains(&shape),
            "Erlang shape {shape} outside 1..={MAX_ERLANG_SHAPE}"
        );
        Self::with(match shape {
            1 => Law::Exponential,
            _ => Law::Erlang {
                shape,
                ln_factorial: (1..shape).map(|j| f64::from(j).ln()).sum(),
            },
        })
    }

    /// Exp(1) + Exp(`ratio`), the faster rate over the slower.
    ///
    /// # Panics
    /// If `ratio` is not at least 1 and finite.
    pub fn hypoexponential(ratio: f64) -> Self {
        assert!(
            (1.0..f64::INFINITY).contains(&ratio),
            "rate ratio {ratio} not in [1, ∞)"
        );
        Self::with(Law::Hypoexponential { ratio })
    }

    /// Whether `self` is the law `other` builds: the same law and parameter.
    pub fn is(&self, other: &Self) -> bool {
        self.law == other.law
    }

    /// The law's value at the standard exponential `e` ≥ 0, by the table
    /// where e lies in it.
    #[inline]
    pub fn at(&self, e: f64) -> f64 {
        if self.law == Law::Exponential {
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
            // the cell.
            let mut knots = [(0.0, 0.0, 0.0); CELLS + 1];
            let mut x = self.start(base);
            for (i, knot) in knots.iter_mut().enumerate() {
                let e = base + i as f64 * width;
                x = self.newton(e, x);
                let (_, rate, slope) = self.hazard(x);
                let curvature = -slope / (rate * rate * rate);
                *knot = (x, width / rate, width * width * curvature);
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
        if self.law == Law::Exponential || e <= 0.0 || e.is_nan() {
            return e.max(0.0);
        }
        self.newton(e, self.start(e))
    }

    /// Newton's method for H(x) = e from `x`.
    fn newton(&self, e: f64, mut x: f64) -> f64 {
        for _ in 0..200 {
            let (h, rate, _) = self.hazard(x);
            let step = (h - e) / rate;
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

    /// A start for Newton's method.
    fn start(&self, e: f64) -> f64 {
        match self.law {
            Law::Exponential => e,
            Law::Erlang { shape, ln_factorial } => {
                // Wilson–Hilferty, or the left tail's x ≈ (e·ℓ!)^(1/ℓ)
                // where the cube root's base is small.
                let l = f64::from(shape);
                let z = super::normal_of_exponential(e);
                let base = 1.0 - 1.0 / (9.0 * l) + z / (3.0 * l.sqrt());
                if base > 0.25 {
                    l * base.powi(3)
                } else {
                    ((e.ln() + ln_factorial + l.ln()) / l).exp()
                }
            }
            Law::Hypoexponential { ratio } => {
                // x = e + ln(1 + g(x)) once from x = e: below the root (g
                // increases), and within ln(1 + 1/d) of it.
                let d = ratio - 1.0;
                e + growth(d, e).ln_1p()
            }
        }
    }

    /// H(x) = −ln S(x), the hazard λ = H'(x) and its slope λ'(x), for x > 0.
    fn hazard(&self, x: f64) -> (f64, f64, f64) {
        match self.law {
            Law::Exponential => (x, 1.0, 0.0),
            Law::Erlang { shape, ln_factorial } => erlang_hazard(shape, ln_factorial, x),
            Law::Hypoexponential { ratio } => {
                let d = ratio - 1.0;
                let g = growth(d, x);
                let one_g = 1.0 + g;
                let h = x - g.ln_1p();
                (h, ratio * g / one_g, ratio * (-d * x).exp() / (one_g * one_g))
            }
        }
    }
}

/// g(x) = (1 − e^(−dx))/d, and x at d = 0.
fn growth(d: f64, x: f64) -> f64 {
    if d == 0.0 { x } else { -(-d * x).exp_m1() / d }
}

/// The Erlang law's H, λ and λ' (see the module notes).
fn erlang_hazard(shape: u32, ln_factorial: f64, x: f64) -> (f64, f64, f64) {
    let l = f64::from(shape);
    // ln f(x), the density's logarithm.
    let ln_density = (l - 1.0) * x.ln() - x - ln_factorial;
    let (h, rate) = if x < l {
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
        (-(-p).ln_1p(), density / (1.0 - p))
    } else {
        let (mut term, mut sum) = (1.0, 1.0);
        for j in (1..shape).rev() {
            term *= f64::from(j) / x;
            let next = sum + term;
            if next == sum {
                break;
            }
            sum = next;
        }
        (-ln_density - sum.ln(), 1.0 / sum)
    };
    // λ' = λ·(f'/f + λ), f'/f = (ℓ−1)/x − 1.
    (h, rate, rate * ((l - 1.0) / x - 1.0 + rate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use statrs::function::gamma::{gamma_lr, gamma_ur};

    /// The laws of the tests: Erlang shapes and hypoexponential ratios,
    /// each with its survival function written independently (statrs's
    /// regularized incomplete gamma on the side where it keeps its digits;
    /// the rates' symmetric form), as −ln S.
    /// A law and its cumulative hazard written independently.
    type Reference = (HazardQuantile, Box<dyn Fn(f64) -> f64>);

    fn laws() -> Vec<Reference> {
        let mut laws: Vec<Reference> = Vec::new();
        for shape in [2u32, 3, 5, 10, 26, 51, 100, 400, 1024] {
            let l = f64::from(shape);
            let h = move |x: f64| {
                if x < l {
                    -(-gamma_lr(l, x)).ln_1p()
                } else {
                    -gamma_ur(l, x).ln()
                }
            };
            laws.push((HazardQuantile::erlang(shape), Box::new(h)));
        }
        laws.push((HazardQuantile::hypoexponential(1.0), Box::new(|x: f64| x - x.ln_1p())));
        for ratio in [1.5, 2.0, 10.0, 1000.0] {
            let h = move |x: f64| -((ratio * (-x).exp() - (-ratio * x).exp()) / (ratio - 1.0)).ln();
            laws.push((HazardQuantile::hypoexponential(ratio), Box::new(h)));
        }
        laws
    }

    /// The root solves H(x) = e: the error in x that the independent
    /// H(root) − e implies, (H − e)/λ, is under 1e-12 of x, for e from 1e-9
    /// to 500 (statrs's Q underflows beyond); from 1e-4 for the
    /// hypoexponential, whose symmetric form loses the digits of a smaller
    /// H to the cancellation in 1 − S.
    #[test]
    fn the_root_inverts_the_survival_function() {
        for (q, h) in laws() {
            let lowest = if matches!(q.law, Law::Hypoexponential { .. }) {
                1e-4
            } else {
                1e-9
            };
            for &e in &[
                1e-9, 1e-4, 0.01, 0.1, 0.5, 0.693, 1.0, 2.0, 5.0, 10.0, 40.0, 100.0, 500.0,
            ] {
                if e < lowest {
                    continue;
                }
                let x = q.root(e);
                let (_, rate, _) = q.hazard(x);
                let implied = (h(x) - e) / rate;
                assert!(implied.abs() <= 1e-12 * x, "{:?} e {e}: x {x}, H {}", q.law, h(x));
            }
        }
    }

    /// The hazard's slope is the derivative of the hazard: against a
    /// central difference of step 1e-7·x, to 1e-6 relative.
    #[test]
    fn the_hazard_slope_is_its_derivative() {
        for (q, _) in laws() {
            for x in [0.05, 0.7, 3.0, 30.0, 300.0] {
                let (_, rate, slope) = q.hazard(x);
                let step = 1e-7 * x;
                let numeric = (q.hazard(x + step).1 - q.hazard(x - step).1) / (2.0 * step);
                let scale = slope.abs().max(rate / x).max(1e-300);
                assert!(
                    (slope - numeric).abs() <= 1e-6 * scale,
                    "{:?} x {x}: {slope} vs {numeric}",
                    q.law
                );
            }
        }
    }

    /// The table agrees with the root to 1e-12 relative everywhere in it:
    /// 40 points per cell edge to edge in three binades, and a spread of
    /// points over every binade.
    #[test]
    fn the_table_agrees_with_the_root() {
        for (q, _) in laws() {
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
            assert!(worst < 1e-12, "{:?}: worst relative error {worst:e}", q.law);
        }
    }

    /// One unit is the exponential itself, bit for bit; outside the table
    /// (tiny and huge e) the root answers.
    #[test]
    fn edges_of_the_table() {
        let one = HazardQuantile::erlang(1);
        for e in [0.0, 1e-300, 0.3, 1.0, 700.0] {
            assert_eq!(one.at(e).to_bits(), e.to_bits());
        }
        let q = HazardQuantile::erlang(4);
        for e in [1e-12, 2f64.powi(LOW) * 0.999, 2f64.powi(HIGH), 300.0] {
            assert_eq!(q.at(e), q.root(e));
        }
        assert_eq!(q.at(0.0), 0.0);
        // The left tail: Q ≈ 1 − x^ℓ/ℓ!, so x ≈ (e·ℓ!)^(1/ℓ).
        let x = q.at(1e-12);
        assert!((x / (24e-12f64).powf(0.25) - 1.0).abs() < 1e-3, "{x}");
        // Exp(1) + Exp(r): S ≈ 1 − r·x²/2 near 0.
        let x = HazardQuantile::hypoexponential(3.0).at(1e-12);
        assert!((x / (2e-12f64 / 3.0).sqrt() - 1.0).abs() < 1e-3, "{x}");
    }
}
