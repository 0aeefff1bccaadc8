//! A replay at n = the trace's workers keeps each start step's values
//! once, copies a trial's row instead of evaluating it, and counts a chunk
//! by how many trials start at each step: the same bits as evaluating and
//! counting every trial, whether the run keeps every value (exact
//! quantiles), tallies windows, keeps a survival curve or
//! counts a deadline, on any number of threads.

use gcsim::comm::{Comm, Link};
use gcsim::engine::{self, Options, Silent, TrialPlan};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::{Study, Workers};
use gcsim::trace::Trace;
use std::sync::Arc;

/// A trace of `steps` steps of 8 workers whose times take `values`
/// distinct values (few values: atoms that windows must resolve).
fn trace(steps: usize, values: usize) -> Arc<Trace> {
    let mut text = String::from("step,worker,time\n");
    for step in 0..steps {
        for w in 0..8 {
            text += &format!("{step},{w},{}\n", 1.0 + ((step * 8 + w) * 7 % values) as f64 * 0.125);
        }
    }
    Arc::new(Trace::parse("t.csv", &text).unwrap())
}

fn schemes(n: usize) -> Vec<Scheme> {
    let at = |kind, s: Option<usize>, timeout: Option<f64>| {
        Scheme::new(
            kind,
            n,
            Params {
                s,
                timeout,
                ..Params::default()
            },
        )
        .unwrap()
    };
    vec![
        at(SchemeKind::Crc, Some(1), None),
        at(SchemeKind::Crc, Some(3), None),
        at(SchemeKind::Frc, Some(1), None),
        at(SchemeKind::Timeout, None, Some(2.0)),
    ]
}

/// Studies whose trials are a function of their start step: one iteration
/// and several, scaled loads, a constant transfer time on a shared link
/// with a decode time; 40 steps of few distinct values, and 5000 steps of
/// nearly all distinct values.
fn studies(trials: u64) -> Vec<Study> {
    let n = 8;
    let mut out = Vec::new();
    for (steps, values) in [(40, 11), (5000, 39_997)] {
        let workers = Workers::Replay(trace(steps, values));
        let plain = |model| Study::with_workers(n, workers.clone(), model, schemes(n), trials, 5).unwrap();
        out.push(plain(LoadModel::Fixed));
        out.push(plain(LoadModel::Scaled).with_iterations(3).unwrap());
        out.push(plain(LoadModel::Fixed).with_comm(Comm::new(Some(0.25), None, Link::Shared, 0.5).unwrap()));
    }
    out
}

/// Every run with step rows equals the same run evaluating every trial,
/// within the pilot (exact quantiles) and past it (windows from the pilot),
/// with a survival curve and a deadline. (A refinement pass counts by
/// steps as the first pass does, without power sums: the unit test
/// `counting_by_step_equals_counting_every_value` covers that shape.)
#[test]
fn step_rows_equal_evaluating_every_trial() {
    for trials in [5_000, 300_000] {
        for study in studies(trials) {
            let plan = TrialPlan::new(&study);
            assert!(plan.step_rows().is_some());
            let rowless = TrialPlan::new(&study).without_step_rows();
            for options in [
                Options::default(),
                Options {
                    survival_points: 12,
                    deadline: Some(2.5),
                },
            ] {
                let with = engine::simulate_full(&plan, &study, &Silent, &options);
                let without = engine::simulate_full(&rowless, &study, &Silent, &options);
                assert_eq!(with, without, "trials={trials} {options:?}");
            }
        }
    }
}

/// Where a trial draws more than its step, or draws workers from the
/// step, the plan evaluates every trial.
#[test]
fn step_rows_only_where_a_trial_is_its_step() {
    let n = 8;
    let study = |n, comm| {
        Study::with_workers(n, Workers::Replay(trace(40, 11)), LoadModel::Fixed, schemes(n), 1000, 5)
            .unwrap()
            .with_comm(comm)
    };
    let none = Comm::new(None, None, Link::Dedicated, 0.0).unwrap();
    assert!(TrialPlan::new(&study(n, none)).step_rows().is_some());
    // n differs from the trace's workers: each worker is drawn from the step.
    assert!(TrialPlan::new(&study(6, none)).step_rows().is_none());
    // A random transfer time per message.
    let random = Comm::new(None, Some("exp:rate=2".parse().unwrap()), Link::Dedicated, 0.0).unwrap();
    assert!(TrialPlan::new(&study(n, random)).step_rows().is_none());
}

/// One thread or three: the same bits.
#[test]
fn step_rows_on_any_thread_count() {
    let study = &studies(300_000)[3];
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| engine::simulate(study, &Silent))
    };
    assert_eq!(run(1), run(3));
}
