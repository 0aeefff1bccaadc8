//! The paired 95% intervals of `speedup` and `p99_speedup` cover the exact
//! speedups at their nominal rate: 400 independent runs (seeds 0..400) of
//! n = 6 exponential workers under the fixed load, where the exact values
//! are harmonic numbers (means) and binomial tails (p99s). crc pairs with
//! the uncoded time through the same workers' order statistics, frc through
//! the maximum's quantile (a different coupling, so a different pairing).
//!
//! Each run's coverage is a Bernoulli(0.95) draw, so the count over 400 runs
//! has mean 380 and standard error √(400 · 0.95 · 0.05) = 4.36; it must lie
//! within 3.5 of them, [365, 395]. An interval that ignored the pairing
//! (treating the two estimates as independent) covers in every run, as does
//! one twice too wide; one half as wide covers about 68%.

use gcsim::dist::Dist;
use gcsim::engine::{self, Silent};
use gcsim::load::LoadModel;
use gcsim::report;
use gcsim::scheme::SchemeKind;
use gcsim::study::Study;

use super::{harmonic, iteration_cdf, scheme, worker_cdf};

const RUNS: u64 = 400;
const N: usize = 6;
/// The straggler codes of the study: crc and frc at two tolerances each.
const CODES: [(SchemeKind, usize); 4] = [
    (SchemeKind::Crc, 1),
    (SchemeKind::Crc, 3),
    (SchemeKind::Frc, 1),
    (SchemeKind::Frc, 2),
];

