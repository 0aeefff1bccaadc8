//! Heterogeneous clusters and measured traces, against exact laws computed
//! here and against the recorded data.

use std::sync::Arc;

use assert_cmd::Command;
use predicates::prelude::*;

use gcsim::dist::Dist;
use gcsim::engine::{self, Silent};
use gcsim::load::LoadModel;
use gcsim::scheme::{Rule, Scheme, SchemeKind};
use gcsim::stats::QUANTILES;
use gcsim::study::{Study, Workers};
use gcsim::trace::Trace;

const Z: f64 = 4.5;

fn scheme(kind: SchemeKind, n: usize, s: usize) -> Scheme {
    Scheme::with_tolerance(kind, n, s).unwrap()
}

/// P(at least k of independent workers with finish probabilities `p` are done):
/// the Poisson-binomial tail, by dynamic programming.
fn at_least(p: &[f64], k: usize) -> f64 {
    let mut dist = vec![0.0; p.len() + 1];
    dist[0] = 1.0;
    for (i, &pi) in p.iter().enumerate() {
        for j in (0..=i + 1).rev() {
            dist[j] = dist[j] * (1.0 - pi) + if j > 0 { dist[j - 1] * pi } else { 0.0 };
        }
    }
    dist[k..].iter().sum()
}

/// The iteration-time CDF of non-identical workers with CDFs `f` (in index order).
fn cdf(rule: Rule, f: &[&dyn Fn(f64) -> f64], t: f64) -> f64 {
    let p: Vec<f64> = f.iter().map(|g| g(t)).collect();
    match rule {
        Rule::KOfN(k) => at_least(&p, k),
        Rule::Groups { size } => p
            .chunks(size)
            .map(|g| 1.0 - g.iter().map(|x| 1.0 - x).product::<f64>())
            .product(),
    }
}

fn mean_of(c: &dyn Fn(f64) -> f64) -> f64 {
    // ∫ (1 − F) on a fine grid until the survival is negligible.
    let (mut t, h, mut total) = (0.0, 1e-3, 0.0);
    while 1.0 - c(t) > 1e-13 {
        total += h * (1.0 - c(t + h / 2.0));
        t += h;
    }
    total
}

#[test]
fn heterogeneous_classes_in_order_match_the_non_identical_law() {
    let (fast, slow) = (Dist::exp(1.0).unwrap(), Dist::exp(0.2).unwrap());
    let n = 12;
    let workers = Workers::Classes {
        classes: vec![(9, fast), (3, slow)],
        shuffle: false,
    };
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, 0),
        scheme(SchemeKind::Crc, n, 2),
        scheme(SchemeKind::Frc, n, 2),
        scheme(SchemeKind::Frc, n, 3),
        scheme(SchemeKind::Ignore, n, 5),
    ];
    let trials = 200_000;
    let study = Study::with_workers(n, workers, LoadModel::Scaled, schemes.clone(), trials, 3).unwrap();
    assert!(study.dist().is_none(), "not i.i.d.");
    let out = engine::simulate(&study, &Silent);
    for (s, summary) in schemes.iter().zip(&out.configs) {
        let load = s.load();
        let ff = |t: f64| fast.cdf(t / load);
        let fs = |t: f64| slow.cdf(t / load);
        let laws: Vec<&dyn Fn(f64) -> f64> = (0..n)
            .map(|i| if i < 9 { &ff as &dyn Fn(f64) -> f64 } else { &fs })
            .collect();
        let c = |t: f64| cdf(s.rule(), &laws, t);
        let exact_mean = mean_of(&c);
        // gcsim's own exact law of classes agrees with this independent one.
        let law = study.exact_law(s).expect("classes in order have an exact law");
        assert!(
            (law.mean() - exact_mean).abs() < 1e-5 * exact_mean,
            "{s}: {} vs {exact_mean}",
            law.mean()
        );
        for q in [0.5, 0.99] {
            let x = law.quantile(q);
            assert!((c(x) - q).abs() < 1e-9, "{s}: quantile {q}");
        }
        let z = (summary.mean.mean - exact_mean) / summary.mean.std_err.unwrap();
        assert!(z.abs() < Z, "{s}: mean {} vs {exact_mean}: z {z:.2}", summary.mean.mean);
        for (q, &x) in QUANTILES.iter().zip(&summary.quantiles) {
            let z = (c(x) - q) / (q * (1.0 - q) / trials as f64).sqrt();
            assert!(z.abs() < Z, "{s}: p{q}: z {z:.2}");
        }
    }
}

