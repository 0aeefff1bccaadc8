//! K-async and K-batch-async SGD (Dutta et al. 2018) against a simulation
//! written here another way (linear scans over the workers and the
//! gradients in flight, no event heap), and on exponential workers against
//! the closed forms of the time per update and of the staleness.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use gcsim::analytic;
use gcsim::load::LoadModel;
use gcsim::report::Row;
use gcsim::scheme::{Params, SchemeKind};

use super::timelines::{EXP, Law, Link1, MIXTURE, Net, SHIFTED, TRIALS, Z, agree, engine_rows, mean_and_se, scheme};

/// Trials of the engine's staleness (its tally runs on the first
/// `approx::ERROR_TRIALS` trials).
const STALENESS_TRIALS: f64 = gcsim::engine::approx::ERROR_TRIALS as f64;

/// The updates before the recorded one: about 8 gradients per worker.
fn warmup(n: usize, k: usize) -> u64 {
    (8 * n).div_ceil(k) as u64
}

/// One trial: the time from the last warm-up update to the next, and the
/// mean staleness of that update's K gradients.
fn reference(n: usize, k: usize, batch: bool, law: Law, net: Net, rng: &mut Xoshiro256PlusPlus) -> (f64, f64) {
    let warmup = warmup(n, k);
    // Each worker's end of computation (None while it waits, K-async), the
    // model it computes on, and the gradients travelling to the master.
    // Each worker's straggler state holds for all its gradients.
    let slow = law.states(n, rng);
    let mut busy_until: Vec<Option<f64>> = (0..n).map(|w| Some(law.draw(slow[w], rng))).collect();
    let mut model = vec![0_u64; n];
    let mut travelling: Vec<(f64, usize, u64)> = Vec::new();
    let mut link = Link1 { net, free: 0.0 };
    let (mut updates, mut last) = (0_u64, 0.0);
    let mut included: Vec<(usize, u64)> = Vec::new();
    loop {
        let done = (0..n)
            .filter_map(|w| busy_until[w].map(|t| (t, w)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let arrives = (0..travelling.len()).min_by(|&a, &b| travelling[a].0.total_cmp(&travelling[b].0));
        let gradient_first = match (done, arrives) {
            (Some((t, _)), Some(i)) => travelling[i].0 <= t,
            (None, Some(_)) => true,
            _ => false,
        };
        let (t, w, v) = if gradient_first {
            travelling.swap_remove(arrives.unwrap())
        } else {
            let (t, w) = done.unwrap();
            busy_until[w] = None;
            let v = model[w];
            if !matches!(net, Net::Free) {
                travelling.push((link.send(t), w, v));
                if batch {
                    model[w] = updates;
                    busy_until[w] = Some(t + law.draw(slow[w], rng));
                }
                continue;
            }
            (t, w, v)
        };
        included.push((w, v));
        if included.len() == k {
            if updates == warmup {
                let stale: u64 = included.iter().map(|&(_, v)| updates - v).sum();
                return (t - last, stale as f64 / k as f64);
            }
            updates += 1;
            last = t;
            if !batch {
                for &(p, _) in &included {
                    model[p] = updates;
                    busy_until[p] = Some(t + law.draw(slow[p], rng));
                }
            }
            included.clear();
        }
        if batch && !gradient_first {
            model[w] = updates;
            busy_until[w] = Some(t + law.draw(slow[w], rng));
        }
    }
}

fn kind(batch: bool) -> SchemeKind {
    if batch {
        SchemeKind::KBatchAsync
    } else {
        SchemeKind::KAsync
    }
}

fn with_k(k: usize) -> Params {
    Params {
        k: Some(k),
        ..Params::default()
    }
}

/// The engine's staleness against a mean `m` with standard error `se`,
/// the engine's own error estimated from the reference's spread `sd`.
fn staleness_agrees(what: &str, row: &Row, m: f64, se: f64, sd: f64) {
    let engine = row.staleness.expect("an asynchronous row has a staleness");
    if sd == 0.0 {
        assert_eq!(engine, m, "{what}: staleness without spread");
        return;
    }
    let se_engine = sd / STALENESS_TRIALS.sqrt();
    let z = (engine - m) / (se * se + se_engine * se_engine).sqrt();
    assert!(
        z.abs() < Z,
        "{what}: staleness {engine} ± {se_engine} vs {m} ± {se} (z = {z:.2})"
    );
}

/// The sample standard deviation.
fn sd(xs: &[f64]) -> f64 {
    mean_and_se(xs).1 * (xs.len() as f64).sqrt()
}

#[test]
fn asynchronous_sgd_matches_a_simulation_by_scans() {
    let n = 10;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let cases = [
        (3, false, MIXTURE, Net::Free),
        (3, true, MIXTURE, Net::Free),
        (4, false, SHIFTED, Net::Dedicated(0.3)),
        (4, true, SHIFTED, Net::Shared(0.05)),
        (2, true, MIXTURE, Net::Dedicated(0.5)),
        (5, false, MIXTURE, Net::Shared(0.1)),
    ];
    for (i, (k, batch, law, net)) in cases.into_iter().enumerate() {
        let what = format!("{} K={k} {net:?}", kind(batch));
        let (times, stale): (Vec<f64>, Vec<f64>) =
            (0..TRIALS).map(|_| reference(n, k, batch, law, net, &mut rng)).unzip();
        let rows = engine_rows(
            n,
            law,
            LoadModel::Scaled,
            net,
            vec![scheme(kind(batch), n, with_k(k))],
            70 + i as u64,
        );
        agree(&what, &rows[0], &times);
        let (m, se) = mean_and_se(&stale);
        staleness_agrees(&what, &rows[0], m, se, sd(&stale));
        assert_eq!(rows[0].data_fraction, Some(k as f64 / n as f64), "{what}");
        assert!(!rows[0].exact, "{what}");
    }
}

/// The closed forms, restated here as plain sums: the time per update of
/// K-async is the K-th of n Exp(μ) times, Σ_{i=n−K+1}^{n} 1/(iμ); that of
/// K-batch-async is Gamma(K, nμ), mean K/(nμ). Staleness: K-async
/// Σ_{j=1}^{W} (1 − K/n)^j; K-batch-async (1/K)·Σ_{m=1}^{WK} (1 − 1/n)^m.
#[test]
fn exponential_workers_meet_the_closed_forms() {
    let (n, rate) = (20, 2.0);
    let law = Law { rate, ..EXP };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(23);
    for batch in [false, true] {
        for k in [1, 5, 20] {
            let what = format!("{} K={k}", kind(batch));
            let w = warmup(n, k);
            let (mean, stale) = if batch {
                let q: f64 = 1.0 - 1.0 / n as f64;
                let sum: f64 = (1..=w * k as u64).map(|m| q.powi(m as i32)).sum();
                (k as f64 / (n as f64 * rate), sum / k as f64)
            } else {
                let q = 1.0 - k as f64 / n as f64;
                let time: f64 = (n - k + 1..=n).map(|i| 1.0 / (i as f64 * rate)).sum();
                (time, (1..=w).map(|j| q.powi(j as i32)).sum())
            };
            let scheme = scheme(kind(batch), n, with_k(k));
            let rows = engine_rows(n, law, LoadModel::Fixed, Net::Free, vec![scheme], 5 + k as u64);
            let row = &rows[0];
            assert!((row.analytic_mean.unwrap() - mean).abs() < 1e-12 * mean, "{what}");
            let z = (row.mean - mean) / row.std_err.unwrap();
            assert!(z.abs() < Z, "{what}: mean {} vs {mean} (z = {z:.2})", row.mean);
            let library = analytic::staleness(&law.dist(), &LoadModel::Fixed, &scheme).unwrap();
            assert!(
                (library - stale).abs() < 1e-9 * stale.max(1.0),
                "{what}: {library} vs {stale}"
            );
            let spread: Vec<f64> = (0..20_000)
                .map(|_| reference(n, k, batch, law, Net::Free, &mut rng).1)
                .collect();
            staleness_agrees(&what, row, stale, 0.0, sd(&spread));
            // Without the warm-up's cut the sums are (n − K)/K and (n − 1)/K.
            let limit = if batch {
                (n - 1) as f64 / k as f64
            } else {
                (n - k) as f64 / k as f64
            };
            assert!(
                (stale - limit).abs() < 1e-3 * limit.max(1.0),
                "{what}: {stale} vs {limit}"
            );
        }
    }
}

/// K-async with K = n waits for every worker and restarts them all: each
/// update is an uncoded iteration on fresh draws, with no staleness; one
/// worker under K-batch-async always has the latest model.
#[test]
fn degenerate_asynchronous_sgd() {
    let n = 8;
    let rows = engine_rows(
        n,
        MIXTURE,
        LoadModel::Scaled,
        Net::Free,
        vec![scheme(SchemeKind::KAsync, n, with_k(n))],
        3,
    );
    let row = &rows[0];
    assert_eq!(row.staleness, Some(0.0));
    // The baseline's mean, on other draws of the same law.
    let z = (row.mean - row.mean / row.speedup.unwrap()) / (2.0_f64.sqrt() * row.std_err.unwrap());
    assert!(z.abs() < Z, "K-async with K = n: {} vs uncoded (z = {z:.2})", row.mean);
    let one = engine_rows(
        1,
        MIXTURE,
        LoadModel::Scaled,
        Net::Free,
        vec![scheme(SchemeKind::KBatchAsync, 1, with_k(1))],
        4,
    );
    assert_eq!(one[0].staleness, Some(0.0));
}
