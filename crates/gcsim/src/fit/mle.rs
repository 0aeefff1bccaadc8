//! Maximum-likelihood estimators of the five base laws, for a sample of
//! positive times x₁ … x_n (Johnson, Kotz & Balakrishnan, *Continuous
//! Univariate Distributions* vol. 1, 2nd ed., 1994):
//!
//! - exponential (ch. 19 §4): rate = 1/x̄;
//! - shifted exponential (ch. 19 §4): shift = x₍₁₎, rate = 1/(x̄ − x₍₁₎). The
//!   shift is biased upwards: E[x₍₁₎] = shift + 1/(nμ). No correction is
//!   applied (the unbiased `(n·x₍₁₎ − x̄)/(n−1)` is not the likelihood's
//!   maximum, and at the thousands of pooled times of a trace the bias is
//!   1/n of the mean excess);
//! - Pareto type I (ch. 20 §5): scale = x₍₁₎, shape = n / Σ ln(xᵢ/scale); both
//!   biased in the same way (E[α̂] = nα/(n−2)), uncorrected;
//! - log-normal (ch. 14 §4): μ = mean of ln xᵢ, σ² = mean of (ln xᵢ − μ)²
//!   (divisor n);
//! - Weibull (ch. 21 §4): the shape k is the root of the profile-likelihood
//!   equation `Σ xᵢ^k ln xᵢ / Σ xᵢ^k − 1/k − mean(ln xᵢ) = 0`, whose left side
//!   increases from −∞ to max ln xᵢ − mean ln xᵢ > 0, so the root is unique;
//!   it is bracketed and bisected to machine precision. Then
//!   scale = (Σ xᵢ^k / n)^(1/k).
//!
//! Each estimator needs at least two distinct values (checked by the caller).

use crate::dist::{Base, Dist, DistError};

use super::{Family, Passes};

/// What every estimator reads of a sample, computed once for all the
/// families: the logarithm of each time is taken here and nowhere else.
pub(crate) struct Summary {
    n: f64,
    min: f64,
    mean: f64,
    /// `ln xᵢ`, in the sample's order.
    logs: Vec<f64>,
    mean_ln: f64,
}

impl Summary {
    /// The summary of `xs` (positive, finite).
    pub(crate) fn new(xs: &[f64]) -> Self {
        let n = xs.len() as f64;
        let mut logs = xs.to_vec();
        crate::rng::ln::ln_in_place(&mut logs);
        Self {
            n,
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            mean: xs.iter().sum::<f64>() / n,
            mean_ln: logs.iter().sum::<f64>() / n,
            logs,
        }
    }
}

/// The maximum-likelihood law of `family` for `xs` (positive, finite, not all
/// equal), whose [`Summary`] is `s`, with parameters rounded to
/// [`SIGNIFICANT_DIGITS`] so that the printed `--dist` string is the law
/// whose likelihood and distance are reported. Support endpoints (shift,
/// Pareto scale) are rounded down, so that every time stays inside the
/// support.
pub(crate) fn estimate(family: Family, xs: &[f64], s: &Summary, passes: Passes) -> Result<Dist, DistError> {
    let (n, min, mean, mean_ln) = (s.n, s.min, s.mean, s.mean_ln);
    match family {
        Family::Exp => Dist::exp(round(1.0 / mean)),
        Family::ShiftedExp => {
            let shift = round_down(min);
            Dist::shifted_exp(shift, round(1.0 / (mean - shift)))
        }
        Family::Pareto => {
            let scale = round_down(min);
            let sum_ln = sum_of_logs(xs.iter().map(|x| x / scale));
            Dist::pareto(scale, round(n / sum_ln))
        }
        Family::LogNormal => {
            let var = s.logs.iter().map(|l| (l - mean_ln).powi(2)).sum::<f64>() / n;
            Dist::lognormal(round(mean_ln), round(var.sqrt()))
        }
        Family::Weibull => {
            let (scale, shape) = weibull(&s.logs, mean_ln, passes);
            Dist::weibull(round(scale), round(shape))
        }
    }
}

/// Significant digits of the fitted parameters: far below the sampling
/// error of any trace, short enough to paste.
pub const SIGNIFICANT_DIGITS: usize = 6;

pub(crate) fn round(x: f64) -> f64 {
    format!("{:.*e}", SIGNIFICANT_DIGITS - 1, x).parse().unwrap_or(x)
}

/// `x` rounded to [`SIGNIFICANT_DIGITS`], never above `x`.
pub(crate) fn round_down(x: f64) -> f64 {
    let r = round(x);
    if r <= x {
        return r;
    }
    let ulp = 10f64.powi(x.abs().log10().floor() as i32 + 1 - SIGNIFICANT_DIGITS as i32);
    round(r - ulp).min(x)
}

