//! The staleness drawn in law against subsets drawn one by one.

use super::*;
use rand::seq::SliceRandom;

/// The staleness drawn in law against K-async's subsets drawn one by
/// one (a uniformly random K of n workers per update, each worker's
/// last update tracked): the mean and the second moment of the total
/// over the recorded update's K gradients, within 5 standard errors, and
/// the mean per gradient against Σ_{m=1}^{W} (1 − K/n)^m. A short
/// warm-up, so that gradients from the start (stale by W) are common.
#[test]
fn staleness_in_law_matches_subsets_drawn_one_by_one() {
    let draws = 100_000;
    for (n, k, warmup) in [(10u64, 2u64, 3u64), (7, 3, 5), (12, 12, 4), (9, 1, 6)] {
        let mut rng = trial_rng(5, n * 100 + k);
        let in_law: Vec<f64> = (0..draws)
            .map(|_| staleness_in_law(n, k, warmup, &mut rng) as f64)
            .collect();
        let mut workers: Vec<u64> = (0..n).collect();
        let by_subsets: Vec<f64> = (0..draws)
            .map(|_| {
                // Each worker's model: 0, or the last update it was in + 1.
                let mut model = vec![0; n as usize];
                for update in 0..warmup {
                    workers.shuffle(&mut rng);
                    for &w in &workers[..k as usize] {
                        model[w as usize] = update + 1;
                    }
                }
                workers.shuffle(&mut rng);
                workers[..k as usize]
                    .iter()
                    .map(|&w| (warmup - model[w as usize]) as f64)
                    .sum()
            })
            .collect();
        let moments = |xs: &[f64], p: i32| {
            let m = xs.iter().map(|x| x.powi(p)).sum::<f64>() / xs.len() as f64;
            let v = xs.iter().map(|x| (x.powi(p) - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
            (m, (v / xs.len() as f64).sqrt())
        };
        for p in [1, 2] {
            let ((a, sa), (b, sb)) = (moments(&in_law, p), moments(&by_subsets, p));
            let se = (sa * sa + sb * sb).sqrt();
            assert!(
                (a - b).abs() < 5.0 * se.max(1e-12),
                "n={n} K={k} W={warmup} moment {p}: {a} vs {b} ± {se}"
            );
        }
        let q = 1.0 - k as f64 / n as f64;
        let exact: f64 = (1..=warmup).map(|m| q.powi(m as i32)).sum();
        let (m, se) = moments(&in_law, 1);
        assert!(
            (m / k as f64 - exact).abs() < 5.0 * se.max(1e-12) / k as f64,
            "n={n} K={k}: {m} vs {exact}"
        );
    }
}

#[test]
fn error_trials_follow_the_budget() {
    assert_eq!(error_trials(100_000, 54, 60), ERROR_TRIALS);
    assert_eq!(error_trials(500, 54, 60), 500);
    // 90 × 100: 6e9 / 810 000 = 7407 trials.
    assert_eq!(error_trials(100_000, 90, 100), 7407);
    assert_eq!(error_trials(100_000, 1900, 2000), MIN_ERROR_TRIALS);
    assert_eq!(error_trials(50, 1900, 2000), 50);
}
