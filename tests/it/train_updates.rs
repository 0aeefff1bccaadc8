//! `gcsim train`'s update rules, one iteration (or update) at a time,
//! recomputed from the engine's observables (arrivals, mini-batch counts,
//! the asynchronous timeline) and the rules' definitions.

use faer::{Col, Mat, Scale};

use gcsim::load::LoadModel;
use gcsim::scheme::{Params, SchemeKind};
use gcsim::train::problem::Problem;
use gcsim::train::setup::{Recipe, Schedule, Setup};

use super::common::scheme;
use super::train::{rel, setup, study, train, with};

/// One iteration of each inexact rule, recomputed here from the engine's
/// observables (the arrivals, the mini-batch counts) and the definitions:
/// `ignore` steps along n/(n−s) times the sum of the first n−s workers'
/// partial gradients, k-batch-sync along n/K times its mini-batches'
/// (with multiplicity), approx-regular along Σ_j (u*ᵀB_F)_j·g_j with u*
/// the least-squares decoding of the first n−s rows of its code.
#[test]
fn inexact_updates_follow_their_definitions() {
    use gcsim::engine::{RulePath, Sampling, TrialPlan};
    use gcsim::train::run::partition;
    let n = 10;
    let setup = setup(Problem::LeastSquares, "synthetic:rows=300,features=4,noise=1", None);
    let (train_set, objective) = (&setup.train, &setup.objective);
    let parts = partition(train_set.rows(), n);
    let gradient = |j: usize| {
        let mut g = vec![0.0; train_set.d];
        objective.add_partial_gradient(train_set, parts[j].clone(), &vec![0.0; train_set.d], &mut g);
        g
    };
    let k = |kind, k| {
        with(
            kind,
            n,
            Params {
                k: Some(k),
                ..Params::default()
            },
        )
    };
    let approx = with(
        SchemeKind::ApproxRegular,
        n,
        Params {
            s: Some(3),
            d: Some(3),
            ..Params::default()
        },
    );
    for sch in [scheme(SchemeKind::Ignore, n, 3), k(SchemeKind::KBatchSync, 6), approx] {
        let study = study(n, "exp:rate=1,p_slow=0.2,slowdown=4", LoadModel::Fixed, vec![sch], 3, 1);
        let trained = train(&study, &setup);
        let plan = TrialPlan::with(&study, RulePath::Events, Sampling::Draws);
        let mut scratch = plan.scratch();
        for r in 0..3 {
            // Each partition's weight in the update.
            let weights: Vec<f64> = match sch.kind() {
                SchemeKind::KBatchSync => {
                    let mut out = vec![0.0; plan.slots()];
                    let counts = plan.run_iteration_marked(study.seed(), r, 0, &mut scratch, &mut out);
                    assert_eq!(counts[..n].iter().sum::<u32>(), 6);
                    counts[..n].iter().map(|&c| c as f64 * n as f64 / 6.0).collect()
                }
                kind => {
                    let arrival = plan.arrivals(0, study.seed(), r, &mut scratch).to_vec();
                    let mut order: Vec<usize> = (0..n).collect();
                    order.sort_by(|&a, &b| arrival[a].total_cmp(&arrival[b]));
                    order.truncate(n - 3);
                    if kind == SchemeKind::Ignore {
                        (0..n)
                            .map(|j| {
                                if order.contains(&j) {
                                    n as f64 / (n - 3) as f64
                                } else {
                                    0.0
                                }
                            })
                            .collect()
                    } else {
                        let code = study.code(&sch).unwrap();
                        let u = code.decode(&order).coefficients;
                        let b = Mat::from_fn(order.len(), n, |i, j| code.encoding()[(order[i], j)]);
                        (&u * &b).row(0).iter().copied().collect()
                    }
                }
            };
            let mut w = vec![0.0; train_set.d];
            for (j, &a) in weights.iter().enumerate() {
                for (x, g) in w.iter_mut().zip(gradient(j)) {
                    *x -= setup.step * a * g;
                }
            }
            let expected = objective.loss(train_set, &w);
            let got = trained[0].runs[r as usize].loss[1];
            assert!(rel(got, expected) < 1e-10, "{sch} repeat {r}: {got} vs {expected}");
        }
    }
}

/// K-async's updates, recomputed from the engine's asynchronous timeline:
/// update u applies n/K times the sum of its K gradients, each on the model
/// its worker computed on (stale ones on older models), at the time of its
/// K-th arrival.
#[test]
fn asynchronous_updates_use_the_stale_models() {
    use gcsim::engine::{RulePath, Sampling, TrialPlan};
    use gcsim::train::run::partition;
    let (n, k, iterations) = (10, 4, 12);
    let setup = setup(Problem::LeastSquares, "synthetic:rows=300,features=4,noise=1", None);
    let (train_set, objective) = (&setup.train, &setup.objective);
    let parts = partition(train_set.rows(), n);
    let sch = with(
        SchemeKind::KAsync,
        n,
        Params {
            k: Some(k),
            ..Params::default()
        },
    );
    let study = study(n, "exp:rate=1", LoadModel::Fixed, vec![sch], 2, iterations);
    let trained = train(&study, &setup);
    let plan = TrialPlan::with(&study, RulePath::Events, Sampling::Draws);
    let mut scratch = plan.scratch();
    for r in 0..2 {
        let run = &trained[0].runs[r as usize];
        let mut models = vec![vec![0.0; train_set.d]];
        let mut stale = 0;
        plan.run_asynchronous(0, study.seed(), r, &mut scratch, |u| {
            let mut w = models.last().unwrap().clone();
            for &(worker, version) in u.gradients {
                stale += u.index - version;
                let mut g = vec![0.0; train_set.d];
                objective.add_partial_gradient(train_set, parts[worker].clone(), &models[version as usize], &mut g);
                for (x, g) in w.iter_mut().zip(g) {
                    *x -= setup.step * n as f64 / k as f64 * g;
                }
            }
            let i = u.index as usize + 1;
            assert_eq!(run.time[i], u.at);
            assert!(
                rel(run.loss[i], objective.loss(train_set, &w)) < 1e-9,
                "repeat {r} update {i}"
            );
            models.push(w);
            i < iterations as usize
        });
        assert_eq!(models.len(), iterations as usize + 1);
        assert!(stale > 0, "some gradient is stale");
    }
}

