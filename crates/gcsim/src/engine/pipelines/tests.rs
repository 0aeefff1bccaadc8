//! The hybrid-parallel engine against the flat one and its limits.

use crate::engine::{RulePath, Sampling, TrialPlan};
use crate::load::LoadModel;
use crate::parallel::{Layout, Parallel, Schedule};
use crate::scheme::{Params, Scheme, SchemeKind};
use crate::study::{Study, Workers};

fn schemes(n: usize) -> Vec<Scheme> {
    let with_s = |kind, s| {
        Scheme::new(
            kind,
            n,
            Params {
                s: Some(s),
                ..Params::default()
            },
        )
        .unwrap()
    };
    let timeout = Scheme::new(
        SchemeKind::Timeout,
        n,
        Params {
            timeout: Some(1.5),
            ..Params::default()
        },
    )
    .unwrap();
    vec![
        with_s(SchemeKind::Ignore, 2),
        with_s(SchemeKind::Frc, 1),
        with_s(SchemeKind::Crc, 2),
        timeout,
    ]
}

fn values(plan: &TrialPlan, seed: u64, trials: u64) -> Vec<f64> {
    let mut scratch = plan.scratch();
    let mut out = vec![0.0; plan.slots()];
    let mut all = Vec::new();
    for t in 0..trials {
        plan.run(seed, t, &mut scratch, &mut out);
        all.extend_from_slice(&out);
    }
    all
}

#[test]
fn one_stage_one_rank_one_microbatch_is_the_flat_cluster_under_additive_loads() {
    let n = 8;
    for dist in ["exp:rate=1", "lognormal:mu=0,sigma=1,p_slow=0.1,slowdown=5"] {
        let workers = Workers::Iid(dist.parse().unwrap());
        let flat = Study::with_workers(n, workers.clone(), LoadModel::Additive, schemes(n), 100, 7).unwrap();
        let layout = Layout { dp: n, pp: 1, tp: 1 };
        let hybrid = Study::hybrid(Parallel::new(layout, 1), workers, schemes(n), 100, 7).unwrap();
        let a = values(&TrialPlan::with(&flat, RulePath::Events, Sampling::Draws), 7, 200);
        let b = values(&TrialPlan::new(&hybrid), 7, 200);
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-12 * x.abs(), "{dist}: flat {x} vs hybrid {y}");
        }
    }
}

#[test]
fn nearly_fixed_times_give_the_schedules_deterministic_time() {
    // Times within 1e-9 of 1: (m + P − 1)·x, with the stage work.
    let workers = Workers::Iid("lognormal:mu=0,sigma=1e-9".parse().unwrap());
    for schedule in [Schedule::GPipe, Schedule::OneFOneB] {
        let layout = Layout { dp: 2, pp: 4, tp: 3 };
        let parallel = Parallel {
            schedule,
            stage_work: vec![1.0, 1.0, 1.0, 1.0].into(),
            ..Parallel::new(layout, 8)
        };
        let uncoded = Scheme::new(SchemeKind::Uncoded, 2, Params::default()).unwrap();
        let study = Study::hybrid(parallel, workers.clone(), vec![uncoded], 10, 1).unwrap();
        let v = values(&TrialPlan::new(&study), 1, 5);
        for x in v {
            assert!((x - 11.0).abs() < 1e-6, "{schedule:?}: {x}");
        }
    }
}

#[test]
fn a_run_sums_the_pipeline_shares_as_their_own_pass_does_and_its_batches_are_its_trials() {
    let workers = Workers::Iid("exp:rate=1,p_slow=0.1,slowdown=4".parse().unwrap());
    // Trials run four to a batch, then (4 096 draws a trial) spread over the cores.
    for (dp, pp, tp, m, trials) in [(6, 3, 2, 3, 700), (6, 3, 2, 3, 3000), (8, 8, 4, 16, 300)] {
        let parallel = Parallel::new(Layout { dp, pp, tp }, m);
        let study = Study::hybrid(parallel, workers.clone(), schemes(dp), trials, 5).unwrap();
        let outcome = crate::engine::simulate(&study, &crate::engine::Silent);
        assert!(outcome.pipelines.is_some(), "dp={dp}: the run summed its first trials");
        assert_eq!(
            super::pipeline_shares_of(&study, &outcome),
            super::pipeline_shares(&study),
            "dp={dp}, {trials} trials"
        );
        let rows = values(&TrialPlan::new(&study), study.seed(), trials);
        let one_by_one = crate::engine::outcome_of_values(&study, &rows, &crate::engine::Silent);
        assert_eq!(
            format!("{:?}", (&one_by_one.configs, &one_by_one.baseline)),
            format!("{:?}", (&outcome.configs, &outcome.baseline)),
            "dp={dp}, {trials} trials"
        );
    }
}