/// The t in [0, hi] at which a continuous increasing `cdf` reaches `q`, by bisection.
fn invert(cdf: impl Fn(f64) -> f64, q: f64, hi: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, hi);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < q { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

fn study(trials: u64, seed: u64) -> Study {
    let schemes = CODES
        .iter()
        .map(|&(kind, s)| scheme(kind, N, Some(s), None, None))
        .collect();
    Study::new(N, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, trials, seed).unwrap()
}

/// Coverage counts over the runs, per tolerance: (speedup, p99 speedup).
fn coverage(trials: u64) -> Vec<(u64, u64)> {
    let dist = Dist::exp(1.0).unwrap();
    let p99 = |kind, s: usize| {
        let code = scheme(kind, N, Some(s), None, None);
        invert(
            iteration_cdf(&code, worker_cdf(&dist, LoadModel::Fixed, 1.0)),
            0.99,
            100.0,
        )
    };
    let exact: Vec<(f64, f64)> = CODES
        .iter()
        .map(|&(kind, s)| {
            let mean = match kind {
                SchemeKind::Frc => harmonic(N / (s + 1)) / (s + 1) as f64,
                _ => harmonic(N) - harmonic(s),
            };
            (harmonic(N) / mean, p99(SchemeKind::Crc, 0) / p99(kind, s))
        })
        .collect();
    count_coverage(&exact, |seed| study(trials, seed))
}

/// How often each code's paired intervals cover `exact` (speedup, p99
/// speedup) over the runs of `study(seed)`.
fn count_coverage(exact: &[(f64, f64)], study: impl Fn(u64) -> Study) -> Vec<(u64, u64)> {
    let mut counts = vec![(0, 0); exact.len()];
    for seed in 0..RUNS {
        let study = study(seed);
        let rows = report::rows(&study, &engine::simulate(&study, &Silent));
        for ((row, &(mean, p99)), count) in rows.iter().zip(exact).zip(&mut counts) {
            let covers = |lo: Option<f64>, hi: Option<f64>, x: f64| u64::from(lo.unwrap() <= x && x <= hi.unwrap());
            count.0 += covers(row.speedup_ci95_low, row.speedup_ci95_high, mean);
            count.1 += covers(row.p99_speedup_ci95_low, row.p99_speedup_ci95_high, p99);
        }
    }
    counts
}

fn check(trials: u64) {
    check_counts(trials, "", coverage(trials));
}

fn check_counts(trials: u64, model: &str, counts: Vec<(u64, u64)>) {
    for ((kind, s), (mean, p99)) in CODES.iter().zip(counts) {
        for (what, covered) in [("speedup", mean), ("p99_speedup", p99)] {
            eprintln!("{what} of {kind} s={s}{model} at {trials} trials: covered in {covered} of {RUNS} runs");
            assert!(
                (365..=395).contains(&covered),
                "{what} of {kind} s={s}{model} at {trials} trials: covered in {covered} of {RUNS} runs"
            );
        }
    }
}

/// Runs no longer than the pilot: every value is kept, the pairing is
/// measured on all of them.
#[test]
fn paired_intervals_cover_in_runs_within_the_pilot() {
    check(4000);
}

/// Whole additive loads over exponential units pair each load's Erlang
/// quantile of the shared order statistics with the uncoded maximum (a
/// coupling other than the draw path's shared units): the intervals still
/// cover the exact speedups, E[X_(n)]/E[T] and the p99 ratio of Gamma
/// binomial tails, integrated and inverted numerically.
#[test]
fn paired_intervals_cover_under_erlang_loads() {
    let dist = Dist::exp(1.0).unwrap();
    let counts = coverage_of_slot_laws(
        |seed, schemes| Study::new(N, dist, LoadModel::Additive, schemes, 4000, seed).unwrap(),
        |code| Box::new(worker_cdf(&dist, LoadModel::Additive, code.load())),
    );
    check_counts(4000, " (additive)", counts);
}

/// Exponential transfers on dedicated links pair each configuration's
/// hypoexponential arrival quantile of the shared order statistics with
/// the uncoded one: the intervals cover the exact speedups, from the
/// arrival CDF 1 − (a e^(−t/a) − b e^(−t/b))/(a − b) (worker mean a = 1,
/// transfer mean b = 1/2 under `fixed`).
#[test]
fn paired_intervals_cover_with_hypoexponential_arrivals() {
    use gcsim::comm::{Comm, Link};
    let comm = Comm::new(None, Some(Dist::exp(2.0).unwrap()), Link::Dedicated, 0.0).unwrap();
    let (a, b) = (1.0, 0.5);
    let counts = coverage_of_slot_laws(
        |seed, schemes| {
            Study::new(N, Dist::exp(1.0).unwrap(), LoadModel::Fixed, schemes, 4000, seed)
                .unwrap()
                .with_comm(comm)
        },
        |_| {
            Box::new(move |t: f64| {
                if t <= 0.0 {
                    0.0
                } else {
                    1.0 - (a * (-t / a).exp() - b * (-t / b).exp()) / (a - b)
                }
            })
        },
    );
    check_counts(4000, " (transfers)", counts);
}

/// Coverage counts of the codes' paired intervals over the runs of
/// `study(seed, schemes)`, against the exact speedups of a worker (or
/// arrival) CDF per configuration, `worker(code)`.
fn coverage_of_slot_laws<'a>(
    study: impl Fn(u64, Vec<gcsim::scheme::Scheme>) -> Study,
    worker: impl Fn(&gcsim::scheme::Scheme) -> Box<dyn Fn(f64) -> f64 + 'a>,
) -> Vec<(u64, u64)> {
    let law = |kind, s: usize| {
        let code = scheme(kind, N, Some(s), None, None);
        let cdf = iteration_cdf(&code, worker(&code));
        (super::mean_from_cdf(&cdf, 0.0, 200.0), invert(&cdf, 0.99, 200.0))
    };
    let uncoded = law(SchemeKind::Uncoded, 0);
    let exact: Vec<(f64, f64)> = CODES
        .iter()
        .map(|&(kind, s)| {
            let (mean, p99) = law(kind, s);
            (uncoded.0 / mean, uncoded.1 / p99)
        })
        .collect();
    let schemes: Vec<_> = CODES
        .iter()
        .map(|&(kind, s)| scheme(kind, N, Some(s), None, None))
        .collect();
    count_coverage(&exact, |seed| study(seed, schemes.clone()))
}

/// Longer runs: the pairing is measured on the pilot's 65 536 trials, the
/// standard errors on all.
#[test]
fn paired_intervals_cover_in_runs_beyond_the_pilot() {
    check(100_000);
}

/// A run long enough to take its windows from the exact law has no pilot:
/// its first 16 384 trials are simulated again, the same trials a run of
/// 16 384 holds, and a run of one chunk pairs on that chunk.
#[test]
fn the_pairing_without_a_pilot_is_the_pilots() {
    let long = study(8 * 65_536, 7);
    let short = study(16_384, 7);
    let (long, short) = (engine::simulate(&long, &Silent), engine::simulate(&short, &Silent));
    assert_eq!(long.pairing, short.pairing);
    let one_chunk = engine::simulate(&study(8192, 7), &Silent);
    assert_ne!(one_chunk.pairing, short.pairing);
    for p in &long.pairing {
        let (mean, p99) = (p.mean.unwrap(), p.p99.unwrap());
        // frc's p99 indicators coincide with the uncoded one's (1).
        assert!(mean > 0.0 && mean < 1.0 && p99 > 0.0 && p99 <= 1.0, "{p:?}");
    }
}

