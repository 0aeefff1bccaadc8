//! Recovery of the two-state model from synthetic traces drawn from it at
//! fixed seeds: each estimate within 3 of its bootstrap standard errors of
//! the truth, and the errors small enough to mean something.

use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Trace, TraceReport};

/// The truth behind a synthetic trace.
struct Truth {
    p_slow: f64,
    slowdown: f64,
    rho: f64,
}

/// A trace of `workers` independent chains over `steps` steps, each
/// starting in the stationary law: `P(N→S) = p(1 − ρ)`, `P(S→S) = p + ρ(1 − p)`;
/// a time is `e^(0.1·Z)` (log-normal, μ = 0, σ = 0.1), times `slowdown` when slow.
fn synthetic(truth: &Truth, workers: usize, steps: usize, seed: u64) -> Trace {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let normal = Normal::new(0.0f64, 0.1).unwrap();
    let (p, rho) = (truth.p_slow, truth.rho);
    let (enter, stay) = (p * (1.0 - rho), p + rho * (1.0 - p));
    let mut text = String::from("step,worker,time\n");
    for w in 0..workers {
        let mut slow = rand::RngExt::random::<f64>(&mut rng) < p;
        for t in 0..steps {
            if t > 0 {
                let u: f64 = rand::RngExt::random(&mut rng);
                slow = u < if slow { stay } else { enter };
            }
            let x = normal.sample(&mut rng).exp() * if slow { truth.slowdown } else { 1.0 };
            text.push_str(&format!("{t},{w},{x}\n"));
        }
    }
    Trace::parse("synthetic.csv", &text).unwrap()
}

fn within_3_se(label: &str, got: Option<f64>, se: Option<f64>, truth: f64) {
    let (got, se) = (got.unwrap(), se.unwrap());
    eprintln!("{label}: {got:.4} ± {se:.4} (truth {truth})");
    assert!(se > 0.0, "{label}: standard error {se}");
    assert!(
        (got - truth).abs() < 3.0 * se,
        "{label}: {got} vs {truth}: {:.2} standard errors",
        (got - truth) / se
    );
}

fn recovers(truth: Truth, seed: u64) -> TraceReport {
    let trace = synthetic(&truth, 64, 500, seed);
    let report = TraceReport::new(&trace, None, 0).unwrap();
    let m = &report.model;
    assert!(m.slow_state, "{:?}", report.notes);
    within_3_se("p_slow", m.p_slow, m.p_slow_se, truth.p_slow);
    within_3_se("slowdown", m.slowdown, m.slowdown_se, truth.slowdown);
    within_3_se("persist", m.persist, m.persist_se, truth.rho);
    assert!(m.persist_se.unwrap() < 0.1 && m.p_slow_se.unwrap() < 0.02 && m.slowdown_se.unwrap() < 0.2);
    // The base law: the log-normal of the normal-state times.
    let base = m.base.as_deref().unwrap();
    let law: crate::dist::Dist = base.parse().unwrap();
    let crate::dist::Base::LogNormal { mu, sigma } = law.base() else {
        panic!("base law {base}")
    };
    assert!(mu.abs() < 0.005 && (sigma - 0.1).abs() < 0.005, "{base}");
    assert!(
        report.warnings.iter().all(|w| !w.contains("heterogeneity")),
        "{:?}",
        report.warnings
    );
    report
}

#[test]
fn recovers_persistent_stragglers() {
    let report = recovers(
        Truth {
            p_slow: 0.05,
            slowdown: 4.0,
            rho: 0.8,
        },
        11,
    );
    // The --dist string carries the estimate, to four significant digits.
    let fitted = report.fitted.unwrap();
    let persist: f64 = fitted.split_once(",persist=").unwrap().1.parse().unwrap();
    assert!(fitted.starts_with("lognormal:"), "{fitted}");
    assert!((persist - report.model.persist.unwrap()).abs() < 1e-3, "{fitted}");
}

#[test]
fn recovers_independent_stragglers() {
    recovers(
        Truth {
            p_slow: 0.05,
            slowdown: 4.0,
            rho: 0.0,
        },
        12,
    );
}

/// No slow state in the model: one log-normal law, and the report says so.
#[test]
fn finds_no_slow_state_without_stragglers() {
    let trace = synthetic(
        &Truth {
            p_slow: 0.0,
            slowdown: 1.0,
            rho: 0.0,
        },
        32,
        200,
        13,
    );
    let report = TraceReport::new(&trace, None, 0).unwrap();
    let m = &report.model;
    assert!(!m.slow_state);
    assert_eq!((m.p_slow, m.slowdown, m.persist), (None, None, None));
    assert!(
        report.notes.iter().any(|n| n.contains("no slow state")),
        "{:?}",
        report.notes
    );
    let fitted = report.fitted.unwrap();
    assert!(!fitted.contains("p_slow") && !fitted.contains("persist"), "{fitted}");
    assert!(report.per_worker.iter().all(|r| r.slow_state_share.is_none()));
}

