//! Quantiles of laws given by their cumulative hazard, as functions of a
//! standard exponential, for drawing order statistics of such laws from
//! exponential ones: a law with survival S and cumulative hazard
//! H = −ln S maps to a standard exponential, H(X) ~ Exp(1), so the law's
//! value at a standard exponential e is the root of H(x) = e, increasing in
//! e, and the k-th order statistic of n such workers is that of E_(k).
//!
//! Three laws, each with a hazard that increases, so that H is convex and
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
//! - **An order statistic of exponentials**, E_(k) of n i.i.d. standard
//!   exponentials: the lowest of the top block the sampler draws in every
//!   trial (see `engine::trial`). With p = 1 − e^(−x) and q = e^(−x), S is
//!   the binomial tail P(Bin(n, p) ≤ k − 1) (David & Nagaraja 2003, §2.1),
//!   a sum of positive terms each side of the binomial's mean: where np + 1 ≤ k,
//!   F = 1 − S = Σ_{j≥k} b_j summed up from b_k and H = −ln(1 − F); else
//!   S = Σ_{j<k} b_j summed down from b_(k−1) and H = −ln b_(k−1) − ln R,
//!   with b_j = C(n, j) p^j q^(n−j) and the ratios of neighbours
//!   b_(j+1)/b_j = (n − j)p/((j + 1)q). The density is
//!   f = b_(k−1)·(n − k + 1) = b_k·kq/p, and f'/f = (k − 1)q/p − (n − k + 1).
//!   Order statistics of an increasing-hazard law have increasing hazards
//!   (Barlow & Proschan 1975), so H is convex. Newton starts from the
//!   larger of the left tail's x with C(n, k)p^k = 1 − e^(−e) (at or left
//!   of the root, as F ≤ C(n, k)p^k) and a normal approximation. Its table
//!   reaches down to e = 2⁻⁴⁰ (see [`HazardQuantile::order_statistic`]).
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
//! - **Power** e^p (p > 0): the Weibull law of shape k is λ·E^(1/k).
//!   x' = p·e^(p−1), x'' = p(p − 1)·e^(p−2). The interpolation's relative
//!   error is the same in every binade, about 2e-14·|p(p−1)⋯(p−5)| (zero
//!   for p = 1…5, a polynomial the quintic holds): within the tolerance for
//!   shapes k from about 1/5 up, left to `powf` below.
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
/// up are too wide and left to the closed form (the table checks its cells), and
/// with a larger σ the top order statistics of any cluster would be.
pub const MAX_TABLE_SIGMA: f64 = 2.0;

/// Binades of e the table covers: [2^LOW, 2^HIGH) (from 2^DEEP_LOW for an
/// order statistic).
const LOW: i32 = -8;
const DEEP_LOW: i32 = -40;
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
    /// e^p, in closed form.
    Power { exponent: f64 },
    /// E_(k) of n standard exponentials, 2 ≤ k ≤ n, with ln C(n, k) and
    /// ln C(n, k − 1), and the mean and standard deviation (Rényi's sums,
    /// approximated) for Newton's start.
    OrderStatistic {
        k: u64,
        n: u64,
        ln_choose: f64,
        ln_choose_below: f64,
        mean: f64,
        sd: f64,
    },
}

/// A law as a function of a standard exponential: `at(e)` is the x with
/// H(x) = e (see the module notes).
#[derive(Debug)]
pub struct HazardQuantile {
    law: Law,
    /// The lowest binade of e the table covers.
    low: i32,
    /// Per binade, per cell, the quintic's coefficients in the position
    /// t ∈ [0, 1) within the cell, constant term first; `None` for a
    /// binade whose cells are too wide for [`TOLERANCE`], where the root
    /// answers.
    binades: Vec<OnceLock<Option<Box<Cells>>>>,
}

impl HazardQuantile {
    fn with(law: Law) -> Self {
        let low = if matches!(law, Law::OrderStatistic { .. }) {
            DEEP_LOW
        } else {
            LOW
        };
        Self {
            law,
            low,
            binades: (low..HIGH).map(|_| OnceLock::new()).collect(),
        }
    }