#[test]
fn shuffled_placement_averages_over_placements() {
    // frc with groups of 2 on 6 fast and 2 slow workers: in order the slow
    // pair shares a group; shuffled, the pair is together with probability 1/7.
    let (fast, slow) = (Dist::exp(1.0).unwrap(), Dist::exp(0.1).unwrap());
    let n = 8;
    let s = scheme(SchemeKind::Frc, n, 1);
    let run = |shuffle| {
        let workers = Workers::Classes {
            classes: vec![(6, fast), (2, slow)],
            shuffle,
        };
        let study = Study::with_workers(n, workers, LoadModel::Fixed, vec![s], 200_000, 9).unwrap();
        engine::simulate(&study, &Silent).configs[0].clone()
    };
    let (ordered, shuffled) = (run(false), run(true));
    // Exact: mixture over whether the slow pair shares a group.
    let group = |a: &Dist, b: &Dist, t: f64| 1.0 - a.sf(t) * b.sf(t);
    let together = |t: f64| group(&slow, &slow, t) * group(&fast, &fast, t).powi(3);
    let apart = |t: f64| group(&slow, &fast, t).powi(2) * group(&fast, &fast, t).powi(2);
    let mixed = |t: f64| together(t) / 7.0 + apart(t) * 6.0 / 7.0;
    for (summary, c) in [(&ordered, &together as &dyn Fn(f64) -> f64), (&shuffled, &mixed)] {
        let exact = mean_of(c);
        let z = (summary.mean.mean - exact) / summary.mean.std_err.unwrap();
        assert!(z.abs() < Z, "mean {} vs {exact}: z {z:.2}", summary.mean.mean);
    }
}

fn shared_trace(name: &str) -> Arc<Trace> {
    Arc::new(Trace::from_file(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join(name)).unwrap())
}

#[test]
fn replay_keeps_each_recorded_step_together() {
    let trace = shared_trace("trace-llm-8w.csv");
    let n = trace.workers();
    let schemes = vec![scheme(SchemeKind::Uncoded, n, 0), scheme(SchemeKind::Ignore, n, 2)];
    let study = Study::with_workers(n, Workers::Replay(trace.clone()), LoadModel::Fixed, schemes, 50_000, 1).unwrap();
    let out = engine::simulate(&study, &Silent);
    // Every simulated iteration time is a statistic of one recorded step.
    let step_stat = |k: usize| -> Vec<f64> {
        (0..trace.steps())
            .map(|s| {
                let mut v = trace.step(s).to_vec();
                v.sort_by(f64::total_cmp);
                v[k - 1]
            })
            .collect()
    };
    for (summary, k) in [(&out.configs[0], n), (&out.configs[1], n - 2)] {
        let possible = step_stat(k);
        for x in summary.quantiles {
            assert!(
                possible.contains(&x),
                "{x} is not a recorded step's order statistic {k}"
            );
        }
        // Steps are drawn uniformly: the mean is the steps' average, within Z SE.
        let exact = possible.iter().sum::<f64>() / possible.len() as f64;
        let z = (summary.mean.mean - exact) / summary.mean.std_err.unwrap();
        assert!(z.abs() < Z, "replay mean {} vs {exact}: z {z:.2}", summary.mean.mean);
    }
}

