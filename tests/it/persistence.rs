//! Stragglers across iterations: `persist`, correlated groups, `--iterations`
//! and replay of consecutive recorded steps, against their exact values.

use std::sync::Arc;

use assert_cmd::Command;
use gcsim::engine::TrialPlan;
use gcsim::load::LoadModel;
use gcsim::scheme::{Scheme, SchemeKind};
use gcsim::study::{Study, Workers};
use gcsim::trace::Trace;

use super::common::scheme;
use super::errors::assert_usage_error;
use super::strategies::{merged_halves, scenario};

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// Every trial's value of the study's first scheme, trials 0..trials.
fn values(study: &Study) -> Vec<f64> {
    let plan = TrialPlan::new(study);
    let mut scratch = plan.scratch();
    let mut out = vec![0.0; plan.slots()];
    (0..study.trials())
        .map(|t| {
            plan.run(study.seed(), t, &mut scratch, &mut out);
            out[0]
        })
        .collect()
}

/// The sample mean and variance, and the standard errors of both (the
/// variance's from the sample's own fourth central moment).
fn moments(xs: &[f64]) -> (f64, f64, f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let m4 = xs.iter().map(|x| (x - mean).powi(4)).sum::<f64>() / n;
    (mean, var, (var / n).sqrt(), ((m4 - var * var) / n).sqrt())
}

fn study(n: usize, dist: &str, schemes: Vec<Scheme>, trials: u64, iterations: u64) -> Study {
    let workers = Workers::from_dist(dist, std::path::Path::new("")).unwrap();
    Study::with_workers(n, workers, LoadModel::Fixed, schemes, trials, 7)
        .unwrap()
        .with_iterations(iterations)
        .unwrap()
}

/// One uncoded worker, `exp:rate=1,p_slow=P,slowdown=F,persist=RHO`, T
/// iterations: the mean of the total is T·E[X], and its variance
/// T·Var(X) + 2·Σ_{l=1}^{T−1} (T−l)·RHO^l·P(1−P)(F−1)², since the
/// slowdown state is the only part correlated across iterations (its
/// autocovariance at lag l is RHO^l·P(1−P), and E[Y] = 1).
#[test]
fn the_variance_of_a_run_is_the_chains() {
    let (p, f, rho, t) = (0.2, 5.0, 0.8, 20u64);
    let dist = format!("exp:rate=1,p_slow={p},slowdown={f},persist={rho}");
    let uncoded = scheme(SchemeKind::Uncoded, 1, 0);
    let xs = values(&study(1, &dist, vec![uncoded], 200_000, t));
    let (mean, var, se_mean, se_var) = moments(&xs);
    let ex = 1.0 - p + p * f;
    let var_x = 2.0 * (1.0 - p + p * f * f) - ex * ex;
    let cov = |rho: f64| -> f64 {
        (1..t)
            .map(|l| 2.0 * (t - l) as f64 * rho.powi(l as i32) * p * (1.0 - p) * (f - 1.0).powi(2))
            .sum()
    };
    let expected = t as f64 * var_x + cov(rho);
    assert!((mean - t as f64 * ex).abs() < 4.0 * se_mean, "mean {mean} ± {se_mean}");
    assert!(
        (var - expected).abs() < 4.0 * se_var,
        "variance {var} ± {se_var}, expected {expected}"
    );
    // Without the chain's covariance the variance would be far off: the
    // check can tell the two apart.
    assert!(
        (expected - t as f64 * var_x).abs() > 20.0 * se_var,
        "{expected} vs {se_var}"
    );
    // A group of the one worker is a chain of the same kind.
    let group = format!("exp:rate=1,group=1,p_group={p},group_slowdown={f},persist={rho}");
    let gs = values(&study(1, &group, vec![scheme(SchemeKind::Uncoded, 1, 0)], 200_000, t));
    let (gmean, gvar, gse_mean, gse_var) = moments(&gs);
    assert!(
        (gmean - t as f64 * ex).abs() < 4.0 * gse_mean,
        "group mean {gmean} ± {gse_mean}"
    );
    assert!(
        (gvar - expected).abs() < 4.0 * gse_var,
        "group variance {gvar} ± {gse_var}, expected {expected}"
    );
    // And persist=0 gives the independent sum's variance.
    let indep = format!("exp:rate=1,p_slow={p},slowdown={f},persist=0");
    let ys = values(&study(1, &indep, vec![scheme(SchemeKind::Uncoded, 1, 0)], 200_000, t));
    let (_, var0, _, se0) = moments(&ys);
    assert!((var0 - t as f64 * var_x).abs() < 4.0 * se0, "{var0} ± {se0}");
}

