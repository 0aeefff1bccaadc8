//! The warning that some workers differ from the rest: slow in nearly every
//! step, or with a mean far above the others'. A Markov chain that every
//! worker follows moves each worker in and out of the slow state; a worker
//! that never leaves it, or a whole group of such workers, is heterogeneity
//! between workers, which worker classes (`--workers COUNT:DIST`) describe.

use super::{best_fit, stats};

/// What the warning reads of one worker.
#[derive(Debug, Clone, Copy)]
pub struct Worker<'a> {
    /// The worker, as the trace names it.
    pub id: u64,
    /// Its mean time over the complete steps.
    pub mean: f64,
    /// The lag-1 autocorrelation of its times, where there is one.
    pub autocorrelation: Option<f64>,
    /// The share of steps the fitted model puts in the slow state, where
    /// the model has one.
    pub slow_state_share: Option<f64>,
    /// Its time in each complete step.
    pub times: &'a [f64],
}

/// A worker slow in at least this share of the steps is persistently slow.
pub const PERSISTENT_SHARE: f64 = 0.9;

/// A worker's mean is far above the others' when it is at least this factor
/// above the median worker mean and [`Z`] of its standard errors above it.
pub const FAR_ABOVE: f64 = 1.1;

/// Standard errors by which a worker's mean must exceed the median one.
pub const Z: f64 = 4.0;

/// The standard error of a worker's mean time over T steps, allowing for
/// the autocorrelation r of its times: `s/√T · √((1 + r)/(1 − r))`, the
/// variance inflation of an AR(1) series, with r taken within [0, 0.9].
///
/// The deviations are divided by a power of two first (see
/// `stats::scaled_deviations`), so that times of 1e-200 s do not square
/// to 0: the same value, bit for bit, where they do not.
fn standard_error(worker: &Worker) -> f64 {
    let t = worker.times.len() as f64;
    let (d, scale) = stats::scaled_deviations(worker.times);
    let var = d.iter().map(|x| x * x).sum::<f64>() / (t - 1.0);
    let r = worker.autocorrelation.unwrap_or(0.0).clamp(0.0, 0.9);
    (var / t * (1.0 + r) / (1.0 - r)).sqrt() * scale
}

/// Worker ids as a short list: `3, 17, 40` or `3, 17, 40 and 9 more`.
fn id_list(ids: &[u64]) -> String {
    let shown: Vec<String> = ids.iter().take(8).map(u64::to_string).collect();
    match ids.len() {
        0..=8 => shown.join(", "),
        n => format!("{} and {} more", shown.join(", "), n - 8),
    }
}

/// The warning, when some workers are slow in nearly every step
/// ([`PERSISTENT_SHARE`]) or have a mean far above the others' (at least
/// [`FAR_ABOVE`] times the median worker mean and [`Z`] standard errors
/// above it): a difference between workers, which a Markov chain shared by
/// all workers describes poorly.
/// `steps` counts the trace's complete steps.
pub fn warning(steps: usize, workers: &[Worker]) -> Option<String> {
    let n = workers.len();
    let mut flagged = vec![false; n];
    let mut slow_held = None;
    if steps >= stats::MIN_STEPS {
        let shares: Vec<Option<f64>> = workers.iter().map(|w| w.slow_state_share).collect();
        for (w, share) in shares.iter().enumerate() {
            flagged[w] |= share.is_some_and(|s| s >= PERSISTENT_SHARE);
        }
        let total: f64 = shares.iter().flatten().sum();
        if total > 0.0 {
            let held: f64 = shares
                .iter()
                .zip(&flagged)
                .filter(|(_, f)| **f)
                .map(|(s, _)| s.unwrap_or(0.0))
                .sum();
            slow_held = Some(held / total);
        }
    }
    if n >= 3 && steps >= stats::MIN_STEPS {
        let means: Vec<f64> = workers.iter().map(|w| w.mean).collect();
        let median = stats::median(&means);
        for (w, worker) in workers.iter().enumerate() {
            let excess = worker.mean - median;
            flagged[w] |= worker.mean >= FAR_ABOVE * median && excess > Z * standard_error(worker);
        }
    }
    let ids: Vec<u64> = (0..n).filter(|&w| flagged[w]).map(|w| workers[w].id).collect();
    if ids.is_empty() {
        return None;
    }
    let (slow_times, other_times): (Vec<f64>, Vec<f64>) = {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (w, worker) in workers.iter().enumerate() {
            if flagged[w] { &mut a } else { &mut b }.extend_from_slice(worker.times);
        }
        (a, b)
    };
    let law = |times: &[f64]| best_fit(times).map_or_else(|_| "DIST".to_string(), |f| f.dist);
    let classes = if other_times.is_empty() {
        String::new()
    } else {
        format!(
            "; consider worker classes, e.g. --workers {}:{} --workers {}:{}",
            n - ids.len(),
            law(&other_times),
            ids.len(),
            law(&slow_times)
        )
    };
    let (are, hold) = if ids.len() == 1 {
        ("is", "holds")
    } else {
        ("are", "hold")
    };
    let held = slow_held.map_or(String::new(), |h| {
        format!(" and {hold} {:.0}% of the slow-state steps", 100.0 * h)
    });
    let dominate = if slow_held.is_some_and(|h| h >= 0.5) {
        "persistently slow workers dominate: "
    } else {
        ""
    };
    Some(format!(
        "{dominate}{} of the {n} workers ({}) {are} slow in at least {:.0}% of the steps or far above the \
         others' mean time{held}: that is a difference between workers (heterogeneity), not a Markov \
         chain that every worker follows, and persist/p_slow describe it poorly{classes}",
        ids.len(),
        id_list(&ids),
        100.0 * PERSISTENT_SHARE
    ))
}