/// The pairing against exact correlations. With exponential workers under
/// the fixed load the k-th order statistic is Σ_{j≤k} E_j/(n−j+1) (Rényi),
/// so corr(X_(k), X_(n)) = √(Σ_{j≤k} (n−j+1)⁻² / Σ_{j≤n} (n−j+1)⁻²); and
/// P(X_(k) ≤ x, X_(n) ≤ u) = Σ_{j≥k} C(n, j) G(x)^j (G(u) − G(x))^{n−j}
/// for x ≤ u. Both are measured on the pilot's 65 536 trials, where the
/// correlation of the means has a standard error of about (1 − ρ²)/256 and
/// that of the p99 indicators about √(q/65 536)/(0.99 · 0.01), q the
/// probability that both times exceed their p99; the tolerance is 4.5 of
/// them.
#[test]
fn the_pairing_is_the_exact_correlation() {
    let out = engine::simulate(&study(100_000, 11), &Silent);
    let g_of = |q: f64, k: usize| {
        // G(x) at which P(X_(k) ≤ x) = P(Bin(n, G) ≥ k) = q.
        invert(
            |g| {
                (k..=N)
                    .map(|j| binomial(N, j) * g.powi(j as i32) * (1.0 - g).powi((N - j) as i32))
                    .sum()
            },
            q,
            1.0,
        )
    };
    let gu = g_of(0.99, N);
    for (&(kind, s), pairing) in CODES.iter().zip(&out.pairing) {
        if kind == SchemeKind::Frc {
            frc_pairing(s + 1, pairing.mean.unwrap(), pairing.p99.unwrap());
            continue;
        }
        let k = N - s;
        let var = |k: usize| (1..=k).map(|j| ((N - j + 1) as f64).powi(-2)).sum::<f64>();
        let mean = (var(k) / var(N)).sqrt();
        let gx = g_of(0.99, k);
        let joint: f64 = (k..=N)
            .map(|j| binomial(N, j) * gx.powi(j as i32) * (gu - gx).powi((N - j) as i32))
            .sum();
        let p99 = (joint - 0.99 * 0.99) / (0.99 * 0.01);
        let both_above = 1.0 - 2.0 * 0.99 + joint;
        let (m, q) = (pairing.mean.unwrap(), pairing.p99.unwrap());
        let tol_mean = 4.5 * (1.0 - mean * mean) / 256.0;
        let tol_p99 = 4.5 * (both_above / 65_536.0).sqrt() / (0.99 * 0.01);
        assert!(
            (m - mean).abs() < tol_mean,
            "crc s={s}: mean correlation {m}, exact {mean}"
        );
        assert!(
            (q - p99).abs() < tol_p99,
            "crc s={s}: p99 correlation {q}, exact {p99} ± {tol_p99}"
        );
    }
}

/// frc's pairing with the uncoded time, groups of `r`: its time is the
/// maximum's quantile transform f(M) = −ln(1 − (1 − e^(−M))^r)/r, so the two
/// p99 indicators coincide (correlation 1) and the means' correlation is
/// corr(f(M), M) under M's density n(1 − e^(−x))^(n−1)e^(−x), integrated
/// here by Simpson's rule on [0, 60] (tail below 1e-24). Tolerances as in
/// [`the_pairing_is_the_exact_correlation`].
fn frc_pairing(r: usize, mean: f64, p99: f64) {
    let f = |x: f64| -(-(r as f64 * (-(-x).exp()).ln_1p()).exp_m1()).ln() / r as f64;
    let density = |x: f64| N as f64 * (1.0 - (-x).exp()).powi(N as i32 - 1) * (-x).exp();
    let steps = 60_000;
    let h = 60.0 / steps as f64;
    let mut m = [0.0; 5]; // E[M], E[M²], E[f], E[f²], E[M f]
    for i in 0..=steps {
        let x = i as f64 * h;
        let w = h / 3.0
            * if i == 0 || i == steps {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
        let (d, y) = (density(x) * w, f(x));
        for (acc, v) in m.iter_mut().zip([x, x * x, y, y * y, x * y]) {
            *acc += d * v;
        }
    }
    let exact = (m[4] - m[0] * m[2]) / ((m[1] - m[0] * m[0]) * (m[3] - m[2] * m[2])).sqrt();
    assert!(exact > 0.8 && exact < 1.0, "frc r={r}: exact correlation {exact}");
    let tol = 4.5 * (1.0 - exact * exact) / 256.0;
    assert!(
        (mean - exact).abs() < tol,
        "frc r={r}: mean correlation {mean}, exact {exact}"
    );
    assert!((p99 - 1.0).abs() < 1e-3, "frc r={r}: p99 correlation {p99}, exact 1");
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).map(|i| (n - i) as f64 / (i + 1) as f64).product()
}
