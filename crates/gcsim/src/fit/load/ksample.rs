//! The k-sample Anderson–Darling statistic of Scholz & Stephens (1987), in
//! its mid-rank form for samples with ties (their eq. 7):
//!
//! ```text
//! A²_akN = (N−1)/N² · Σᵢ 1/nᵢ · Σⱼ lⱼ (N·M_aij − nᵢ·B_aj)² / (B_aj(N − B_aj) − N·lⱼ/4)
//! ```
//!
//! over the L distinct values z*₁ < … < z*_L of the pooled sample (N values,
//! sample i holding nᵢ), with lⱼ the number of pooled values equal to z*ⱼ,
//! B_aj = (pooled values below z*ⱼ) + lⱼ/2 and M_aij = (values of sample i
//! below z*ⱼ) + (those equal to it)/2. Under the hypothesis that every sample
//! comes from one continuous law, E[A²] = k − 1. Scholz & Stephens' smoothness
//! example (four laboratories) gives 8.3926, as kSamples' `ad.test` and
//! scipy's `anderson_ksamp` do.
//!
//! [`shift_fit`] finds the c that makes the samples `xᵢ − c·ℓᵢ` most alike by
//! this statistic, the minimum-distance estimate of affine's unit time.

/// A²_akN of the pooled sample `values` (ascending), value v belonging to
/// sample `labels[v]` < `sizes.len()`; `sizes[i]` is sample i's size, each
/// at least 1. Cost: O(N·k).
pub fn anderson_darling(values: &[f64], labels: &[usize], sizes: &[usize]) -> f64 {
    let mut sum = Accumulator::default();
    sum.start(sizes);
    for (&v, &l) in values.iter().zip(labels) {
        sum.push(v, l);
    }
    sum.finish()
}

/// A²_akN accumulated over the pooled values in ascending order, one run of
/// tied values at a time.
#[derive(Debug, Default)]
struct Accumulator {
    sizes: Vec<f64>,
    n_total: f64,
    /// Values of each sample below the current run.
    below: Vec<f64>,
    /// Values of each sample in the current run.
    equal: Vec<f64>,
    /// Σⱼ lⱼ (N·M_aij − nᵢ·B_aj)² / (…) so far, by sample.
    sums: Vec<f64>,
    /// The current run's value and length, and the pooled values below it.
    run: (f64, usize, usize),
}

impl Accumulator {
    fn start(&mut self, sizes: &[usize]) {
        let k = sizes.len();
        self.sizes.clear();
        self.sizes.extend(sizes.iter().map(|&n| n as f64));
        self.n_total = sizes.iter().sum::<usize>() as f64;
        for v in [&mut self.below, &mut self.equal, &mut self.sums] {
            v.clear();
            v.resize(k, 0.0);
        }
        self.run = (f64::NAN, 0, 0);
    }

    #[inline]
    fn push(&mut self, value: f64, label: usize) {
        if value != self.run.0 {
            self.flush();
            self.run.0 = value;
        }
        self.equal[label] += 1.0;
        self.run.1 += 1;
    }

    fn flush(&mut self) {
        let (_, len, before) = self.run;
        if len == 0 {
            return;
        }
        let (n, l) = (self.n_total, len as f64);
        let b = before as f64 + l / 2.0;
        let denominator = b * (n - b) - n * l / 4.0;
        // Zero only when every value is tied (then no sample differs).
        let weight = if denominator > 0.0 { l / denominator } else { 0.0 };
        for i in 0..self.sizes.len() {
            let m = self.below[i] + self.equal[i] / 2.0;
            self.sums[i] += weight * (n * m - self.sizes[i] * b).powi(2);
            self.below[i] += self.equal[i];
            self.equal[i] = 0.0;
        }
        self.run = (f64::NAN, 0, before + len);
    }

    fn finish(&mut self) -> f64 {
        self.flush();
        let n = self.n_total;
        let total: f64 = self.sums.iter().zip(&self.sizes).map(|(s, m)| s / m).sum();
        (n - 1.0) / (n * n) * total
    }
}

