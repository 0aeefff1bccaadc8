//! A straggler's slow state belongs to the worker for the whole iteration
//! and slows every draw it makes; `persist` only carries it across
//! iterations. So `persist` → 0 is `persist` absent for every scheme that
//! draws several times per worker (additive units, mini-batches, copies,
//! gradients, partial and multiple messages), and the exact laws under that
//! model (the additive Gamma mixture, the strategies' mixtures over the
//! slow workers) agree with the engine.

use super::{Z, check_mean, check_quantiles};
use gcsim::engine::{self, Silent, Summary};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::{Study, Workers};

fn scheme(kind: SchemeKind, n: usize, params: Params) -> Scheme {
    Scheme::new(kind, n, params).unwrap()
}

fn with_s(kind: SchemeKind, n: usize, s: usize) -> Scheme {
    scheme(
        kind,
        n,
        Params {
            s: Some(s),
            ..Params::default()
        },
    )
}

fn with_k(kind: SchemeKind, n: usize, k: usize) -> Scheme {
    scheme(
        kind,
        n,
        Params {
            k: Some(k),
            ..Params::default()
        },
    )
}

/// Every scheme that draws more than once per worker in an iteration, with
/// the load model under which it does, on n = 20.
fn multi_draw(n: usize) -> Vec<(LoadModel, Vec<Scheme>)> {
    let additive = vec![
        with_s(SchemeKind::Crc, n, 3),
        with_s(SchemeKind::Frc, n, 3),
        Scheme::comm_efficient(n, 3, 2).unwrap(),
        with_k(SchemeKind::Mds, n, 10),
        with_s(SchemeKind::MultiMessage, n, 2),
        scheme(
            SchemeKind::PartialCrc,
            n,
            Params {
                s: Some(2),
                parts: Some(5),
                ..Params::default()
            },
        ),
    ];
    let fixed = vec![
        with_k(SchemeKind::KBatchSync, n, 5),
        with_k(SchemeKind::KAsync, n, 5),
        with_k(SchemeKind::KBatchAsync, n, 5),
        scheme(
            SchemeKind::Speculative,
            n,
            Params {
                speculate_after: Some(0.5),
                speculate_factor: Some(1.0),
                ..Params::default()
            },
        ),
    ];
    vec![(LoadModel::Additive, additive), (LoadModel::Fixed, fixed)]
}

fn simulate(
    workers: &str,
    model: LoadModel,
    schemes: Vec<Scheme>,
    iterations: u64,
    seed: u64,
) -> (Study, Vec<Summary>) {
    let n = schemes[0].n();
    let workers = if workers.contains(';') {
        let classes = workers.split(';').map(|c| gcsim::workers::parse_class(c).unwrap());
        Workers::Classes {
            classes: classes.collect(),
            shuffle: false,
        }
    } else {
        Workers::from_dist(workers, std::path::Path::new("")).unwrap()
    };
    let study = Study::with_workers(n, workers, model, schemes, 20_000, seed)
        .unwrap()
        .with_iterations(iterations)
        .unwrap();
    let outcome = engine::simulate(&study, &Silent);
    (study, outcome.configs)
}

/// z of the difference of two independent means.
fn z_between(a: &Summary, b: &Summary) -> f64 {
    let (sa, sb) = (a.mean.std_err.unwrap(), b.mean.std_err.unwrap());
    (a.mean.mean - b.mean.mean) / (sa * sa + sb * sb).sqrt()
}

