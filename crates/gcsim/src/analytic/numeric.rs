//! One-dimensional numerics: adaptive Gauss–Kronrod quadrature (the 7/15
//! pair of QUADPACK's `qk15`, Piessens et al. 1983) and Brent's bracketed
//! root finder (Brent 1973, ch. 4).

/// Kronrod nodes on [−1, 1] (non-negative half, centre last).
#[allow(clippy::excessive_precision)] // the published digits, rounded by the compiler
const XGK: [f64; 8] = [
    0.991_455_371_120_812_639_206_854_697_526_329,
    0.949_107_912_342_758_524_526_189_684_047_851,
    0.864_864_423_359_769_072_789_712_788_640_926,
    0.741_531_185_599_394_439_863_864_773_280_788,
    0.586_087_235_467_691_130_294_144_845_693_013,
    0.405_845_151_377_397_166_906_606_412_076_961,
    0.207_784_955_007_898_467_600_689_403_773_245,
    0.0,
];
/// Kronrod weights matching `XGK`.
#[allow(clippy::excessive_precision)] // the published digits, rounded by the compiler
const WGK: [f64; 8] = [
    0.022_935_322_010_529_224_963_732_008_058_970,
    0.063_092_092_629_978_553_290_700_663_189_204,
    0.104_790_010_322_250_183_839_876_322_541_518,
    0.140_653_259_715_525_918_745_189_590_510_238,
    0.169_004_726_639_267_902_826_583_426_598_550,
    0.190_350_578_064_785_409_913_256_402_421_014,
    0.204_432_940_075_298_892_414_161_999_234_649,
    0.209_482_141_084_727_828_012_999_174_891_714,
];
/// Gauss weights for the nodes `XGK[1]`, `XGK[3]`, `XGK[5]`, `XGK[7]`.
#[allow(clippy::excessive_precision)] // the published digits, rounded by the compiler
const WG: [f64; 4] = [
    0.129_484_966_168_869_693_270_611_432_679_082,
    0.279_705_391_489_276_667_901_467_771_423_780,
    0.381_830_050_505_118_944_950_369_775_488_975,
    0.417_959_183_673_469_387_755_102_040_816_327,
];

/// The 15-point Kronrod estimate on [a, b] and its distance to the 7-point
/// Gauss estimate.
fn gk15(f: &mut impl FnMut(f64) -> f64, a: f64, b: f64) -> (f64, f64) {
    let c = 0.5 * (a + b);
    let h = 0.5 * (b - a);
    let fc = f(c);
    let mut kronrod = WGK[7] * fc;
    let mut gauss = WG[3] * fc;
    for i in 0..7 {
        let dx = h * XGK[i];
        let pair = f(c - dx) + f(c + dx);
        kronrod += WGK[i] * pair;
        if i % 2 == 1 {
            gauss += WG[i / 2] * pair;
        }
    }
    (kronrod * h, ((kronrod - gauss) * h).abs())
}

/// Most subintervals [`integrate`] keeps before it returns its best estimate.
const MAX_INTERVALS: usize = 20_000;