    /// E_(`k`) of `n` i.i.d. standard exponentials, for 2 ≤ k ≤ n. The
    /// table reaches down to e = 2⁻⁴⁰, as the sampler reads it once per
    /// trial from an exponential of its own: a root below the usual 2⁻⁸
    /// would cost some microseconds in one trial of 250.
    ///
    /// # Panics
    /// If k is outside that range.
    pub fn order_statistic(k: u64, n: u64) -> Self {
        assert!((2..=n).contains(&k), "order statistic {k} of {n} outside 2..=n");
        // ln C(n, k) over the smaller of k and n − k: Σ ln(1 + (n − m)/i).
        let m = k.min(n - k);
        let ln_choose: f64 = (1..=m).map(|i| ((n - m) as f64 / i as f64).ln_1p()).sum();
        // Rényi: E_(k) = Σ_{i=n−k+1}^{n} Z/i, by the integrals of 1/x and 1/x².
        let (lo, hi) = ((n - k) as f64 + 0.5, n as f64 + 0.5);
        Self::with(Law::OrderStatistic {
            k,
            n,
            ln_choose,
            ln_choose_below: ln_choose + (k as f64 / (n - k + 1) as f64).ln(),
            mean: (hi / lo).ln(),
            sd: (1.0 / lo - 1.0 / hi).sqrt(),
        })
    }

