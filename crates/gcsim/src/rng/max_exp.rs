//! The largest of T ≥ 2 independent standard exponentials in one draw: the
//! slowest of a tensor-parallel group's ranks that share a law and a state.
//!
//! Its law has the CDF F(x) = (1 − e^(−x))^T and the density
//! f(x) = T·e^(−x)·(1 − e^(−x))^(T−1), unimodal with its mode at ln T.
//! Inverting F costs a logarithm, an exponential and another logarithm
//! (some 10 ns here, more than the T ziggurat draws it would replace), so
//! the draw is a table method: F's 512 quantiles q_k = F⁻¹(k/512) cut the
//! line into intervals of probability 1/512 each, and one 64-bit word
//! gives an interval k (its low 9 bits), a height (the next 12) and a
//! uniform u (the top 43): x = q_k + u·(q_(k+1) − q_k) is the draw when
//! the height lies below the density's minimum over the interval, which a
//! table of integer thresholds tells. Otherwise (about 2% of draws) the
//! height is refined with a fresh word and the point (x, height) kept when
//! it lies under f, else the interval drawn again: rejection within the
//! interval, whose points are then distributed as f is there. The first
//! interval (f rises from 0) and the last (the unbounded tail) are drawn
//! by inverting F with fresh words. So each draw has F's law exactly, up
//! to the rounding of the tables (relative 10⁻¹⁵) and of x to 43 bits
//! within its interval (under 10⁻¹⁴ of its width).

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The equal-probability intervals: one word's low 9 bits pick one.
const INTERVALS: usize = 512;
/// The height's levels, from the 12 bits above the interval's.
const HEIGHT_SHIFT: u32 = 9;
const LEVELS: f64 = 4096.0;
/// How far the tables' bounds of f are widened beyond their rounding.
const MARGIN: f64 = 1e-9;

/// The largest of `count` standard exponentials, drawn by a table method.
#[derive(Debug, Clone)]
pub(crate) struct MaxExp {
    /// T, as a float.
    count: f64,
    /// The intervals, indexed by a word's low 9 bits (no bounds check).
    intervals: Box<[Interval; INTERVALS]>,
    /// Per interval, a bound of f from above there.
    top: Vec<f64>,
}

/// One interval of probability 1/512, what a common draw reads of it.
#[derive(Debug, Clone, Copy, Default)]
struct Interval {
    /// Its lower end q_k.
    lower: f64,
    /// Its width (0 for the last, which is inverted instead).
    width: f64,
    /// The heights (of `LEVELS`) wholly under f there: a word whose height
    /// is below it is drawn at once. 0 for the first and last intervals,
    /// which are inverted instead.
    sure: u32,
}

impl MaxExp {
    /// The sampler of the largest of `count` ≥ 2 standard exponentials.
    pub(crate) fn new(count: usize) -> Self {
        assert!(count >= 2, "the largest of two or more");
        let mut law = Self {
            count: count as f64,
            intervals: Box::new([Interval::default(); INTERVALS]),
            top: vec![0.0; INTERVALS],
        };
        for k in 1..INTERVALS {
            law.intervals[k].lower = law.quantile(k as f64 / INTERVALS as f64);
        }
        let mode = law.count.ln();
        for k in 1..INTERVALS - 1 {
            let (a, b) = (law.intervals[k].lower, law.intervals[k + 1].lower);
            let (fa, fb) = (law.density(a), law.density(b));
            let peak = if (a..=b).contains(&mode) {
                law.density(mode)
            } else {
                fa.max(fb)
            };
            law.top[k] = peak * (1.0 + MARGIN);
            let floor = fa.min(fb) * (1.0 - MARGIN);
            law.intervals[k].width = b - a;
            law.intervals[k].sure = (floor / law.top[k] * LEVELS).floor() as u32;
        }
        law
    }

