//! Descriptive statistics of a trace: who is slow, how often, and for how long.
//!
//! - The s slowest workers of a step: the s largest times, ties going to the
//!   lower worker index.
//! - A worker's stay probability: `P(among the s slowest at t+1 | among them at t)`,
//!   the count of consecutive pairs (t, t+1) with both over the count of t < T−1
//!   with the first; undefined when the worker is never among them before the
//!   last step.
//! - Lag-1 autocorrelation of a series x₁ … x_T (Box, Jenkins & Reinsel,
//!   *Time Series Analysis*, 4th ed. 2008, §2.1.5):
//!   `r₁ = Σ_{t<T} (x_t − x̄)(x_{t+1} − x̄) / Σ_t (x_t − x̄)²`.
//! - Pearson correlation of two workers' series across steps; its mean over
//!   the pairs of workers measures step-wide slowdowns (every worker slower
//!   in the same steps), which a model of independent workers leaves out.
//!
//! A statistic that a series does not define (fewer than [`MIN_STEPS`]
//! steps, or a constant series) is `None`, never NaN.

use super::Trace;

/// The fewest steps for which a correlation is computed: with two points
/// every Pearson correlation is ±1 and a lag-1 autocorrelation rests on one pair.
pub const MIN_STEPS: usize = 3;