    /// Gamma(`shape`, 1), for 1 ≤ shape ≤ [`MAX_ERLANG_SHAPE`] (shape 1 is
    /// the exponential, returned bit for bit).
    ///
    /// # Panics
    /// If `shape` is outside that range.
    pub(crate) fn erlang(shape: u32) -> Self {
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

    /// e^`exponent`, for a finite exponent > 0: the Weibull law of shape
    /// 1/exponent and scale 1.
    ///
    /// # Panics
    /// If `exponent` is outside that range.
    pub fn power(exponent: f64) -> Self {
        assert!(
            exponent > 0.0 && exponent.is_finite(),
            "power {exponent} not finite and > 0"
        );
        Self::with(Law::Power { exponent })
    }

    /// Whether `self` is the law `other` builds: the same law and parameter.
    pub fn is(&self, other: &Self) -> bool {
        self.law == other.law
    }

    /// The law's value at the standard exponential `e` ≥ 0, by the table
    /// where e lies in it.
    // Always inlined: the samplers' per-slot loops read it once a value.
    #[inline(always)]
    pub fn at(&self, e: f64) -> f64 {
        if self.law == Law::Exponential {
            return e;
        }
        match self.cell_at(e) {
            Some((c, t)) => ((((c[5] * t + c[4]) * t + c[3]) * t + c[2]) * t + c[1]) * t + c[0],
            None => self.root(e),
        }
    }

    /// Four values of four tables, `laws[l].at(e[l])`, the same bits: where
    /// every lane's value comes from its table, the four quintics are
    /// evaluated side by side, lane by lane in [`Self::at`]'s operations
    /// (four short chains in one stream of instructions, where one slot's
    /// chain after another kept few of them in flight).
    #[inline(always)]
    pub(crate) fn at4(laws: [&Self; 4], e: [f64; 4]) -> [f64; 4] {
        let cells = std::array::from_fn::<_, 4, _>(|l| match laws[l].law {
            Law::Exponential => None,
            _ => laws[l].cell_at(e[l]),
        });
        let [Some(a), Some(b), Some(c), Some(d)] = cells else {
            return std::array::from_fn(|l| laws[l].at(e[l]));
        };
        let (c, t) = ([a.0, b.0, c.0, d.0], [a.1, b.1, c.1, d.1]);
        let mut v: [f64; 4] = std::array::from_fn(|l| c[l][5]);
        for k in (0..5).rev() {
            for l in 0..4 {
                v[l] = v[l] * t[l] + c[l][k];
            }
        }
        v
    }

    /// The cell of the table that holds `e`, and e's position t ∈ [0, 1)
    /// in it; `None` where the root answers instead.
    #[inline(always)]
    fn cell_at(&self, e: f64) -> Option<(&[f64; 6], f64)> {
        let bits = e.to_bits();
        let binade = ((bits >> 52) as i32) - 1023;
        if !(self.low..HIGH).contains(&binade) {
            // Negative e, zero, subnormals and NaN have binades below LOW.
            return None;
        }
        let mantissa = bits & ((1 << 52) - 1);
        let cell = (mantissa >> FRACTION_BITS) as usize;
        let t = (mantissa & ((1 << FRACTION_BITS) - 1)) as f64 * (1.0 / (1u64 << FRACTION_BITS) as f64);
        Some((&self.binade(binade)?[cell], t))
    }

    /// The cells of `binade`, built on first use, if each cell's quintic
    /// is within [`TOLERANCE`] of the root at its middle, where the error of
    /// the interpolation, ∝ t³(1 − t)³, is largest.
    #[inline(always)]
    fn binade(&self, binade: i32) -> Option<&Cells> {
        match self.binades[(binade - self.low) as usize].get() {
            Some(cells) => cells.as_deref(),
            None => self.build(binade),
        }
    }

    /// [`Self::binade`]'s first use: its cells built (out of line, so that
    /// the lookup's loops keep their registers).
    #[cold]
    #[inline(never)]
    fn build(&self, binade: i32) -> Option<&Cells> {
        let cells = self.binades[(binade - self.low) as usize].get_or_init(|| {
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
    pub(crate) fn tabulates(&self, e: f64) -> bool {
        let binade = ((e.to_bits() >> 52) as i32) - 1023;
        self.law != Law::Exponential && (self.low..HIGH).contains(&binade) && self.binade(binade).is_some()
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
        if let Law::Power { exponent: p } = self.law {
            return (e.powf(p), p * e.powf(p - 1.0), p * (p - 1.0) * e.powf(p - 2.0));
        }
        let x = self.newton(e, guess);
        let (_, rate, slope) = self.hazard(x);
        (x, 1.0 / rate, -slope / (rate * rate * rate))
    }

    /// The root of H(x) = e by Newton's method, to full precision (the
    /// closed form where the law has one).
    #[inline(never)]
    pub fn root(&self, e: f64) -> f64 {
        match self.law {
            Law::LogNormal { sigma } => return (sigma * super::normal_of_exponential(e)).exp(),
            Law::Power { exponent } => return e.max(0.0).powf(exponent),
            _ => {}
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
            Law::OrderStatistic {
                k, ln_choose, mean, sd, ..
            } => {
                // C(n, k)·p^k = 1 − e^(−e) is at or left of the root (F is
                // at most C(n, k)·p^k, the chance that some k-subset is in).
                let k = k as f64;
                let p = (((-(-e).exp_m1()).ln() - ln_choose) / k).exp().min(1.0);
                let tail = -(-p).ln_1p();
                let body = mean + sd * super::normal_of_exponential(e);
                if tail.is_finite() { tail.max(body) } else { body }
            }
            // Not used: a closed form takes no root.
            Law::LogNormal { .. } | Law::Power { .. } => self.root(e),
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
            Law::OrderStatistic {
                k,
                n,
                ln_choose,
                ln_choose_below,
                ..
            } => order_statistic_hazard(k as f64, n as f64, (ln_choose, ln_choose_below), x),
            Law::LogNormal { .. } | Law::Power { .. } => unreachable!("a closed form is tabulated from itself"),
        }
    }
}

/// E_(k) of n: H, λ and λ' at x > 0, from the binomial tail on the side of
/// its mean np where its terms fall away from the first (see the module
/// notes); `ln_choose` is (ln C(n, k), ln C(n, k − 1)).
fn order_statistic_hazard(k: f64, n: f64, ln_choose: (f64, f64), x: f64) -> (f64, f64, f64) {
    let p = -(-x).exp_m1();
    // ln p as ln(1 − e^(−x)) where p is above ½, which keeps its digits
    // near 1 (the largest of many: (k − 1)·ln p with k of 10⁵).
    let ln_p = if p > 0.5 { (-(-x).exp()).ln_1p() } else { p.ln() };
    let odds = (-x).exp() / p;
    // F where k is above the binomial's median (np + 1 ≤ k: F under about
    // ½, so ln(1 − F) keeps its digits), else S.
    let (h, rate) = if n * p + 1.0 <= k {
        // F = b_k·Σ_{j≥k} b_j/b_k.
        let (mut term, mut sum, mut j) = (1.0, 1.0, k);
        while j < n {
            term *= (n - j) / ((j + 1.0) * odds);
            let next = sum + term;
            if next == sum {
                break;
            }
            sum = next;
            j += 1.0;
        }
        let b_k = (ln_choose.0 + k * ln_p - (n - k) * x).exp();
        let below = b_k * sum;
        (-(-below).ln_1p(), b_k * k * odds / (1.0 - below))
    } else {
        // S = b_(k−1)·Σ_{j<k} b_j/b_(k−1).
        let (mut term, mut sum, mut j) = (1.0, 1.0, k - 1.0);
        while j > 0.0 {
            term *= j * odds / (n - j + 1.0);
            let next = sum + term;
            if next == sum {
                break;
            }
            sum = next;
            j -= 1.0;
        }
        let ln_b = ln_choose.1 + (k - 1.0) * ln_p - (n - k + 1.0) * x;
        (-ln_b - sum.ln(), (n - k + 1.0) / sum)
    };
    // λ' = λ·(f'/f + λ).
    (h, rate, rate * ((k - 1.0) * odds - (n - k + 1.0) + rate))
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
mod tests;