/// Buffers for evaluating A²_akN of shifted samples, reused across calls.
#[derive(Debug, Default)]
pub struct Merge {
    sum: Accumulator,
    heads: Vec<usize>,
    next: Vec<f64>,
    sizes: Vec<usize>,
}

impl Merge {
    /// A²_akN of the samples `sortedᵢ − shift·loadsᵢ`, each `sortedᵢ`
    /// ascending (so is its shifted copy), merged on the fly. Cost: O(N·k).
    pub fn shifted(&mut self, sorted: &[Vec<f64>], loads: &[f64], shift: f64) -> f64 {
        let k = sorted.len();
        self.sizes.clear();
        self.sizes.extend(sorted.iter().map(Vec::len));
        self.sum.start(&self.sizes);
        self.heads.clear();
        self.heads.resize(k, 0);
        self.next.clear();
        self.next.extend(
            sorted
                .iter()
                .zip(loads)
                .map(|(s, l)| s.first().map_or(f64::INFINITY, |x| x - shift * l)),
        );
        let total: usize = self.sizes.iter().sum();
        for _ in 0..total {
            let mut best = 0;
            for i in 1..k {
                if self.next[i] < self.next[best] {
                    best = i;
                }
            }
            self.sum.push(self.next[best], best);
            let h = self.heads[best] + 1;
            self.heads[best] = h;
            self.next[best] = sorted[best].get(h).map_or(f64::INFINITY, |x| x - shift * loads[best]);
        }
        self.sum.finish()
    }
}

/// Grid points of the first pass of [`shift_fit`], then of each refinement.
const GRID: usize = 17;
const REFINE: usize = 9;
const ROUNDS: usize = 3;