fn csv(args: &[&str]) -> String {
    let out = gcsim().args(args).args(["--format", "csv"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("{name}"));
    lines.map(|l| l.split(',').nth(i).unwrap().to_string()).collect()
}

fn number(csv: &str, name: &str, row: usize) -> f64 {
    column(csv, name)[row].parse().unwrap()
}

/// `persist=0` is the independent law, byte for byte; `--iterations 1` is
/// a run without the flag; a persistent law in one iteration has the
/// stationary law's exact mean; T iterations have T times it.
#[test]
fn persist_zero_and_one_iteration_change_nothing() {
    let base = [
        "sweep",
        "--n",
        "10",
        "--scheme",
        "crc,ignore",
        "--s",
        "0,3",
        "--trials",
        "20000",
    ];
    let with = |dist: &str, extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend(["--dist", dist]);
        args.extend(extra);
        csv(&args)
    };
    let plain = with("exp:rate=1,p_slow=0.1,slowdown=4", &["--iterations", "5"]);
    assert_eq!(
        plain,
        with("exp:rate=1,p_slow=0.1,slowdown=4,persist=0", &["--iterations", "5"])
    );
    assert_eq!(
        with("exp:rate=1,p_slow=0.1,slowdown=4", &[]),
        with("exp:rate=1,p_slow=0.1,slowdown=4", &["--iterations", "1"])
    );
    for t in ["1", "8"] {
        let out = with("exp:rate=1,p_slow=0.1,slowdown=4,persist=0.9", &["--iterations", t]);
        assert!(column(&out, "iterations").iter().all(|c| c == t), "{out}");
        for row in 0..4 {
            let (mean, se, exact) = (
                number(&out, "mean", row),
                number(&out, "std_err", row),
                number(&out, "analytic_mean", row),
            );
            assert!(
                (mean - exact).abs() < 4.0 * se,
                "T={t} row {row}: {mean} ± {se} vs {exact}"
            );
        }
        // The total's percentiles have no exact law here.
        let p99 = column(&out, "analytic_p99");
        assert_eq!(p99[0].is_empty(), t != "1", "{out}");
    }
}

/// Groups share their slowdown: a group of every worker is all slow or
/// all normal, so the uncoded time is H_n/μ times 1 or F, with mean
/// (1 − P + P·F)·H_n; groups of one are an own straggler mixture.
#[test]
fn groups_slow_their_workers_together() {
    // `run` on 10 workers with `dist`, and what else `extra` says.
    let run = |dist: &str, extra: &[&str]| {
        let mut args = vec!["run", "--n", "10", "--dist", dist];
        args.extend(extra);
        csv(&args)
    };
    let h10: f64 = (1..=10).map(|i| 1.0 / i as f64).sum();
    let uncoded = ["--scheme", "uncoded", "--trials", "200000"];
    let out = run("exp:rate=1,group=10,p_group=0.3,group_slowdown=4", &uncoded);
    let (mean, se) = (number(&out, "mean", 0), number(&out, "std_err", 0));
    let exact = (0.7 + 0.3 * 4.0) * h10;
    assert!((mean - exact).abs() < 4.0 * se, "{mean} ± {se} vs {exact}");
    // Independent slowdowns of the same marginal law give a larger maximum.
    let indep = run("exp:rate=1,p_slow=0.3,slowdown=4", &uncoded);
    assert!(number(&indep, "mean", 0) > exact + 20.0 * se, "{indep}");
    let crc = ["--scheme", "crc", "--s", "2"];
    let one = run(
        "exp:rate=1,group=1,p_group=0.3,group_slowdown=4",
        &[&crc[..], &["--trials", "200000"]].concat(),
    );
    let own = run(
        "exp:rate=1,p_slow=0.3,slowdown=4",
        &[&crc[..], &["--analytic"]].concat(),
    );
    let (mean, se, exact) = (
        number(&one, "mean", 0),
        number(&one, "std_err", 0),
        number(&own, "mean", 0),
    );
    assert!((mean - exact).abs() < 4.0 * se, "{mean} ± {se} vs {exact}");
}

fn trace(text: &str) -> Workers {
    Workers::Replay(Arc::new(Trace::parse("test.csv", text).unwrap()))
}