#[cfg(test)]
mod tests {
    use super::id_list;
    use crate::trace::{Trace, TraceReport};

    /// Ten workers over 60 steps, log-normal times (log deviation `sigma`)
    /// at a fixed seed; `slow` are `factor` times slower in every step.
    fn trace(slow: &[usize], factor: f64, sigma: f64) -> Trace {
        use rand::SeedableRng;
        use rand_distr::{Distribution, Normal};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let noise = Normal::new(0.0f64, sigma).unwrap();
        let mut text = String::from("step,worker,time\n");
        for t in 0..60 {
            for w in 0..10 {
                let x = noise.sample(&mut rng).exp() * if slow.contains(&w) { factor } else { 1.0 };
                text.push_str(&format!("{t},{w},{x}\n"));
            }
        }
        Trace::parse("t.csv", &text).unwrap()
    }

    fn warning_of(trace: &Trace) -> Option<String> {
        let report = TraceReport::new(trace, None, 0).unwrap();
        let found: Vec<&String> = report.warnings.iter().filter(|w| w.contains("heterogeneity")).collect();
        assert!(found.len() <= 1);
        found.first().map(|w| w.to_string())
    }

    #[test]
    fn a_worker_slow_in_every_step_is_heterogeneity() {
        let w = warning_of(&trace(&[3], 2.0, 0.05)).unwrap();
        assert!(
            w.starts_with("persistently slow workers dominate: 1 of the 10 workers (3) is slow"),
            "{w}"
        );
        assert!(w.contains("holds 100% of the slow-state steps"), "{w}");
        assert!(w.contains("--workers 9:") && w.contains(" --workers 1:"), "{w}");
        let w = warning_of(&trace(&[2, 5], 3.0, 0.05)).unwrap();
        assert!(w.contains("2 of the 10 workers (2, 5) are slow"), "{w}");
    }

    /// Slower by 15%, within the noise of a step (σ = 0.1): no slow state,
    /// but a mean beyond the far-out fence of the others'.
    #[test]
    fn a_mean_far_above_the_others_is_heterogeneity() {
        let t = trace(&[8], 1.15, 0.1);
        let report = TraceReport::new(&t, None, 0).unwrap();
        assert!(!report.model.slow_state, "{:?}", report.model);
        let w = warning_of(&t).unwrap();
        assert!(w.starts_with("1 of the 10 workers (8) is slow"), "{w}");
        assert!(!w.contains("slow-state steps"), "{w}");
    }

    #[test]
    fn alike_workers_draw_no_warning() {
        for sigma in [0.05, 0.1, 0.3] {
            assert_eq!(warning_of(&trace(&[], 1.0, sigma)), None, "{sigma}");
        }
    }

    #[test]
    fn long_id_lists_are_cut() {
        assert_eq!(id_list(&[3, 17]), "3, 17");
        assert_eq!(
            id_list(&(0..12).collect::<Vec<_>>()),
            "0, 1, 2, 3, 4, 5, 6, 7 and 4 more"
        );
    }
}