/// A series whose values are all equal: correlations are undefined for it.
fn constant(xs: &[f64]) -> bool {
    xs.windows(2).all(|w| w[0] == w[1])
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// `xs`'s deviations from their mean, divided by the power of two at or
/// below the largest of them, so that their squares and products neither
/// underflow nor overflow (times of 1e-200 or 1e200 s). A correlation is
/// a ratio of such sums: dividing by a power of two is exact, so it is
/// the same, bit for bit, as from the raw deviations wherever those stay
/// in range, and defined where they do not.
fn deviations(xs: &[f64]) -> Vec<f64> {
    scaled_deviations(xs).0
}

/// [`deviations`] and the power of two they were divided by.
pub(crate) fn scaled_deviations(xs: &[f64]) -> (Vec<f64>, f64) {
    let m = mean(xs);
    let d: Vec<f64> = xs.iter().map(|x| x - m).collect();
    let largest = d.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    // The exponent bits alone: 2^⌊log₂ largest⌋ (0 for a subnormal).
    let power = f64::from_bits(largest.to_bits() & 0x7ff0_0000_0000_0000);
    let scale = if power > 0.0 {
        power
    } else {
        largest.max(f64::MIN_POSITIVE)
    };
    (d.into_iter().map(|x| x / scale).collect(), scale)
}

/// The lag-1 autocorrelation `r₁` of `xs`; `None` with fewer than
/// [`MIN_STEPS`] values or when they are all equal.
pub(crate) fn lag1_autocorrelation(xs: &[f64]) -> Option<f64> {
    if xs.len() < MIN_STEPS || constant(xs) {
        return None;
    }
    let d = deviations(xs);
    let ss: f64 = d.iter().map(|x| x * x).sum();
    let lagged: f64 = d.windows(2).map(|w| w[0] * w[1]).sum();
    Some(lagged / ss)
}

/// The Pearson correlation of `xs` and `ys` (of equal length); `None` with
/// fewer than [`MIN_STEPS`] values or when either series is constant. The
/// reference [`mean_cross_correlation`] is tested against.
#[cfg(test)]
fn pearson(xs: &[f64], ys: &[f64]) -> Option<f64> {
    assert_eq!(xs.len(), ys.len(), "pearson: series of different lengths");
    if xs.len() < MIN_STEPS || constant(xs) || constant(ys) {
        return None;
    }
    let (dxs, dys) = (deviations(xs), deviations(ys));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (&dx, &dy) in dxs.iter().zip(&dys) {
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// `P(flag at t+1 | flag at t)` over consecutive pairs of `flags`; `None`
/// when no flag is set before the last position.
pub(crate) fn stay_probability(flags: &[bool]) -> Option<f64> {
    let (mut from, mut stayed) = (0usize, 0usize);
    for w in flags.windows(2) {
        if w[0] {
            from += 1;
            stayed += usize::from(w[1]);
        }
    }
    (from > 0).then(|| stayed as f64 / from as f64)
}

/// One worker's times across the steps, in step order: the reference
/// [`worker_major`] is tested against.
#[cfg(test)]
fn worker_series(trace: &Trace, worker: usize) -> Vec<f64> {
    (0..trace.steps()).map(|t| trace.step(t)[worker]).collect()
}

/// Each worker's times across the steps, worker by worker: one pass over
/// the steps in order, each step's times appended to the workers' series.
pub(crate) fn worker_major(trace: &Trace) -> Vec<Vec<f64>> {
    let mut series: Vec<Vec<f64>> = (0..trace.workers())
        .map(|_| Vec::with_capacity(trace.steps()))
        .collect();
    for row in trace.all().chunks_exact(trace.workers()) {
        for (x, &time) in series.iter_mut().zip(row) {
            x.push(time);
        }
    }
    series
}

/// The median of `xs` (the mean of the two middle values for an even count).
///
/// The middle values are found by selection, not a sort: under
/// `f64::total_cmp`, a total order, they are the sorted copy's values.
pub fn median(xs: &[f64]) -> f64 {
    median_in(xs, &mut Vec::new())
}

/// [`median`], copying `xs` into `copy` (cleared first), so that the
/// medians of many rows take one allocation.
pub(crate) fn median_in(xs: &[f64], copy: &mut Vec<f64>) -> f64 {
    copy.clear();
    copy.extend_from_slice(xs);
    let n = copy.len();
    let (below, &mut upper, _) = copy.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let lower = below.iter().copied().max_by(f64::total_cmp).expect("n ≥ 2");
        0.5 * (lower + upper)
    }
}

/// Each time divided by its step's median over the workers, steps × workers
/// row-major as [`Trace::all`].
pub fn relative_to_step_median(trace: &Trace) -> Vec<f64> {
    (0..trace.steps())
        .flat_map(|t| {
            let step = trace.step(t);
            let m = median(step);
            step.iter().map(move |x| x / m)
        })
        .collect()
}

/// Whether each worker is among the `s` slowest of each step (ties go to
/// the lower worker index): worker by worker, step by step.
pub fn slowest(trace: &Trace, s: usize) -> Vec<Vec<bool>> {
    let mut flags = vec![vec![false; trace.steps()]; trace.workers()];
    let s = s.min(trace.workers());
    if s == 0 {
        return flags;
    }
    let mut order: Vec<usize> = (0..trace.workers()).collect();
    for (t, step) in (0..trace.steps()).map(|t| (t, trace.step(t))) {
        // Slowest first, ties to the lower index: a total order, so the
        // first s after selection are the first s of the sorted order.
        order.select_nth_unstable_by(s - 1, |&a, &b| step[b].total_cmp(&step[a]).then(a.cmp(&b)));
        for &w in &order[..s] {
            flags[w][t] = true;
        }
    }
    flags
}

/// Ranks by mean, 1 = the largest; ties go to the lower index.
pub(crate) fn ranks_by_mean(means: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..means.len()).collect();
    order.sort_by(|&a, &b| means[b].total_cmp(&means[a]).then(a.cmp(&b)));
    let mut ranks = vec![0; means.len()];
    for (r, &w) in order.iter().enumerate() {
        ranks[w] = r + 1;
    }
    ranks
}

/// The statistics of a trace before its model: per worker and trace-wide
/// (module docs).
pub(crate) struct Statistics {
    /// Each worker's mean time.
    pub(crate) means: Vec<f64>,
    /// Each worker's rank by mean ([`ranks_by_mean`]).
    pub(crate) ranks: Vec<usize>,
    /// Whether each worker is among the s slowest of each step ([`slowest`]).
    pub(crate) slowest: Vec<Vec<bool>>,
    /// Each worker's lag-1 autocorrelation.
    pub(crate) autocorrelations: Vec<Option<f64>>,
    /// [`mean_cross_correlation`]: the mean and the pairs behind it.
    pub(crate) cross_correlation: (Option<f64>, usize),
}

impl Statistics {
    /// The statistics of `trace`, whose times `series` holds worker by
    /// worker, with the `s` slowest workers of a step. The cross-worker
    /// correlations (O(n²·T), one thread) run beside the rest.
    pub(crate) fn new(trace: &Trace, series: &[Vec<f64>], s: usize) -> Self {
        let (cross_correlation, (means, slowest, autocorrelations)) = rayon::join(
            || mean_cross_correlation(series),
            || {
                let means: Vec<f64> = series.iter().map(|x| mean(x)).collect();
                let autocorrelations = series.iter().map(|x| lag1_autocorrelation(x)).collect();
                (means, slowest(trace, s), autocorrelations)
            },
        );
        Self {
            ranks: ranks_by_mean(&means),
            means,
            slowest,
            autocorrelations,
            cross_correlation,
        }
    }
}

/// Steps whose deviations [`mean_cross_correlation`] copies step-major at a time.
const CORRELATION_STEPS: usize = 256;

/// The mean over pairs of workers of the Pearson correlation of their
/// series, and the number of pairs that define one. Cost: O(n²·T).
///
/// Each pair's correlation has the bits of `pearson` (the tests' reference) on it: every
/// series' deviations and sum of squares are computed once (they do not
/// depend on the pair), and the sums of products Σ dx·dy of all pairs are
/// accumulated step by step, each in step order as `pearson` adds it, from
/// the deviations copied step-major a block of steps at a time, so that a
/// step's products are one pass over a row of workers.
pub fn mean_cross_correlation(series: &[Vec<f64>]) -> (Option<f64>, usize) {
    let defined: Vec<&Vec<f64>> = series.iter().filter(|x| x.len() >= MIN_STEPS && !constant(x)).collect();
    let m = defined.len();
    let deviations: Vec<Vec<f64>> = defined.iter().map(|x| deviations(x)).collect();
    let squares: Vec<f64> = deviations
        .iter()
        .map(|d| d.iter().fold(0.0, |s, x| s + x * x))
        .collect();
    // Pair (i, j), i < j, at row i's offset plus j − i − 1.
    let offsets: Vec<usize> = (0..m).map(|i| i * m - i * (i + 1) / 2).collect();
    let mut products = vec![0.0; m * m.saturating_sub(1) / 2];
    let steps = defined.first().map_or(0, |x| x.len());
    let mut rows = vec![0.0; CORRELATION_STEPS * m];
    for start in (0..steps).step_by(CORRELATION_STEPS) {
        let len = CORRELATION_STEPS.min(steps - start);
        for (k, d) in deviations.iter().enumerate() {
            for (t, &x) in d[start..start + len].iter().enumerate() {
                rows[t * m + k] = x;
            }
        }
        for row in rows.chunks_exact(m).take(len) {
            for (i, &di) in row.iter().enumerate() {
                let sums = &mut products[offsets[i]..offsets[i] + m - i - 1];
                for (s, &dj) in sums.iter_mut().zip(&row[i + 1..]) {
                    *s += di * dj;
                }
            }
        }
    }
    let mut sum = 0.0;
    for i in 0..m {
        for j in i + 1..m {
            let sxy = products[offsets[i] + j - i - 1];
            sum += (sxy / (squares[i] * squares[j]).sqrt()).clamp(-1.0, 1.0);
        }
    }
    let pairs = m * m.saturating_sub(1) / 2;
    ((pairs > 0).then(|| sum / pairs as f64), pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three workers, five steps; every value below is worked by hand.
    const SMALL: &str = "step,worker,time
0,0,1\n0,1,2\n0,2,3
1,0,1\n1,1,3\n1,2,2
2,0,4\n2,1,1\n2,2,2
3,0,1\n3,1,5\n3,2,2
4,0,2\n4,1,6\n4,2,1
";

    fn small() -> Trace {
        Trace::parse("small.csv", SMALL).unwrap()
    }

    #[test]
    fn slowest_and_stay_by_hand() {
        let t = small();
        let flags = slowest(&t, 1);
        // Slowest of each step: worker 2, 1, 0, 1, 1.
        assert_eq!(flags[0], [false, false, true, false, false]);
        assert_eq!(flags[1], [false, true, false, true, true]);
        assert_eq!(flags[2], [true, false, false, false, false]);
        // Worker 1 is slowest at steps 1 and 3 (step 4 is last): it stays once.
        assert_eq!(stay_probability(&flags[1]), Some(0.5));
        assert_eq!(stay_probability(&flags[0]), Some(0.0));
        assert_eq!(stay_probability(&flags[2]), Some(0.0));
        assert_eq!(stay_probability(&[false, false, true]), None);
        let two = slowest(&t, 2);
        assert_eq!(two[0], [false, false, true, false, true]);
        assert_eq!(two[2], [true, true, true, true, false]);
        assert_eq!(stay_probability(&two[2]), Some(0.75));
        // Ties go to the lower index.
        let tied = Trace::parse("t.csv", "step,worker,time\n0,0,1\n0,1,2\n0,2,2\n").unwrap();
        assert_eq!(slowest(&tied, 1), [[false], [true], [false]]);
    }

    /// Among many tied workers the s slowest are the s lowest indices,
    /// whatever s and wherever the ties sit among untied times.
    #[test]
    fn ties_among_the_slowest_go_to_the_lower_indices() {
        let workers = 24;
        let mut text = String::from("step,worker,time\n");
        for t in 0..4 {
            for w in 0..workers {
                // Step 0: all tied; then a tie of the odd workers above
                // the even ones, whose times fall with the index.
                let time = match t {
                    0 => 1.0,
                    _ if w % 2 == 1 => 5.0,
                    _ => 4.0 - w as f64 / 10.0,
                };
                text.push_str(&format!("{t},{w},{time}\n"));
            }
        }
        let trace = Trace::parse("t.csv", &text).unwrap();
        for s in [1, 3, 7, 12, 13, 20] {
            let flags = slowest(&trace, s);
            for (w, f) in flags.iter().enumerate() {
                assert_eq!(f[0], w < s, "step 0, s {s}, worker {w}");
                // The odd workers first, in order, then the even ones from 0.
                let place = if w % 2 == 1 { w / 2 } else { workers / 2 + w / 2 };
                assert_eq!(f[1], place < s, "step 1, s {s}, worker {w}");
            }
        }
    }

    #[test]
    fn correlations_of_extreme_scales() {
        // The same series at 1e-200 and 1e200 times: the same r₁ and the
        // same correlation, where the raw squares underflow or overflow.
        let x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        let y = [2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0];
        let r = lag1_autocorrelation(&x).unwrap();
        let c = pearson(&x, &y).unwrap();
        for k in [-200, 200] {
            let at = |v: &[f64]| v.iter().map(|t| t * 2f64.powi(k * 3)).collect::<Vec<_>>();
            assert_eq!(lag1_autocorrelation(&at(&x)), Some(r), "2^{}", k * 3);
            assert_eq!(pearson(&at(&x), &at(&y)), Some(c), "2^{}", k * 3);
        }
        let tiny: Vec<f64> = x.iter().map(|t| t * 1e-200).collect();
        assert!((lag1_autocorrelation(&tiny).unwrap() - r).abs() < 1e-12);
    }

    #[test]
    fn autocorrelation_by_hand() {
        // Worker 0: 1, 1, 4, 1, 2; mean 1.8, deviations -0.8 -0.8 2.2 -0.8 0.2,
        // Σd² = 6.8, Σ d_t d_{t+1} = 0.64 - 1.76 - 1.76 - 0.16 = -3.04.
        let x = worker_series(&small(), 0);
        assert_eq!(x, [1.0, 1.0, 4.0, 1.0, 2.0]);
        let by_worker: Vec<Vec<f64>> = (0..3).map(|w| worker_series(&small(), w)).collect();
        assert_eq!(worker_major(&small()), by_worker);
        let r = lag1_autocorrelation(&x).unwrap();
        assert!((r - (-3.04 / 6.8)).abs() < 1e-15, "{r}");
        assert!((r - (-38.0 / 85.0)).abs() < 1e-15, "{r}");
        // A strictly alternating series: r₁ = -(T-1)/T.
        let r = lag1_autocorrelation(&[1.0, 2.0, 1.0, 2.0]).unwrap();
        assert!((r + 0.75).abs() < 1e-15, "{r}");
        assert_eq!(lag1_autocorrelation(&[1.0, 2.0]), None);
        assert_eq!(lag1_autocorrelation(&[0.1; 7]), None);
    }

    #[test]
    fn correlation_by_hand() {
        let series = worker_major(&small());
        // Worker 2: 3 2 2 2 1, deviations 1 0 0 0 -1, Σd² = 2; with worker 0,
        // Σ dx·dy = -0.8 - 0.2 = -1, so r = -1/√(6.8·2).
        let r02 = pearson(&series[0], &series[2]).unwrap();
        assert!((r02 + 1.0 / 13.6f64.sqrt()).abs() < 1e-15, "{r02}");
        // Worker 1: 2 3 1 5 6, mean 3.4, deviations -1.4 -0.4 -2.4 1.6 2.6, Σd² = 17.2.
        // With worker 0: 1.12 + 0.32 - 5.28 - 1.28 + 0.52 = -4.6.
        let r01 = pearson(&series[0], &series[1]).unwrap();
        assert!((r01 + 4.6 / (6.8f64 * 17.2).sqrt()).abs() < 1e-15, "{r01}");
        // With worker 2: -1.4 - 2.6 = -4.
        let r12 = pearson(&series[1], &series[2]).unwrap();
        assert!((r12 + 4.0 / (17.2f64 * 2.0).sqrt()).abs() < 1e-15, "{r12}");
        let (m, pairs) = mean_cross_correlation(&series);
        assert_eq!(pairs, 3);
        assert!((m.unwrap() - (r01 + r02 + r12) / 3.0).abs() < 1e-15);
        assert_eq!(pearson(&[1.0, 2.0, 3.0], &[5.0; 3]), None);
        assert_eq!(mean_cross_correlation(&[vec![1.0, 2.0, 3.0], vec![2.0; 3]]), (None, 0));
    }

    #[test]
    fn means_ranks_and_medians() {
        let t = small();
        let means: Vec<f64> = worker_major(&t).iter().map(|x| mean(x)).collect();
        assert_eq!(means, [1.8, 3.4, 2.0]);
        assert_eq!(ranks_by_mean(&means), [3, 1, 2]);
        assert_eq!(ranks_by_mean(&[1.0, 1.0]), [1, 2]);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        let rel = relative_to_step_median(&t);
        assert_eq!(&rel[..3], &[0.5, 1.0, 1.5]);
        assert_eq!(&rel[12..], &[1.0, 3.0, 0.5]);
    }

    /// [`mean_cross_correlation`] against the mean of [`pearson`] over the
    /// pairs, bit for bit: series of several scales, a constant one, and
    /// more steps than one block of [`CORRELATION_STEPS`].
    #[test]
    fn cross_correlation_has_the_bits_of_pairwise_pearson() {
        let steps = 2 * CORRELATION_STEPS + 37;
        let mut series: Vec<Vec<f64>> = (0..9u64)
            .map(|w| {
                let scale = [1.0, 1e-3, 7e5][w as usize % 3];
                (0..steps as u64)
                    .map(|t| scale * (((t * 2_654_435_761 + w * 40_503) % 1_000) as f64 * 0.013 + 0.5))
                    .collect()
            })
            .collect();
        series.insert(4, vec![2.5; steps]);
        let (mut sum, mut pairs) = (0.0, 0);
        for (i, a) in series.iter().enumerate() {
            for b in &series[i + 1..] {
                if let Some(r) = pearson(a, b) {
                    sum += r;
                    pairs += 1;
                }
            }
        }
        let (mean, counted) = mean_cross_correlation(&series);
        assert_eq!(counted, pairs);
        assert_eq!(mean.map(f64::to_bits), Some((sum / pairs as f64).to_bits()));
    }
}