/// The shift c in `[lo, hi]` that minimises A²_akN of `sortedᵢ − c·loadsᵢ`,
/// and that minimum.
///
/// A² is a step function of c, roughly quadratic around its minimum at the
/// scale of the estimate's standard error, and flat where the samples no
/// longer overlap. The search therefore starts from the slope of the
/// samples' medians on their loads (least squares), within ± the widest
/// interquartile range over the spread of the loads, where the shifted
/// samples overlap; it grids that bracket (intersected with `[lo, hi]`) with
/// 17 points, then regrids ± one step around the best point 3 times with
/// 9 points, each time 4 times finer: 44 evaluations, a resolution of
/// 1/1024 of the bracket (a small fraction of the standard error for
/// samples of more than a few dozen times). Ties go to the smaller c.
pub(crate) fn shift_fit(sorted: &[Vec<f64>], loads: &[f64], lo: f64, hi: f64, merge: &mut Merge) -> (f64, f64) {
    let quantile = |s: &[f64], p: f64| s[((s.len() - 1) as f64 * p).round() as usize];
    let medians: Vec<f64> = sorted.iter().map(|s| quantile(s, 0.5)).collect();
    let load_mean = loads.iter().sum::<f64>() / loads.len() as f64;
    let median_mean = medians.iter().sum::<f64>() / medians.len() as f64;
    let sxx: f64 = loads.iter().map(|l| (l - load_mean).powi(2)).sum();
    let sxy: f64 = loads
        .iter()
        .zip(&medians)
        .map(|(l, m)| (l - load_mean) * (m - median_mean))
        .sum();
    let slope = sxy / sxx;
    let spread =
        loads.iter().copied().fold(f64::NEG_INFINITY, f64::max) - loads.iter().copied().fold(f64::INFINITY, f64::min);
    let iqr = sorted
        .iter()
        .map(|s| quantile(s, 0.75) - quantile(s, 0.25))
        .fold(0.0, f64::max);
    let width = (iqr / spread).max(1e-12 * slope.abs());
    let (mut a, mut b) = ((slope - width).max(lo), (slope + width).min(hi));
    if a > b {
        // The bracket lies outside [lo, hi]: its nearer end.
        (a, b) = if slope - width > hi { (hi, hi) } else { (lo, lo) };
    }
    let mut best = (a, merge.shifted(sorted, loads, a));
    let mut points = GRID;
    for round in 0..=ROUNDS {
        if b <= a {
            break;
        }
        let step = (b - a) / (points - 1) as f64;
        for p in 0..points {
            let c = a + step * p as f64;
            let value = merge.shifted(sorted, loads, c);
            if value < best.1 || (value == best.1 && c < best.0) {
                best = (c, value);
            }
        }
        if round < ROUNDS {
            (a, b) = ((best.0 - step).max(lo), (best.0 + step).min(hi));
            points = REFINE;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scholz & Stephens (1987), smoothness of paper measured by four
    /// laboratories: A²_akN = 8.3926 (kSamples `ad.test` version 2; scipy
    /// `anderson_ksamp` with midrank gives the standardised 4.480 from it).
    #[test]
    fn reproduces_the_published_example() {
        let samples = [
            vec![38.7, 41.5, 43.8, 44.5, 45.5, 46.0, 47.7, 58.0],
            vec![39.2, 39.3, 39.7, 41.4, 41.8, 42.9, 43.3, 45.8],
            vec![34.0, 35.0, 39.0, 40.0, 43.0, 43.0, 44.0, 45.0],
            vec![34.0, 34.8, 34.8, 35.4, 37.2, 37.8, 41.2, 42.8],
        ];
        let mut merge = Merge::default();
        let a2 = merge.shifted(&samples, &[1.0; 4], 0.0);
        assert!((a2 - 8.3926).abs() < 5e-5, "{a2}");
        // Shifting every sample by the same amount changes nothing.
        assert!((merge.shifted(&samples, &[1.0; 4], 2.5) - a2).abs() < 1e-9);
    }

    /// Two samples without ties: A² against eq. 7 written out term by term
    /// for x = {1, 3}, y = {2, 4}.
    #[test]
    fn two_samples_by_hand() {
        // N = 4, pooled 1(x) 2(y) 3(x) 4(y); each l = 1, B = j − 1/2.
        let (n, nx, ny) = (4.0, 2.0, 2.0);
        let mx = [0.5, 1.0, 1.5, 2.0];
        let my = [0.0, 0.5, 1.0, 1.5];
        let mut sx = 0.0;
        let mut sy = 0.0;
        for j in 0..4 {
            let b = j as f64 + 0.5;
            let d = b * (n - b) - n / 4.0;
            sx += (n * mx[j] - nx * b).powi(2) / d;
            sy += (n * my[j] - ny * b).powi(2) / d;
        }
        let want = (n - 1.0) / (n * n) * (sx / nx + sy / ny);
        let got = anderson_darling(&[1.0, 2.0, 3.0, 4.0], &[0, 1, 0, 1], &[2, 2]);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    /// The fitted shift of samples drawn as x + c·ℓ recovers c; a range that
    /// excludes it returns its nearer end.
    #[test]
    fn shift_fit_finds_the_shift() {
        let base: Vec<f64> = (1..=200).map(|i| (i as f64 / 201.0).powi(2) * 3.0).collect();
        let loads = [1.0, 2.0, 4.0];
        let sorted: Vec<Vec<f64>> = loads
            .iter()
            .map(|l| base.iter().map(|x| x + 0.7 * l).collect())
            .collect();
        let mut merge = Merge::default();
        let (c, a2) = shift_fit(&sorted, &loads, 0.0, 10.0, &mut merge);
        assert!((c - 0.7).abs() < 1e-3, "{c}");
        // Identical samples up to rounding: far below E[A²] = k − 1 = 2.
        assert!(a2 < 0.1, "{a2}");
        // A² is flat between its steps; ties go to the smaller c.
        let (c, _) = shift_fit(&sorted, &loads, 0.0, 0.5, &mut merge);
        assert!(c <= 0.5 && c > 0.499, "{c}");
    }
}