#[test]
fn trace_bootstrap_matches_the_empirical_order_statistics() {
    let trace = shared_trace("trace-llm-64w.csv");
    let n = 16;
    let schemes = vec![scheme(SchemeKind::Crc, n, 3), scheme(SchemeKind::Frc, n, 3)];
    let trials = 100_000;
    let study = Study::with_workers(
        n,
        Workers::Trace(trace.clone()),
        LoadModel::Fixed,
        schemes.clone(),
        trials,
        2,
    )
    .unwrap();
    let out = engine::simulate(&study, &Silent);
    let all = trace.all();
    let f = |t: f64| all.iter().filter(|&&x| x <= t).count() as f64 / all.len() as f64;
    for (s, summary) in schemes.iter().zip(&out.configs) {
        let laws: Vec<&dyn Fn(f64) -> f64> = (0..n).map(|_| &f as &dyn Fn(f64) -> f64).collect();
        // Atoms: the type-1 quantile x̂ satisfies F(x̂⁻) < q ≤ F(x̂) up to sampling error.
        for (q, &x) in QUANTILES.iter().zip(&summary.quantiles) {
            let (below, at) = (cdf(s.rule(), &laws, x.next_down()), cdf(s.rule(), &laws, x));
            let se = (q * (1.0 - q) / trials as f64).sqrt();
            assert!(
                below - Z * se < *q && *q <= at + Z * se,
                "{s} p{q} = {x}: F(x-) {below}, F(x) {at}"
            );
        }
    }
}

#[test]
fn pareto_classes_decide_infinite_means_by_tail_index() {
    // k-of-n: the n−k+1 heaviest tails add; one worker of shape 0.6 and the
    // rest 3: uncoded (one worker late) has index 0.6 → infinite mean; with s = 1
    // index 0.6 + 3 > 1 → finite.
    let heavy = Dist::pareto(1.0, 0.6).unwrap();
    let light = Dist::pareto(1.0, 3.0).unwrap();
    let workers = Workers::Classes {
        classes: vec![(1, heavy), (5, light)],
        shuffle: false,
    };
    let schemes = vec![scheme(SchemeKind::Crc, 6, 0), scheme(SchemeKind::Crc, 6, 1)];
    let study = Study::with_workers(6, workers, LoadModel::Fixed, schemes.clone(), 1000, 0).unwrap();
    assert!(study.mean_is_infinite(&schemes[0]));
    assert!(!study.mean_is_infinite(&schemes[1]));
}