    /// One draw: a word, and in about 2% of draws a few more.
    #[inline(always)]
    pub(crate) fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> f64 {
        let word = rng.next_u64();
        match self.common(word) {
            Some(x) => x,
            None => self.rare(rng, word),
        }
    }

    /// The draw of a word whose height is surely under f (the common
    /// case, no further word), else `None`.
    #[inline(always)]
    pub(crate) fn common(&self, word: u64) -> Option<f64> {
        let at = &self.intervals[word as usize & (INTERVALS - 1)];
        let x = at.lower + unit43(word) * at.width;
        (height(word) < at.sure).then_some(x)
    }

    /// The draw of a word [`Self::common`] leaves, with further words.
    #[cold]
    #[inline(never)]
    pub(crate) fn rare(&self, rng: &mut Xoshiro256PlusPlus, mut word: u64) -> f64 {
        let (k, n) = (word as usize & (INTERVALS - 1), INTERVALS as f64);
        if k == 0 {
            return self.quantile(open01(rng.next_u64()) / n);
        }
        if k == INTERVALS - 1 {
            return self.upper_quantile(open01(rng.next_u64()) / n);
        }
        let at = self.intervals[k];
        loop {
            let x = at.lower + unit43(word) * at.width;
            let level = height(word);
            if level < at.sure {
                return x;
            }
            let y = (f64::from(level) + unit53(rng.next_u64())) / LEVELS;
            if y * self.top[k] < self.density(x) {
                return x;
            }
            word = rng.next_u64();
        }
    }

    /// F⁻¹(p) for p in (0, 1).
    fn quantile(&self, p: f64) -> f64 {
        -(-(p.ln() / self.count).exp_m1()).ln()
    }

    /// F⁻¹(1 − v) for v in (0, 1), precise for small v.
    fn upper_quantile(&self, v: f64) -> f64 {
        -(-((-v).ln_1p() / self.count).exp_m1()).ln()
    }

    /// f(x).
    fn density(&self, x: f64) -> f64 {
        self.count * (-x).exp() * (-(-x).exp_m1()).powi(self.count as i32 - 1)
    }
}

/// The word's height: its 12 bits above the interval's.
#[inline(always)]
fn height(word: u64) -> u32 {
    (word >> HEIGHT_SHIFT) as u32 & (LEVELS as u32 - 1)
}

/// A uniform on [0, 1) from the word's top 43 bits.
#[inline(always)]
fn unit43(word: u64) -> f64 {
    (word >> 21) as f64 * (1.0 / (1u64 << 43) as f64)
}