/// A replay over several iterations steps through consecutive recorded
/// steps from a random start, wrapping, each worker replaying one recorded
/// worker: over as many iterations as there are steps, every trial's total
/// is the sum over all steps.
#[test]
fn replay_steps_through_consecutive_steps() {
    let mut text = String::from("step,worker,time\n");
    let times: [[f64; 2]; 5] = [[1.0, 2.0], [5.0, 3.0], [0.5, 0.25], [2.0, 8.0], [4.0, 4.5]];
    for (s, step) in times.iter().enumerate() {
        for (w, t) in step.iter().enumerate() {
            text.push_str(&format!("{s},{w},{t}\n"));
        }
    }
    let maxima: Vec<f64> = times.iter().map(|s| s[0].max(s[1])).collect();
    let run = |n: usize, iterations: u64, workers: Workers| {
        let schemes = vec![scheme(SchemeKind::Uncoded, n, 0)];
        let study = Study::with_workers(n, workers, LoadModel::Fixed, schemes, 2000, 3)
            .unwrap()
            .with_iterations(iterations)
            .unwrap();
        values(&study)
    };
    let total: f64 = maxima.iter().sum();
    assert!(run(2, 5, trace(&text)).iter().all(|&v| v == total));
    // Two iterations: a step and the next, wrapping; every start occurs.
    let pairs: Vec<f64> = (0..5).map(|s| maxima[s] + maxima[(s + 1) % 5]).collect();
    let two = run(2, 2, trace(&text));
    assert!(two.iter().all(|v| pairs.contains(v)), "{two:?}");
    assert!(pairs.iter().all(|p| two.contains(p)));
    // One worker replaying one of the two recorded workers throughout.
    let (w0, w1): (f64, f64) = (times.iter().map(|s| s[0]).sum(), times.iter().map(|s| s[1]).sum());
    let one = run(1, 5, trace(&text));
    assert!(one.iter().all(|&v| v == w0 || v == w1), "{one:?}");
    assert!(one.contains(&w0) && one.contains(&w1));
}

/// `inclusion_min`/`inclusion_max`: a shuffled placement holds for the
/// whole trial, so `ignore` and the batch and asynchronous strategies
/// with one far faster worker keep using the same partition; i.i.d.
/// workers use every partition about equally, and persistent stragglers
/// make the least-used partition rarer. K-batch-sync on exponential
/// workers takes each mini-batch from a uniformly random worker
/// (memorylessness), so a partition is in an update of K mini-batches
/// with probability 1 − (1 − 1/n)^K.
#[test]
fn inclusion_shows_which_data_is_dropped() {
    let classes = csv(&[
        "sweep",
        "--n",
        "2",
        "--workers",
        "1:exp:rate=1000",
        "--workers",
        "1:exp:rate=0.001",
        "--shuffle-placement",
        "--scheme",
        "ignore,k-batch-sync,k-async,k-batch-async",
        "--s",
        "1",
        "--iterations",
        "40",
        "--trials",
        "400",
    ]);
    // One update's worth from one worker (K = n − s = 1): the fast one's.
    for row in 0..4 {
        assert!(number(&classes, "inclusion_min", row) < 0.01, "{classes}");
        assert!(number(&classes, "inclusion_max", row) > 0.99, "{classes}");
    }
    let share = |dist: &str| {
        let out = csv(&[
            "sweep",
            "--n",
            "10",
            "--scheme",
            "ignore,crc",
            "--s",
            "2",
            "--dist",
            dist,
            "--iterations",
            "200",
            "--trials",
            "400",
        ]);
        assert_eq!(column(&out, "inclusion_min")[1], "", "exact schemes have none: {out}");
        (number(&out, "inclusion_min", 0), number(&out, "inclusion_max", 0))
    };
    let (lo, hi) = share("exp:rate=1");
    assert!(lo < 0.8 && hi > 0.8 && lo > 0.7 && hi < 0.9, "{lo} {hi}");
    let (plo, _) = share("exp:rate=1,p_slow=0.2,slowdown=50,persist=0.95");
    assert!(plo < lo - 0.1, "{plo} vs {lo}");
    let batch = csv(&[
        "sweep",
        "--n",
        "10",
        "--scheme",
        "k-batch-sync",
        "--k",
        "8",
        "--iterations",
        "200",
        "--trials",
        "400",
    ]);
    let p = 1.0 - 0.9f64.powi(8);
    let (lo, hi) = (number(&batch, "inclusion_min", 0), number(&batch, "inclusion_max", 0));
    assert!(lo < p && p < hi && hi - lo < 0.2, "{lo} {p} {hi}");
}