/// `∫_a^b f` to an absolute error of about `tol`, by globally adaptive
/// bisection (QUADPACK `qag`): the interval with the largest Gauss–Kronrod
/// error estimate is split until the estimates sum to at most `tol`, or to
/// at most 10⁻¹⁴ of the integral (rounding makes smaller estimates
/// meaningless), or until 20 000 intervals. The estimate `|K15 − G7|` is
/// pessimistic for smooth integrands, so the error reached is usually far
/// below it.
///
/// Cost: 15 evaluations of `f` per interval, at most 600 000.
pub(crate) fn integrate(f: &mut impl FnMut(f64) -> f64, a: f64, b: f64, tol: f64) -> f64 {
    struct Piece {
        a: f64,
        b: f64,
        value: f64,
        err: f64,
    }
    impl PartialEq for Piece {
        fn eq(&self, other: &Self) -> bool {
            self.err.total_cmp(&other.err).is_eq()
        }
    }
    impl Eq for Piece {}
    impl PartialOrd for Piece {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Piece {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.err.total_cmp(&other.err)
        }
    }
    if b <= a {
        return 0.0;
    }
    let (value, err) = gk15(f, a, b);
    let mut heap = std::collections::BinaryHeap::from([Piece { a, b, value, err }]);
    let (mut total, mut total_err) = (value, err);
    while total_err > tol.max(1e-14 * total.abs()) && heap.len() < MAX_INTERVALS {
        let Some(worst) = heap.pop() else { break };
        let m = 0.5 * (worst.a + worst.b);
        if m <= worst.a || m >= worst.b {
            heap.push(worst);
            break;
        }
        let (lv, le) = gk15(f, worst.a, m);
        let (rv, re) = gk15(f, m, worst.b);
        total += lv + rv - worst.value;
        total_err += le + re - worst.err;
        heap.push(Piece {
            a: worst.a,
            b: m,
            value: lv,
            err: le,
        });
        heap.push(Piece {
            a: m,
            b: worst.b,
            value: rv,
            err: re,
        });
    }
    // Re-sum: the running total accumulates rounding over many updates.
    heap.iter().map(|p| p.value).sum()
}

/// A root of `g` in [a, b], where `g(a)` and `g(b)` have opposite signs (or
/// one is zero), to an absolute tolerance `tol`.
pub(crate) fn brent(g: &mut impl FnMut(f64) -> f64, a: f64, b: f64, tol: f64) -> f64 {
    let (mut a, mut b) = (a, b);
    let (mut fa, mut fb) = (g(a), g(b));
    if fa == 0.0 {
        return a;
    }
    if fb == 0.0 {
        return b;
    }
    let (mut c, mut fc) = (b, fb);
    let (mut d, mut e) = (b - a, b - a);
    for _ in 0..300 {
        if (fb > 0.0) == (fc > 0.0) {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol1 = 2.0 * f64::EPSILON * b.abs() + 0.5 * tol;
        let xm = 0.5 * (c - b);
        if xm.abs() <= tol1 || fb == 0.0 {
            return b;
        }
        if e.abs() >= tol1 && fa.abs() > fb.abs() {
            let s = fb / fa;
            let (mut p, mut q);
            if a == c {
                p = 2.0 * xm * s;
                q = 1.0 - s;
            } else {
                let qa = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * xm * qa * (qa - r) - (b - a) * (r - 1.0));
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            }
            p = p.abs();
            let min1 = 3.0 * xm * q - (tol1 * q).abs();
            let min2 = (e * q).abs();
            if 2.0 * p < min1.min(min2) {
                e = d;
                d = p / q;
            } else {
                d = xm;
                e = d;
            }
        } else {
            d = xm;
            e = d;
        }
        a = b;
        fa = fb;
        b += if d.abs() > tol1 { d } else { tol1.copysign(xm) };
        fb = g(b);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrates_known_integrals() {
        let mut calls = 0;
        let v = integrate(
            &mut |x: f64| {
                calls += 1;
                x.exp()
            },
            0.0,
            1.0,
            1e-14,
        );
        assert!((v - (1f64.exp() - 1.0)).abs() < 1e-15, "{v}");
        // A kink needs subdivision but still converges.
        let v = integrate(&mut |x: f64| (x - 0.3).abs(), 0.0, 1.0, 1e-12);
        assert!((v - 0.29).abs() < 1e-11, "{v}");
        // An infinite derivative at an endpoint.
        let v = integrate(&mut |x: f64| x.sqrt(), 0.0, 1.0, 1e-13);
        assert!((v - 2.0 / 3.0).abs() < 1e-12, "{v}");
    }

    #[test]
    fn brent_finds_roots() {
        let r = brent(&mut |x: f64| x * x - 2.0, 0.0, 2.0, 1e-15);
        assert!((r - 2f64.sqrt()).abs() < 1e-14);
        let r = brent(&mut |x: f64| (x - 1e6).tanh(), 0.0, 1e7, 1e-6);
        assert!((r - 1e6).abs() < 1e-6);
    }
}