/// A uniform on [0, 1) from the word's top 53 bits.
fn unit53(word: u64) -> f64 {
    (word >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform on (0, 1] from the word's top 53 bits.
fn open01(word: u64) -> f64 {
    ((word >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::trial_rng;

    /// The draws' distribution is F's: a chi-square over 400 bins of equal
    /// probability (their edges F⁻¹(i/400), so the first and last
    /// intervals' inversions and the rejections are all tested), and the
    /// mean and variance against Σ 1/k and Σ 1/k² (Rényi).
    #[test]
    fn draws_are_the_largest_of_t_exponentials() {
        for count in [2, 3, 4, 8] {
            let law = MaxExp::new(count);
            let bins = 400;
            let edges: Vec<f64> = (1..bins).map(|i| law.quantile(i as f64 / bins as f64)).collect();
            let mut hits = vec![0u64; bins];
            let mut rng = trial_rng(count as u64, 0);
            let draws = 2_000_000;
            let (mut sum, mut squares) = (0.0, 0.0);
            for _ in 0..draws {
                let x = law.sample(&mut rng);
                hits[edges.partition_point(|&e| e <= x)] += 1;
                sum += x;
                squares += x * x;
            }
            let expected = draws as f64 / bins as f64;
            let chi2: f64 = hits.iter().map(|&h| (h as f64 - expected).powi(2) / expected).sum();
            // 399 degrees of freedom: mean 399, sd 28; 6 sd above.
            assert!(chi2 < 399.0 + 6.0 * 28.3, "T = {count}: chi-square {chi2}");
            let mean: f64 = (1..=count).map(|k| 1.0 / k as f64).sum();
            let var: f64 = (1..=count).map(|k| 1.0 / (k * k) as f64).sum();
            let m = sum / draws as f64;
            let se = (var / draws as f64).sqrt();
            assert!((m - mean).abs() < 5.0 * se, "T = {count}: mean {m}, not {mean}");
            let v = squares / draws as f64 - m * m;
            assert!((v - var).abs() < 0.02 * var, "T = {count}: variance {v}, not {var}");
        }
    }

    /// Within each interval the draws are spread as f is: per interval,
    /// the mean of a draw's place in it, (x − q_k)/width, against the
    /// place's mean and variance under f (Simpson's rule), summed as a
    /// chi-square over the intervals, where the rejection's work shows (a
    /// squeeze alone spreads them evenly, which the quantile bins above do
    /// not see).
    #[test]
    fn draws_follow_the_density_within_intervals() {
        let law = MaxExp::new(4);
        let (draws, middle) = (4_000_000, 1..INTERVALS - 1);
        let (mut sums, mut counts) = (vec![0.0; INTERVALS], vec![0.0; INTERVALS]);
        let mut rng = trial_rng(5, 0);
        for _ in 0..draws {
            let x = law.sample(&mut rng);
            let k = law.intervals.partition_point(|i| i.lower <= x) - 1;
            if middle.contains(&k) {
                sums[k] += (x - law.intervals[k].lower) / law.intervals[k].width;
                counts[k] += 1.0;
            }
        }
        let mut chi2 = 0.0;
        for k in middle.clone() {
            let Interval { lower, width, .. } = law.intervals[k];
            let moment = |p: i32| {
                let f = |w: f64| w.powi(p) * law.density(lower + w * width) * width * INTERVALS as f64;
                let steps = 64;
                let h = 1.0 / steps as f64;
                (0..=steps)
                    .map(|i| f(i as f64 * h) * [1.0, 4.0, 2.0][if i == 0 || i == steps { 0 } else { 1 + (i + 1) % 2 }])
                    .sum::<f64>()
                    * h
                    / 3.0
            };
            let (m, v) = (moment(1), moment(2) - moment(1).powi(2));
            chi2 += (sums[k] / counts[k] - m).powi(2) / (v / counts[k]);
        }
        // 510 degrees of freedom: mean 510, sd 32; 6 sd above.
        assert!(chi2 < 510.0 + 6.0 * 32.0, "chi-square {chi2}");
    }

    /// The tables: intervals of probability 1/512, thresholds that keep
    /// points under f, and few words outside them.
    #[test]
    fn tables_bound_the_density() {
        for count in [2, 4, 16] {
            let law = MaxExp::new(count);
            let cdf = |x: f64| (-(-x).exp_m1()).powi(count as i32);
            let mut slow = 0.0;
            for k in 1..INTERVALS - 1 {
                let Interval { lower: a, width, sure } = law.intervals[k];
                let b = a + width;
                assert!(
                    (cdf(b) - cdf(a) - 1.0 / INTERVALS as f64).abs() < 1e-12,
                    "T = {count}, interval {k}"
                );
                for i in 0..=100 {
                    let f = law.density(a + (b - a) * i as f64 / 100.0);
                    assert!(f <= law.top[k], "T = {count}, interval {k}");
                    assert!(f64::from(sure) / LEVELS * law.top[k] <= f, "T = {count}, interval {k}");
                }
                slow += 1.0 - f64::from(sure) / LEVELS;
            }
            let slow = (slow + 2.0) / INTERVALS as f64;
            assert!(slow < 0.025, "T = {count}: {slow} of the words take the slow path");
        }
    }
}