/// Shards of a persistent run merge into the single run's bytes, and a
/// scenario's `iterations` key gives the command line's rows.
#[test]
fn iterations_in_shards_and_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "sweep",
        "--n",
        "10",
        "--scheme",
        "uncoded,ignore",
        "--s",
        "2",
        "--dist",
        "exp:rate=1,p_slow=0.1,slowdown=5,group=5,p_group=0.1,group_slowdown=2,persist=0.8",
        "--iterations",
        "3",
        "--trials",
        "1100000",
    ];
    let whole = csv(&args);
    assert_eq!(merged_halves(dir.path(), &args), whole);
    scenario(
        dir.path(),
        "runs",
        "trials = 1100000\niterations = 3\ndist = \"exp:rate=1,p_slow=0.1,slowdown=5,group=5,p_group=0.1,group_slowdown=2,persist=0.8\"\n[[study]]\nlabel = \"t\"\nschemes = [\"uncoded\", \"ignore\"]\ns = 2\n",
    )
    .assert()
    .success();
    let from_scenario = std::fs::read_to_string(dir.path().join("runs/t.csv")).unwrap();
    assert_eq!(from_scenario, whole);
}

#[test]
fn bad_persistence_input_is_refused() {
    let run = ["run", "--n", "4", "--scheme", "crc", "--s", "1"];
    let with = |extra: &[&'static str]| [&run[..], extra].concat();
    for (extra, expected) in [
        (&["--iterations", "0"][..], &["--iterations", "accepted"][..]),
        (&["--iterations", "20000000"], &["--iterations", "10000000"]),
        (&["--iterations", "ten"], &["--iterations"]),
        (
            &["--analytic", "--iterations", "5"],
            &["--analytic", "--iterations 5", "no exact law"],
        ),
        (&["--dist", "exp:rate=1,persist=0.5"], &["persist", "p_slow"]),
        (
            &["--dist", "exp:rate=1,p_slow=0.1,slowdown=2,persist=1"],
            &["persist=1", "[0, 1)"],
        ),
        (&["--dist", "exp:rate=1,group=3,p_group=0.1"], &["group_slowdown"]),
        (
            &["--dist", "exp:rate=1,group=0,p_group=0.1,group_slowdown=2"],
            &["group=0"],
        ),
        (
            &["--comm-dist", "exp:rate=1,p_slow=0.1,slowdown=2,persist=0.5"],
            &["--comm-dist", "describe workers"],
        ),
        (
            &["--workers", "4:exp:rate=1,group=2,p_group=0.1,group_slowdown=2"],
            &["whole cluster"],
        ),
        (
            &["--iterations", "10000000", "--trials", "100000000"],
            &["--trials or --iterations"],
        ),
    ] {
        assert_usage_error(&with(extra), None, expected);
    }
    let dir = tempfile::tempdir().unwrap();
    let out = scenario(
        dir.path(),
        "bad",
        "iterations = 0\n[[study]]\nlabel = \"t\"\nschemes = [\"crc\"]\ns = 1\n",
    )
    .output()
    .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("iterations 0 is out of range") && err.contains(":3"),
        "{err}"
    );
}

/// `train`, synchronous (additive crc, k-batch-sync) and asynchronous
/// (k-async, k-batch-async, whose states step per update): a slow worker
/// is slow for every draw of its iteration with or without `persist`, so
/// `persist=1e-6` draws the same states from the same uniforms as no
/// `persist` and prints the same bytes at this seed.
#[test]
fn train_with_a_vanishing_persist_is_train_without() {
    let train = |schemes: &[&str], extra: &str| {
        let dist = format!("exp:rate=1,p_slow=0.1,slowdown=6{extra}");
        let mut args = vec!["train", "--n", "10", "--k", "3", "--load-model", "additive"];
        args.extend(["--iterations", "30", "--repeats", "10", "--dist", &dist]);
        args.extend(schemes);
        csv(&args)
    };
    for schemes in [
        &["--scheme", "crc,k-batch-sync", "--s", "2"][..],
        &["--scheme", "k-async,k-batch-async"],
    ] {
        assert_eq!(train(schemes, ""), train(schemes, ",persist=0.000001"), "{schemes:?}");
    }
}
