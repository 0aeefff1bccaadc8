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
//! And one law given by its quantile in closed form, tabulated to spare the
//! per-value cost of the closed form:
//!
//! - **Log-normal** of σ (and μ = 0: a scale multiplies it):
//!   x(e) = e^(σz) with z = Φ⁻¹(1 − e^(−e)) (AS 241 in e, see
//!   [`super::normal_of_exponential`]). With z' = e^(−e)/φ(z) (from
//!   1 − Φ(z) = e^(−e)), computed as e^(−e + z²/2 + ln √(2π)), and
//!   z'' = z'(z·z' − 1): x' = σz'x and x'' = σx(z'' + σz'²). Its hazard is
//!   not monotone, but no root is taken.
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

/// The largest log-normal σ the table serves. The interpolation error grows
/// as (σ·h·z')⁶ in a cell of width h ∝ e: at σ = 2 the binades from e = 4
/// up are too wide and left to the closed form (see [`TOLERANCE`]), and
/// with a larger σ the top order statistics of any cluster would be.
pub const MAX_TABLE_SIGMA: f64 = 2.0;

/// Binades of e the table covers: [2^LOW, 2^HIGH).
const LOW: i32 = -8;
const HIGH: i32 = 7;
/// Cells per binade: 2^CELL_BITS.
const CELL_BITS: u32 = 5;
const CELLS: usize = 1 << CELL_BITS;
/// Mantissa bits below the cell index: the position within a cell.
const FRACTION_BITS: u32 = 52 - CELL_BITS;
/// The largest relative error of a binade's quintics at the middles of its
/// cells: a binade beyond it is left to the root.
const TOLERANCE: f64 = 5e-13;

/// A binade's quintics, cell by cell, constant term first.
type Cells = [[f64; 6]; CELLS];

/// A law with an increasing hazard, by its cumulative hazard.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Law {
    /// The standard exponential itself: H(x) = x.
    Exponential,
    /// Gamma(ℓ, 1), with ln (ℓ−1)!.
    Erlang { shape: u32, ln_factorial: f64 },
    /// Exp(1) + Exp(r), r ≥ 1.
    Hypoexponential { ratio: f64 },
    /// e^(σ·Φ⁻¹(1 − e^(−e))), in closed form.
    LogNormal { sigma: f64 },
}

/// A law as a function of a standard exponential: `at(e)` is the x with
/// H(x) = e (see the module notes).
#[derive(Debug)]
pub struct HazardQuantile {
    law: Law,
    /// Per binade, per cell, the quintic's coefficients in the position
    /// t ∈ [0, 1) within the cell, constant term first; `None` for a
    /// binade whose cells are too wide for [`TOLERANCE`], where the root
    /// answers.
    binades: Vec<OnceLock<Option<Box<Cells>>>>,
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

    /// The log-normal law of μ = 0 and `sigma`, for 0 < sigma ≤
    /// [`MAX_TABLE_SIGMA`] (above it the table's cells are too wide for
    /// its accuracy).
    ///
    /// # Panics
    /// If `sigma` is outside that range.
    pub fn log_normal(sigma: f64) -> Self {
        assert!(
            sigma > 0.0 && sigma <= MAX_TABLE_SIGMA,
            "log-normal sigma {sigma} outside (0, {MAX_TABLE_SIGMA}]"
        );
        Self::with(Law::LogNormal { sigma })
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
        let Some(cells) = self.binade(binade) else {
            return self.root(e);
        };
        let c = &cells[cell];
        ((((c[5] * t + c[4]) * t + c[3]) * t + c[2]) * t + c[1]) * t + c[0]
    }