/// `Σ ln vᵢ` in order, the logarithms a block at a time (`rng::ln`,
/// glibc's bits).
fn sum_of_logs(mut values: impl Iterator<Item = f64>) -> f64 {
    let mut buffer = [0.0; POWER_BLOCK];
    // The start of `Iterator::sum` over f64, so that the bits are its.
    let mut sum = -0.0;
    loop {
        let mut len = 0;
        for (b, v) in buffer.iter_mut().zip(&mut values) {
            *b = v;
            len += 1;
        }
        if len == 0 {
            return sum;
        }
        crate::rng::ln::ln_in_place(&mut buffer[..len]);
        for l in &buffer[..len] {
            sum += l;
        }
    }
}

/// Values whose powers [`weibull`] takes at a time: a buffer that stays
/// in the first-level cache.
const POWER_BLOCK: usize = 512;

/// The Weibull MLE `(scale, shape)` from the times' logarithms `logs`.
/// Powers are taken relative to the largest time, `(xᵢ/x₍ₙ₎)^k ≤ 1`, so that
/// no sum overflows for any k. With [`Passes::Parallel`] the bisection
/// takes two steps at a time where it can ([`bisect_in_pairs`]), with the
/// same result.
fn weibull(logs: &[f64], mean_ln: f64, passes: Passes) -> (f64, f64) {
    let ln_max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // (Σ wᵢ, Σ wᵢ·ln xᵢ) with wᵢ = (xᵢ/x₍ₙ₎)^k = e^(k·(ln xᵢ − ln x₍ₙ₎)),
    // summed in the sample's order; the exponentials a block at a time,
    // several to an instruction (`rng::exp`, glibc's bits).
    let sums = |k: f64| {
        let mut w = [0.0; POWER_BLOCK];
        logs.chunks(POWER_BLOCK).fold((0.0, 0.0), |(mut s, mut sl), block| {
            let w = &mut w[..block.len()];
            for (w, l) in w.iter_mut().zip(block) {
                *w = l - ln_max;
            }
            crate::rng::exp::exp_affine(w, 0.0, k);
            for (w, l) in w.iter().zip(block) {
                s += w;
                sl += w * l;
            }
            (s, sl)
        })
    };
    let g = |k: f64| {
        let (s, sl) = sums(k);
        sl / s - 1.0 / k - mean_ln
    };
    let (mut lo, mut hi) = (1.0, 1.0);
    let mut g_lo = g(lo);
    while g_lo > 0.0 && lo > 1e-300 {
        lo *= 0.5;
        g_lo = g(lo);
    }
    let mut g_hi = g(hi);
    while g_hi < 0.0 && hi < 1e300 {
        hi *= 2.0;
        g_hi = g(hi);
    }
    let (lo, hi) = match passes {
        Passes::Serial => {
            for _ in 0..BISECTIONS {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if g(mid) < 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            (lo, hi)
        }
        Passes::Parallel => bisect_in_pairs(&g, [(lo, g_lo), (hi, g_hi)]),
    };
    let k = 0.5 * (lo + hi);
    let (s, _) = sums(k);
    let scale = (ln_max + (s / logs.len() as f64).ln() / k).exp();
    (scale, k)
}

/// The most bisection steps: more than a bracket of doubles can take.
const BISECTIONS: usize = 2100;

/// The bracket `(lo, hi)` that the bisection of [`weibull`] ends with, from
/// `ends`, the bracket `[(lo, g(lo)), (hi, g(hi))]` it starts from, `g`
/// increasing. Each round computes g at the midpoint and, at once on
/// another thread, at the midpoint of the half in which the line through
/// the ends puts the root: where that guess is right, the round takes two
/// steps of the bisection, else one and the second value is dropped. Every
/// step is taken on g's own value at the point the bisection in turn takes
/// it at, so the bracket is that bisection's, bit for bit.
fn bisect_in_pairs(g: &(impl Fn(f64) -> f64 + Sync), ends: [(f64, f64); 2]) -> (f64, f64) {
    let [(mut lo, mut g_lo), (mut hi, mut g_hi)] = ends;
    let mut steps = 0;
    while steps < BISECTIONS {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        // A guess only: a NaN makes it `false`, which is as good as any.
        let below = mid < lo - g_lo * (hi - lo) / (g_hi - g_lo);
        let next = if below { 0.5 * (mid + hi) } else { 0.5 * (lo + mid) };
        let (g_mid, g_next) = rayon::join(|| g(mid), || g(next));
        steps += 1;
        if g_mid < 0.0 {
            (lo, g_lo) = (mid, g_mid);
        } else {
            (hi, g_hi) = (mid, g_mid);
        }
        // `next` is the bisection's next point where g(mid) fell on the
        // side guessed, while the bracket still splits.
        if (g_mid < 0.0) == below && next > lo && next < hi && steps < BISECTIONS {
            steps += 1;
            if g_next < 0.0 {
                (lo, g_lo) = (next, g_next);
            } else {
                (hi, g_hi) = (next, g_next);
            }
        }
    }
    (lo, hi)
}

/// `ln f(x)` of a base law (see [`Base::ln_pdf`]).
pub(crate) fn ln_pdf(base: Base, x: f64) -> f64 {
    base.ln_pdf(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_six_digits_and_endpoints_stay_below() {
        assert_eq!(round(0.123_456_789), 0.123_457);
        assert_eq!(round(-1234.5678), -1234.57);
        for x in [0.123_456_789, 0.812_691, 5.349_999_9, 1.0, 9.999_999_9, 3.3e-7] {
            let r = round_down(x);
            assert!(r <= x && (x - r) <= 1e-5 * x, "{x}: {r}");
        }
        assert_eq!(round_down(0.812_691), 0.812_691);
        assert_eq!(round_down(0.123_456_789), 0.123_456);
    }

    /// The Weibull root find on the cached logarithms, its powers four at
    /// a time, has the bits of the same bisection with every logarithm and
    /// power taken afresh through libm; so do the mean log and the Pareto
    /// sum of logs.
    #[test]
    fn weibull_has_the_bits_of_the_plain_root_find() {
        fn plain(xs: &[f64], mean_ln: f64) -> (f64, f64) {
            let ln_max = xs.iter().map(|x| x.ln()).fold(f64::NEG_INFINITY, f64::max);
            let sums = |k: f64| {
                xs.iter().fold((0.0, 0.0), |(s, sl), x| {
                    let l = x.ln();
                    let w = (k * (l - ln_max)).exp();
                    (s + w, sl + w * l)
                })
            };
            let g = |k: f64| {
                let (s, sl) = sums(k);
                sl / s - 1.0 / k - mean_ln
            };
            let (mut lo, mut hi) = (1.0, 1.0);
            while g(lo) > 0.0 && lo > 1e-300 {
                lo *= 0.5;
            }
            while g(hi) < 0.0 && hi < 1e300 {
                hi *= 2.0;
            }
            for _ in 0..2100 {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if g(mid) < 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let k = 0.5 * (lo + hi);
            let (s, _) = sums(k);
            ((ln_max + (s / xs.len() as f64).ln() / k).exp(), k)
        }
        use rand_distr::Distribution;
        let mut rng = crate::rng::trial_rng(11, 0);
        for (law, n) in [
            (Dist::weibull(1.5, 0.8).unwrap(), 3001),
            (Dist::weibull(2.0, 4.0).unwrap(), 1000),
            (Dist::lognormal(0.1, 0.6).unwrap(), 2049),
        ] {
            let xs: Vec<f64> = (0..n).map(|_| law.sample(&mut rng)).collect();
            let summary = Summary::new(&xs);
            let mean_ln = xs.iter().map(|x| x.ln()).sum::<f64>() / n as f64;
            assert_eq!(summary.mean_ln.to_bits(), mean_ln.to_bits(), "{law}");
            let (scale, shape) = weibull(&summary.logs, summary.mean_ln, Passes::Serial);
            let (plain_scale, plain_shape) = plain(&xs, mean_ln);
            let in_pairs = weibull(&summary.logs, summary.mean_ln, Passes::Parallel);
            assert_eq!(
                (in_pairs.0.to_bits(), in_pairs.1.to_bits()),
                (scale.to_bits(), shape.to_bits())
            );
            let scale_min = 0.5 * xs.iter().copied().fold(f64::INFINITY, f64::min);
            let pareto = xs.iter().map(|x| (x / scale_min).ln()).sum::<f64>();
            assert_eq!(
                sum_of_logs(xs.iter().map(|x| x / scale_min)).to_bits(),
                pareto.to_bits()
            );
            assert_eq!(
                (scale.to_bits(), shape.to_bits()),
                (plain_scale.to_bits(), plain_shape.to_bits()),
                "{law}: {scale} {shape} against {plain_scale} {plain_shape}"
            );
        }
    }

    /// ln f against ln of the density of `Dist`, where the latter does not underflow.
    #[test]
    fn ln_pdf_is_the_log_of_the_density() {
        let laws = [
            Dist::exp(2.0).unwrap(),
            Dist::shifted_exp(1.0, 0.5).unwrap(),
            Dist::pareto(0.5, 2.5).unwrap(),
            Dist::lognormal(0.2, 0.7).unwrap(),
            Dist::weibull(1.5, 0.8).unwrap(),
            Dist::weibull(1.5, 3.0).unwrap(),
        ];
        for d in laws {
            for p in [0.01, 0.5, 0.99] {
                let x = d.quantile(p);
                let (a, b) = (ln_pdf(d.base(), x), d.pdf(x).ln());
                assert!((a - b).abs() < 1e-12 * b.abs().max(1.0), "{d} at {x}: {a} vs {b}");
            }
        }
        assert_eq!(ln_pdf(Dist::pareto(1.0, 2.0).unwrap().base(), 0.5), f64::NEG_INFINITY);
    }
}