/// The L2 term and the schedule: w ← w − η/√(t+1)·(∇f_data(w) + λw),
/// computed here in closed form for least squares; and the clock: entry t
/// is the end of iteration t, the running sum of the engine's iterations.
#[test]
fn l2_schedule_and_clock_follow_their_definitions() {
    use gcsim::engine::{RulePath, Sampling, TrialPlan};
    let recipe = Recipe {
        problem: Problem::LeastSquares,
        data: "synthetic:rows=200,features=3,noise=1".parse().unwrap(),
        target: None,
        test_fraction: 0.2,
        l2: 0.3,
        step: Some(0.4),
        schedule: Schedule::InvSqrt,
        seed: 5,
    };
    let setup = Setup::prepare(&recipe).unwrap();
    let t = &setup.train;
    let x = Mat::from_fn(t.rows(), t.d, |i, j| t.features[i * t.d + j]);
    let y = Col::from_fn(t.rows(), |i| t.targets[i]);
    let rows = x.nrows() as f64;
    let loss = |w: &Col<f64>| (&x * w - &y).squared_norm_l2() / (2.0 * rows) + 0.15 * w.squared_norm_l2();
    let n = 6;
    let sch = scheme(SchemeKind::Crc, n, 1);
    let study = study(n, "exp:rate=1", LoadModel::Scaled, vec![sch], 1, 30);
    let run = &train(&study, &setup)[0].runs[0];
    let mut w = Col::<f64>::zeros(t.d);
    for i in 0..=30 {
        assert!(rel(run.loss[i], loss(&w)) < 1e-10, "iteration {i}");
        let g = Scale(1.0 / rows) * (x.transpose() * (&x * &w - &y)) + Scale(0.3) * &w;
        w -= Scale(0.4 / ((i + 1) as f64).sqrt()) * g;
    }
    // The clock: the engine's iterations of trial 0, summed.
    let plan = TrialPlan::with(&study, RulePath::Events, Sampling::Draws);
    let mut scratch = plan.scratch();
    let mut out = vec![0.0; plan.slots()];
    let mut clock = 0.0;
    assert_eq!(run.time[0], 0.0);
    for i in 0..30 {
        plan.run_iteration_marked(study.seed(), 0, i, &mut scratch, &mut out);
        clock += out[0];
        assert_eq!(run.time[i as usize + 1], clock, "iteration {i}");
    }
}

/// `timeout` uses the workers arrived when the master proceeds (all of
/// them by T, or the first), scaled by n over their count.
#[test]
fn timeout_uses_the_arrived_workers() {
    use gcsim::engine::{RulePath, Sampling, TrialPlan};
    use gcsim::train::run::partition;
    let n = 8;
    let setup = setup(Problem::LeastSquares, "synthetic:rows=300,features=4,noise=1", None);
    let (train_set, objective) = (&setup.train, &setup.objective);
    let parts = partition(train_set.rows(), n);
    let sch = with(
        SchemeKind::Timeout,
        n,
        Params {
            timeout: Some(1.0),
            ..Params::default()
        },
    );
    let study = study(n, "exp:rate=1", LoadModel::Fixed, vec![sch], 4, 1);
    let trained = train(&study, &setup);
    let plan = TrialPlan::with(&study, RulePath::Events, Sampling::Draws);
    let mut scratch = plan.scratch();
    let mut partial_counts = 0;
    for r in 0..4 {
        let arrival = plan.arrivals(0, study.seed(), r, &mut scratch).to_vec();
        let first = arrival.iter().copied().fold(f64::INFINITY, f64::min);
        let used: Vec<usize> = (0..n).filter(|&w| arrival[w] <= first.max(1.0)).collect();
        partial_counts += usize::from(used.len() < n);
        let mut w = vec![0.0; train_set.d];
        for &j in &used {
            let mut g = vec![0.0; train_set.d];
            objective.add_partial_gradient(train_set, parts[j].clone(), &vec![0.0; train_set.d], &mut g);
            for (x, g) in w.iter_mut().zip(g) {
                *x -= setup.step * n as f64 / used.len() as f64 * g;
            }
        }
        let got = trained[0].runs[r as usize].loss[1];
        assert!(rel(got, objective.loss(train_set, &w)) < 1e-10, "repeat {r}");
    }
    assert!(partial_counts > 0, "some repeat proceeds without every worker");
}
