//! The standard normal quantile as a function of a standard exponential,
//! for drawing log-normal order statistics from exponential ones.
//!
//! Wichura's algorithm AS 241 (PPND16; Applied Statistics 37(3), 477–484,
//! 1988) gives Φ⁻¹(p) to about 1e-16 relative by three rational functions of
//! degree 7: one in r = 0.180625 − q² (q = p − ½) for |q| ≤ 0.425, and two in
//! r = √(−ln min(p, 1 − p)) beyond, split at r = 5. The order-statistic
//! sampler holds the standard exponential e with p = 1 − e^(−e), and in the
//! upper tail r is then √e exactly: no logarithm, and no rounding of 1 − p.

// The coefficients are written with the 20 digits Wichura published (each
// rounds to the same double as a shorter form), so they can be checked
// against the paper.
#![allow(clippy::excessive_precision)]

/// Numerator and denominator coefficients, constant term first, of the
/// central region (|q| ≤ 0.425).
const A: [f64; 8] = [
    3.387_132_872_796_366_608,
    1.331_416_678_917_843_774_5e2,
    1.971_590_950_306_551_442_7e3,
    1.373_169_376_550_946_112_5e4,
    4.592_195_393_154_987_145_7e4,
    6.726_577_092_700_870_085_3e4,
    3.343_057_558_358_812_810_5e4,
    2.509_080_928_730_122_672_7e3,
];
const B: [f64; 8] = [
    1.0,
    4.231_333_070_160_091_125_2e1,
    6.871_870_074_920_579_083_0e2,
    5.394_196_021_424_751_107_7e3,
    2.121_379_430_158_659_586_7e4,
    3.930_789_580_009_271_061_0e4,
    2.872_908_573_572_194_267_4e4,
    5.226_495_278_852_854_561_0e3,
];
/// The intermediate tail, r ≤ 5 (p down to about 1e-11), in r − 1.6.
const C: [f64; 8] = [
    1.423_437_110_749_683_577_34,
    4.630_337_846_156_545_295_90,
    5.769_497_221_460_691_405_50,
    3.647_848_324_763_204_605_04,
    1.270_458_252_452_368_382_58,
    2.417_807_251_774_506_117_70e-1,
    2.272_384_498_926_918_458_33e-2,
    7.745_450_142_783_414_076_40e-4,
];
const D: [f64; 8] = [
    1.0,
    2.053_191_626_637_758_821_87,
    1.676_384_830_183_803_849_40,
    6.897_673_349_851_000_045_50e-1,
    1.481_039_764_274_800_745_90e-1,
    1.519_866_656_361_645_719_66e-2,
    5.475_938_084_995_344_946_00e-4,
    1.050_750_071_644_416_843_24e-9,
];
/// The far tail, r > 5, in r − 5.
const E: [f64; 8] = [
    6.657_904_643_501_103_777_20,
    5.463_784_911_164_114_369_90,
    1.784_826_539_917_291_335_80,
    2.965_605_718_285_048_912_30e-1,
    2.653_218_952_657_612_309_30e-2,
    1.242_660_947_388_078_438_60e-3,
    2.711_555_568_743_487_578_15e-5,
    2.010_334_399_292_288_132_65e-7,
];
const F: [f64; 8] = [
    1.0,
    5.998_322_065_558_879_376_90e-1,
    1.369_298_809_227_358_053_10e-1,
    1.487_536_129_085_061_485_25e-2,
    7.868_691_311_456_132_591_00e-4,
    1.846_318_317_510_054_681_80e-5,
    1.421_511_758_316_445_888_70e-7,
    2.044_263_103_389_939_785_64e-15,
];

/// −ln 0.075: beyond it the upper tail probability is below 0.075.
const UPPER_TAIL: f64 = 2.590_267_165_445_826_7;

#[inline(always)]
fn ratio(num: &[f64; 8], den: &[f64; 8], x: f64) -> f64 {
    let horner = |c: &[f64; 8]| c.iter().rev().fold(0.0, |acc, &k| acc * x + k);
    horner(num) / horner(den)
}

/// Φ⁻¹(1 − e^(−e)) for e ≥ 0: the standard normal value with the quantile of
/// the standard exponential value `e` (AS 241, see the module notes).
// Not inlined: in the samplers' per-law loops a large inlined body in one
// arm of the law's match keeps the compiler from specialising the others.
#[inline(never)]
pub fn normal_of_exponential(e: f64) -> f64 {
    if e <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if e > UPPER_TAIL {
        // Upper tail, t = e^(−e) < 0.075: r = √(−ln t) = √e.
        let r = e.sqrt();
        return if r <= 5.0 {
            ratio(&C, &D, r - 1.6)
        } else {
            ratio(&E, &F, r - 5.0)
        };
    }
    // t = e^(−e) is the upper tail probability 1 − p.
    let t = (-e).exp();
    if t <= 0.925 {
        let q = 0.5 - t;
        q * ratio(&A, &B, 0.180_625 - q * q)
    } else {
        // Lower tail: p = 1 − t, from expm1 to keep its digits.
        let r = (-(-(-e).exp_m1()).ln()).sqrt();
        if r <= 5.0 {
            -ratio(&C, &D, r - 1.6)
        } else {
            -ratio(&E, &F, r - 5.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::normal_of_exponential;
    use statrs::function::erf::erfc_inv;
    use std::f64::consts::SQRT_2;

    /// Against statrs's erfc⁻¹ (Boost's rational approximations), fed the
    /// tail probability that keeps its digits: Φ⁻¹(1 − t) = √2·erfc⁻¹(2t)
    /// above the median, −√2·erfc⁻¹(2p) below it. Over every branch
    /// (e from 1e-6, p ≈ 1e-6, to 700, t ≈ 1e-304) to 1e-13 relative (or
    /// 1e-15 absolute near the median, where z crosses 0).
    #[test]
    fn matches_the_inverse_error_function_on_every_branch() {
        let mut e: f64 = 1e-6;
        let mut checked = 0;
        while e < 700.0 {
            let t = (-e).exp();
            let reference = if t < 0.5 {
                SQRT_2 * erfc_inv(2.0 * t)
            } else {
                -SQRT_2 * erfc_inv(2.0 * -(-e).exp_m1())
            };
            let z = normal_of_exponential(e);
            assert!(
                (z - reference).abs() <= 1e-13 * reference.abs() + 1e-15,
                "e {e}: {z} vs {reference}"
            );
            checked += 1;
            e *= 1.01;
        }
        assert!(checked > 1500, "{checked}");
        // The median, and the branch points: t = 0.925, 0.075, and r = 5.
        assert!(normal_of_exponential(std::f64::consts::LN_2).abs() < 1e-16);
        assert_eq!(normal_of_exponential(0.0), f64::NEG_INFINITY);
        for e in [-(0.925f64.ln()), -(0.075f64.ln()), 25.0] {
            for x in [e * (1.0 - 1e-12), e * (1.0 + 1e-12)] {
                let (a, b) = (normal_of_exponential(x), SQRT_2 * erfc_inv(2.0 * (-x).exp()));
                assert!((a - b).abs() <= 1e-13 * b.abs(), "e {x}: {a} vs {b}");
            }
        }
    }
}