/// `persist=1e-6` and no `persist` agree within Z standard errors for
/// every multi-draw scheme, for one law, for classes (a slow class among
/// plain ones) and over three iterations. Under a per-draw slow state the
/// two differ by 5 to 40 standard errors at these 20,000 trials.
#[test]
fn a_vanishing_persist_is_no_persist() {
    let law = "exp:rate=1,p_slow=0.05,slowdown=8";
    let classes = "10:exp:rate=1,p_slow=0.1,slowdown=6;10:exp:rate=2";
    let tiny = |w: &str| {
        w.split(';')
            .map(|c| {
                if c.contains("p_slow") {
                    format!("{c},persist=0.000001")
                } else {
                    c.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(";")
    };
    let mut checked = 0;
    for (model, schemes) in multi_draw(20) {
        for (workers, iterations) in [(law, 1), (classes, 1), (law, 3)] {
            let (study, none) = simulate(workers, model, schemes.clone(), iterations, 11);
            let (_, persist) = simulate(&tiny(workers), model, schemes.clone(), iterations, 11);
            for ((scheme, a), b) in study.schemes().iter().zip(&none).zip(&persist) {
                let z = z_between(a, b);
                assert!(
                    z.abs() < Z,
                    "{scheme} {workers} {model} x{iterations}: {} vs persist=1e-6 {}: z = {z:.1}",
                    a.mean.mean,
                    b.mean.mean
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 30);
}

/// The engine against the exact laws under the per-worker state: additive
/// loads over exponential and shifted-exponential units (every worker the
/// Gamma mixture `(1 − p)·F₀^{*ℓ}(x) + p·F₀^{*ℓ}(x/F)`), and K-batch-sync,
/// K-batch-async and K-async (mixtures over the slow workers), means and
/// percentiles at 100,000 trials.
#[test]
fn exact_laws_under_the_slow_state() {
    let n = 20;
    let cases = [
        (
            "exp:rate=1,p_slow=0.05,slowdown=8",
            LoadModel::Additive,
            vec![
                with_s(SchemeKind::Crc, n, 3),
                with_s(SchemeKind::Frc, n, 3),
                with_k(SchemeKind::Mds, n, 10),
                with_s(SchemeKind::Uncoded, n, 0),
            ],
        ),
        (
            "shifted-exp:shift=0.5,rate=2,p_slow=0.2,slowdown=3",
            LoadModel::Additive,
            vec![with_s(SchemeKind::Crc, n, 5), with_s(SchemeKind::Ignore, n, 2)],
        ),
        (
            "exp:rate=2,p_slow=0.1,slowdown=5",
            LoadModel::Fixed,
            vec![
                with_k(SchemeKind::KBatchSync, n, 3),
                with_k(SchemeKind::KBatchSync, n, 20),
            ],
        ),
        (
            "exp:rate=2,p_slow=0.1,slowdown=5",
            LoadModel::Fixed,
            vec![
                with_k(SchemeKind::KAsync, 8, 2),
                with_k(SchemeKind::KAsync, 8, 6),
                with_k(SchemeKind::KBatchAsync, 8, 4),
            ],
        ),
    ];
    for (i, (law, model, schemes)) in cases.into_iter().enumerate() {
        let workers = Workers::from_dist(law, std::path::Path::new("")).unwrap();
        let n = schemes[0].n();
        let study = Study::with_workers(n, workers, model, schemes, super::TRIALS, 40 + i as u64).unwrap();
        let outcome = engine::simulate(&study, &Silent);
        for (scheme, summary) in study.schemes().iter().zip(&outcome.configs) {
            let exact = study
                .exact_law(scheme)
                .unwrap_or_else(|| panic!("{scheme} {law} {model}: no exact law"));
            let label = format!("{scheme} {law} {model}");
            check_mean(&label, summary, exact.mean());
            check_quantiles(&label, summary, &|t| exact.cdf(t));
        }
    }
}

/// One worker of a straggler mixture under `additive`: its exact mean is
/// (1 − p + p·F)·ℓ/μ, the closed form of one Gamma variable slowed as a
/// whole, and the engine agrees.
#[test]
fn one_slowed_sum_has_the_closed_form_mean() {
    let (p, f, rate) = (0.1, 5.0, 2.0);
    let law = format!("exp:rate={rate},p_slow={p},slowdown={f}");
    let workers = Workers::from_dist(&law, std::path::Path::new("")).unwrap();
    let uncoded = with_s(SchemeKind::Uncoded, 1, 0);
    let study = Study::with_workers(1, workers, LoadModel::Additive, vec![uncoded], super::TRIALS, 3).unwrap();
    let exact = study.exact_law(&study.schemes()[0]).unwrap().mean();
    let closed = (1.0 - p + p * f) / rate;
    assert!((exact - closed).abs() < 1e-12 * closed, "{exact} vs {closed}");
    let outcome = engine::simulate(&study, &Silent);
    check_mean(&law, &outcome.configs[0], closed);
}