#[test]
fn cli_populations_and_their_errors() {
    let g = || Command::cargo_bin("gcsim").unwrap();
    g().args([
        "sweep",
        "--s",
        "0..2",
        "--workers",
        "6:exp:rate=1",
        "--workers",
        "2:exp:rate=0.1",
        "--trials",
        "2000",
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains("crc,8,2"));
    g().args([
        "run",
        "--scheme",
        "crc",
        "--s",
        "1",
        "--dist",
        "replay:path=data/trace-llm-8w.csv",
        "--n",
        "8",
        "--format",
        "json",
        "--trials",
        "2000",
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains(
        "\"dist\": \"replay:path=data/trace-llm-8w.csv\"",
    ));
    let cases: &[(&[&str], &str)] = &[
        (
            &["sweep", "--s", "1", "--workers", "6:exp:rate=1", "--dist", "exp:rate=2"],
            "--workers and --dist do not go together",
        ),
        (
            &["sweep", "--n", "7", "--s", "1", "--workers", "6:exp:rate=1"],
            "--n 7 but the --workers classes add up to 6",
        ),
        (
            &["sweep", "--n", "7", "--s", "1", "--shuffle-placement"],
            "--shuffle-placement places --workers classes",
        ),
        (&["sweep", "--s", "1"], "give --n N"),
        (&["sweep", "--s", "1", "--workers", "0:exp:rate=1"], "at least 1 worker"),
        (
            &["sweep", "--s", "1", "--workers", "x:exp:rate=1"],
            "not a whole number",
        ),
        (
            &["sweep", "--s", "1", "--workers", "5:exp:rate=-1"],
            "`rate=-1` is out of range",
        ),
        (
            &["sweep", "--n", "8", "--s", "1", "--dist", "trace:path=/nonexistent.csv"],
            "/nonexistent.csv: cannot read the trace",
        ),
        (
            &["sweep", "--n", "8", "--s", "1", "--dist", "trace:"],
            "needs the key `path`",
        ),
        (
            &["sweep", "--n", "8", "--s", "1", "--dist", "replay:path=data/README.md"],
            "data/README.md:1: the header",
        ),
        (
            &[
                "sweep",
                "--n",
                "8",
                "--s",
                "1",
                "--dist",
                "replay:path=data/trace-llm-8w.csv",
                "--load-model",
                "additive",
            ],
            "replay gives each worker one recorded time per step",
        ),
    ];
    for (args, expected) in cases {
        let out = g().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.lines().next().unwrap_or("").contains(expected),
            "{args:?}: {stderr}"
        );
    }
}

/// Near the infinite-mean boundary the class law's mean must keep the mass
/// far out in the tail (at tail index 1.01 most of it lies past t = 10¹⁵):
/// one class of n identical workers equals the i.i.d. exact law, for k of n
/// and for frc's groups in order, and every load model. The integral was cut
/// off at survival 1e-15 and gave 59.57 for the exact 200.02 at 1.01.
#[test]
fn class_means_keep_heavy_tails() {
    for shape in [1.001, 1.01, 1.05, 1.1, 1.2, 2.0, 50.0] {
        let d = Dist::pareto(1.0, shape).unwrap();
        let classes = Workers::Classes {
            classes: vec![(2, d), (2, d)],
            shuffle: false,
        };
        for model in [
            LoadModel::Fixed,
            LoadModel::Scaled,
            LoadModel::Affine { unit_time: 0.5 },
        ] {
            for sch in [
                scheme(SchemeKind::Crc, 4, 0),
                scheme(SchemeKind::Crc, 4, 1),
                scheme(SchemeKind::Frc, 4, 1),
            ] {
                let iid = Study::new(4, d, model, vec![sch], 10, 0).unwrap();
                let cls = Study::with_workers(4, classes.clone(), model, vec![sch], 10, 0).unwrap();
                let (a, b) = (cls.exact_law(&sch).unwrap().mean(), iid.exact_law(&sch).unwrap().mean());
                assert!(
                    (a - b).abs() <= 1e-9 * b,
                    "shape {shape} {model:?} {sch}: classes {a}, i.i.d. {b}"
                );
            }
        }
    }
}

/// A trace with steps missing a worker: `trace:` says how many steps and
/// rows it dropped and why (in the header and on stderr); `replay:`, which
/// draws whole steps, refuses fewer than a handful of complete ones instead
/// of replaying one step (std_err 0) as it did.
#[test]
fn dropped_trace_steps_are_counted_and_too_few_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("\u{feff}step,worker,time\n");
    for step in 0..43 {
        text += &format!("{step},0,{}\n", 1.0 + step as f64 / 100.0);
        if step == 0 || step >= 40 {
            text += &format!("{step},1,{}\n", 1.5 + step as f64 / 100.0);
        }
    }
    let path = dir.path().join("gaps.csv");
    std::fs::write(&path, text).unwrap();
    let g = || Command::cargo_bin("gcsim").unwrap();
    let run = |mode: &str| {
        g().args([
            "run", "--n", "2", "--scheme", "crc", "--s", "0", "--trials", "1000", "--format", "table",
        ])
        .arg("--dist")
        .arg(format!("{mode}:path={}", path.display()))
        .assert()
    };
    let note = "dropped 39 of 43 steps (39 rows) in which some of the 2 workers has no time; 4 complete steps are used";
    run("trace")
        .success()
        .stderr(predicate::str::contains(note))
        .stdout(predicate::str::contains(format!(
            "# warning: {}: {note}",
            path.display()
        )));
    run("replay").code(2).stderr(predicate::str::contains(
        "only 4 step(s) have a time for every worker (39 dropped for a missing worker); it needs at least 5",
    ));
}