/// Counts the fits a progress bar would hear of.
#[derive(Default)]
struct Fits(std::sync::atomic::AtomicU64);

impl crate::progress::Progress for Fits {
    fn advance(&self, done: u64) {
        self.0.fetch_add(done, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A trace past the fitting bound (64 workers × 2000 steps): the model is
/// fitted on spread blocks of steps, says so in a note, and still recovers
/// the truth within 3 of the subsample's standard errors; the posterior
/// shares and the base law read every step.
#[test]
fn recovers_stragglers_from_the_subsample_of_a_large_trace() {
    let truth = Truth {
        p_slow: 0.05,
        slowdown: 4.0,
        rho: 0.8,
    };
    let trace = synthetic(&truth, 64, 2000, 14);
    let fits = Fits::default();
    let report = TraceReport::with_progress(&trace, None, 0, &fits).unwrap();
    // Every start and every bootstrap refit is reported, once.
    assert_eq!(fits.0.load(std::sync::atomic::Ordering::Relaxed), TraceReport::fits());
    let m = &report.model;
    assert!(m.slow_state, "{:?}", report.notes);
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("fitted on 512 of the 2000 steps")),
        "{:?}",
        report.notes
    );
    within_3_se("p_slow", m.p_slow, m.p_slow_se, truth.p_slow);
    within_3_se("slowdown", m.slowdown, m.slowdown_se, truth.slowdown);
    within_3_se("persist", m.persist, m.persist_se, truth.rho);
    // The base law's times: the normal-state times of every step, about
    // (1 − p_slow) of the 128 000.
    assert!(m.base_times > 115_000, "{}", m.base_times);
}

/// A trace of `workers` × `steps` i.i.d. times drawn from `law`: no
/// stragglers.
fn iid(law: impl Distribution<f64>, workers: usize, steps: usize, seed: u64) -> Trace {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut text = String::from("step,worker,time\n");
    for t in 0..steps {
        for w in 0..workers {
            text.push_str(&format!("{t},{w},{}\n", law.sample(&mut rng)));
        }
    }
    Trace::parse("iid.csv", &text).unwrap()
}

/// I.i.d. times have no stragglers: no slow state, no p_slow in the
/// fitted law, and the law's mean within 4 standard errors of the data's.
/// The log of an exponential time is left-skewed, and the best two-state
/// fit of it has a "slow" majority (p_slow ≈ 0.92, separation ≈ 3, BIC
/// favours it) but one mode: taken as stragglers it gave a base law fitted
/// to the lowest 8% of the times and a law whose mean was 0.64 of the data's.
#[test]
fn iid_times_have_no_stragglers_and_keep_their_mean() {
    let exp = rand_distr::Exp::new(1.0).unwrap();
    let lognormal = rand_distr::LogNormal::new(0.0, 0.5).unwrap();
    let cases = [
        ("exp 64 x 500", iid(exp, 64, 500, 15), true),
        ("exp 8 x 50", iid(exp, 8, 50, 16), true),
        ("lognormal 64 x 500", iid(lognormal, 64, 500, 17), false),
    ];
    for (label, trace, exp) in cases {
        let report = TraceReport::new(&trace, None, 0).unwrap();
        let m = &report.model;
        assert!(!m.slow_state, "{label}: {:?}", report.notes);
        assert_eq!((m.p_slow, m.slowdown, m.persist), (None, None, None), "{label}");
        let fitted = report.fitted.unwrap();
        assert!(
            !fitted.contains("p_slow") && !fitted.contains("persist"),
            "{label}: {fitted}"
        );
        assert_eq!(
            m.base_times,
            trace.all().len(),
            "{label}: the base law reads every time"
        );
        let note = report.notes.iter().find(|n| n.contains("no slow state")).unwrap();
        // The exponential's fit is rejected for its one mode (the log-normal's
        // may be too, beside BIC).
        assert!(!exp || note.contains("has one mode"), "{label}: {note}");
        let law: crate::dist::Dist = fitted.parse().unwrap();
        let times = trace.all();
        let k = times.len() as f64;
        let mean = times.iter().sum::<f64>() / k;
        let sd = (times.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
        let z = (law.mean() - mean) / (sd / k.sqrt());
        assert!(
            z.abs() < 4.0,
            "{label}: {fitted} has mean {} against {mean}: z = {z:.2}",
            law.mean()
        );
    }
}