    /// The cells of `binade`, built on first use, if each cell's quintic
    /// is within [`TOLERANCE`] of the root at its middle, where the error of
    /// the interpolation, ∝ t³(1 − t)³, is largest.
    fn binade(&self, binade: i32) -> Option<&Cells> {
        let cells = self.binades[(binade - LOW) as usize].get_or_init(|| {
            let base = 2f64.powi(binade);
            let width = base / CELLS as f64;
            // Knots e_i = base·(1 + i/CELLS), each root started from the
            // last: the value and its first two derivatives in e, scaled to
            // the cell.
            let mut knots = [(0.0, 0.0, 0.0); CELLS + 1];
            let mut x = self.start(base);
            for (i, knot) in knots.iter_mut().enumerate() {
                let e = base + i as f64 * width;
                let (value, slope, curvature) = self.knot(e, x);
                x = value;
                *knot = (x, width * slope, width * width * curvature);
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
            let close = cells.iter().enumerate().all(|(i, c)| {
                let middle = self.root(base + (i as f64 + 0.5) * width);
                let t = 0.5;
                let x = ((((c[5] * t + c[4]) * t + c[3]) * t + c[2]) * t + c[1]) * t + c[0];
                (x - middle).abs() <= TOLERANCE * middle
            });
            close.then_some(cells)
        });
        cells.as_deref()
    }

    /// Whether the table serves `e` (rather than the root).
    pub fn tabulates(&self, e: f64) -> bool {
        let binade = ((e.to_bits() >> 52) as i32) - 1023;
        self.law != Law::Exponential && (LOW..HIGH).contains(&binade) && self.binade(binade).is_some()
    }

    /// The law's value at e, its first and its second derivative in e:
    /// by Newton's method from `guess` (x' = 1/λ, x'' = −λ'/λ³), or in
    /// closed form.
    fn knot(&self, e: f64, guess: f64) -> (f64, f64, f64) {
        if let Law::LogNormal { sigma } = self.law {
            let z = super::normal_of_exponential(e);
            let x = (sigma * z).exp();
            // ln √(2π)
            const LN_SQRT_TAU: f64 = 0.918_938_533_204_672_8;
            let z1 = (-e + 0.5 * z * z + LN_SQRT_TAU).exp();
            let z2 = z1 * (z * z1 - 1.0);
            return (x, sigma * z1 * x, sigma * x * (z2 + sigma * z1 * z1));
        }
        let x = self.newton(e, guess);
        let (_, rate, slope) = self.hazard(x);
        (x, 1.0 / rate, -slope / (rate * rate * rate))
    }

    /// The root of H(x) = e by Newton's method, to full precision (the
    /// closed form where the law has one).
    pub fn root(&self, e: f64) -> f64 {
        if let Law::LogNormal { sigma } = self.law {
            return (sigma * super::normal_of_exponential(e)).exp();
        }
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
            // Not used: the closed form takes no root.
            Law::LogNormal { .. } => self.root(e),
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
            Law::LogNormal { .. } => unreachable!("the log-normal law is tabulated from its closed form"),
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
        let log_normals = log_normal_sigmas().map(HazardQuantile::log_normal);
        for q in laws().into_iter().map(|(q, _)| q).chain(log_normals) {
            let worst = worst_table_error(&q);
            assert!(worst < 1e-12, "{:?}: worst relative error {worst:e}", q.law);
        }
    }

    /// The table serves every binade of the Erlang and hypoexponential
    /// laws, and of the log-normal at σ = 1 those below e = 16 (the largest
    /// of a million workers is about 13.8 + a Gumbel variate); at σ = 2,
    /// those below e = 4.
    #[test]
    fn where_the_table_serves() {
        let binades = |q: &HazardQuantile| (LOW..HIGH).filter(|&b| q.tabulates(2f64.powi(b) * 1.5)).count();
        for (q, _) in laws() {
            assert_eq!(binades(&q), (HIGH - LOW) as usize, "{:?}", q.law);
        }
        assert_eq!(binades(&HazardQuantile::log_normal(1.0)), (4 - LOW) as usize);
        assert_eq!(binades(&HazardQuantile::log_normal(2.0)), (2 - LOW) as usize);
        assert!(!HazardQuantile::erlang(1).tabulates(1.0));
        assert!(!HazardQuantile::erlang(3).tabulates(2f64.powi(HIGH)));
    }

    /// The log-normal σ of the tests, up to the table's largest.
    fn log_normal_sigmas() -> impl Iterator<Item = f64> {
        [0.05, 0.3, 1.0, 1.5, MAX_TABLE_SIGMA].into_iter()
    }

    /// The largest relative difference of the table from the root (or the
    /// closed form): 40 points per cell edge to edge in three binades, and
    /// a spread of points over every binade.
    fn worst_table_error(q: &HazardQuantile) -> f64 {
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
        worst
    }

    /// The log-normal closed form is the law's quantile: against
    /// e^(σz) with z from statrs's erfc⁻¹ fed the tail probability that
    /// keeps its digits (z = √2·erfc⁻¹(2t) for t = e^(−e) ≤ 1/2, else
    /// −√2·erfc⁻¹(2(1 − t))), to 1e-12 relative; and its knots' derivatives
    /// against central differences of it (step 1e-5·e; x' to 1e-6 relative,
    /// x'' to 1e-4 of the larger of x'' and x'/e).
    #[test]
    fn the_log_normal_closed_form_and_its_derivatives() {
        use statrs::function::erf::erfc_inv;
        use std::f64::consts::SQRT_2;
        for sigma in log_normal_sigmas() {
            let q = HazardQuantile::log_normal(sigma);
            for e in [0.01f64, 0.1, 0.5, 0.693, 1.0, 2.0, 5.0, 10.0, 20.0] {
                let t = (-e).exp();
                let z = if t <= 0.5 {
                    SQRT_2 * erfc_inv(2.0 * t)
                } else {
                    -SQRT_2 * erfc_inv(-2.0 * (-e).exp_m1())
                };
                let expected = (sigma * z).exp();
                let x = q.root(e);
                assert!(
                    (x / expected - 1.0).abs() < 1e-12,
                    "sigma {sigma} e {e}: {x} vs {expected}"
                );
                let (value, d1, d2) = q.knot(e, 0.0);
                assert_eq!(value, x);
                let h = 1e-5 * e;
                let (up, down) = (q.root(e + h), q.root(e - h));
                let numeric1 = (up - down) / (2.0 * h);
                let numeric2 = (up - 2.0 * x + down) / (h * h);
                assert!(
                    (d1 - numeric1).abs() <= 1e-6 * d1.abs(),
                    "sigma {sigma} e {e}: x' {d1} vs {numeric1}"
                );
                let scale = d2.abs().max(d1.abs() / e);
                assert!(
                    (d2 - numeric2).abs() <= 1e-4 * scale,
                    "sigma {sigma} e {e}: x'' {d2} vs {numeric2}"
                );
            }
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