/// Classes read by k-of-n rules alone draw only each class's times that
/// can reach the largest their deepest rule reads (a top block per class,
/// extended downward where the merged top needs it): every slot's value
/// has the law it has in the event walk, which reads the classes' whole
/// runs. Per slot, the two means over 20 000 trials each agree within 5
/// standard errors of their difference.
#[test]
fn classes_merged_from_the_top_have_the_event_walks_law() {
    use engine::{RulePath, Sampling, TrialPlan};
    let (fast, slow) = (Dist::exp(1.0).unwrap(), Dist::exp(0.5).unwrap());
    let n = 40;
    let trials = 20_000;
    for (classes, deepest) in [
        (vec![(20, fast), (20, slow)], 12),
        (vec![(5, fast), (30, slow), (5, fast)], 25),
    ] {
        let workers = Workers::Classes {
            classes,
            shuffle: false,
        };
        let schemes = [0, 3, deepest].map(|s| scheme(SchemeKind::Crc, n, s)).to_vec();
        let study = Study::with_workers(n, workers, LoadModel::Fixed, schemes, 1000, 7).unwrap();
        let moments = |path, seed| {
            let plan = TrialPlan::with(&study, path, Sampling::OrderStatistics);
            let mut scratch = plan.scratch();
            let mut out = vec![0.0; plan.slots()];
            let mut sums = vec![(0.0, 0.0); plan.slots()];
            for trial in 0..trials {
                plan.run(seed, trial, &mut scratch, &mut out);
                for (s, &x) in sums.iter_mut().zip(&out) {
                    s.0 += x;
                    s.1 += x * x;
                }
            }
            let t = trials as f64;
            sums.iter()
                .map(|&(a, b)| (a / t, b / t - (a / t) * (a / t)))
                .collect::<Vec<_>>()
        };
        let (top, walk) = (moments(RulePath::Fast, 7), moments(RulePath::Events, 8));
        for (slot, (&(ma, va), &(mb, vb))) in top.iter().zip(&walk).enumerate() {
            let se = ((va + vb) / trials as f64).sqrt();
            assert!((ma - mb).abs() <= 5.0 * se, "slot {slot}: top {ma}, walk {mb}, se {se}");
        }
    }
}

/// Among studies whose every rule is k of n, a class configuration's values
/// do not depend on what else the study contains: the blocks' sizes are the
/// classes' own, and each class extends downward on a stream of its own.
#[test]
fn class_configurations_do_not_depend_on_the_rest_of_the_study() {
    use engine::{RulePath, Sampling, TrialPlan};
    let n = 100;
    let workers = Workers::Classes {
        classes: vec![(50, Dist::exp(1.0).unwrap()), (50, Dist::exp(0.5).unwrap())],
        shuffle: false,
    };
    // s = 60 reads the top 61, below the blocks' 51 or so: every trial
    // extends a class, and most both.
    let alone = vec![scheme(SchemeKind::Crc, n, 60)];
    let crowded = [5, 60, 80].map(|s| scheme(SchemeKind::Crc, n, s)).to_vec();
    let a = Study::with_workers(n, workers.clone(), LoadModel::Fixed, alone, 10, 7).unwrap();
    let b = Study::with_workers(n, workers, LoadModel::Fixed, crowded, 10, 7).unwrap();
    let pa = TrialPlan::with(&a, RulePath::Fast, Sampling::OrderStatistics);
    let pb = TrialPlan::with(&b, RulePath::Fast, Sampling::OrderStatistics);
    let (mut sa, mut sb) = (pa.scratch(), pb.scratch());
    let (mut oa, mut ob) = (vec![0.0; pa.slots()], vec![0.0; pb.slots()]);
    for t in 0..5000 {
        pa.run(7, t, &mut sa, &mut oa);
        pb.run(7, t, &mut sb, &mut ob);
        assert_eq!(oa[0].to_bits(), ob[1].to_bits(), "trial {t}");
        assert_eq!(oa[1].to_bits(), ob[3].to_bits(), "baseline, trial {t}");
    }
}
