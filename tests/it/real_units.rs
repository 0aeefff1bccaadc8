//! Decisions in real units: the planner's safe defaults (the load model,
//! linear-only codes, the bound on the load, "keep uncoded"), the time unit
//! of the output, the cost view in seconds, GPU-hours and bytes, and what-ifs
//! over the cluster size with measured traces.

use assert_cmd::Command;
use serde_json::Value;

/// Runs gcsim with `args` and the JSON output; panics on failure.
fn json(args: &[&str]) -> Value {
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .args(args)
        .args(["--format", "json", "--threads", "2"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// stdout and stderr of a successful run.
fn texts(args: &[&str]) -> (String, String) {
    let out = Command::cargo_bin("gcsim").unwrap().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

const WEIBULL: &str = "weibull:scale=5.54374,shape=4.80417";

/// The planner's defaults: `scaled` (said so), at most 4 shares per
/// worker, no mds; `fixed` chosen explicitly is warned of.
#[test]
fn plan_defaults_are_safe_and_say_so() {
    let v = json(&["plan", "--n", "64", "--dist", WEIBULL]);
    assert_eq!(v["config"]["load_model"], "scaled");
    let notes = v["config"]["notes"].to_string();
    assert!(notes.contains("load-model=scaled by default"), "{notes}");
    assert!(notes.contains("max-load=4 by default"), "{notes}");
    assert!(notes.contains("mds not searched"), "{notes}");
    let rows = v["rows"].as_array().unwrap();
    assert!(
        rows.iter().all(|r| num(r, "load") <= 4.0),
        "a load above the default bound"
    );
    assert!(rows.iter().all(|r| r["scheme"] != "mds"));
    // Under `scaled` the extra work costs what it saves here: keep uncoded,
    // and the best coded option named with its cost.
    let rec = v["recommendation"].as_str().unwrap();
    assert!(
        rec.starts_with("keep uncoded: no scheme within the limits is faster (n=64"),
        "{rec}"
    );
    assert!(rec.contains("the best coded option, n=64 frc s=1"), "{rec}");

    // fixed, chosen: a warning in the table, on stderr for a file, and the
    // bound still holds (frc s=3, load 4, not s=63).
    let (table, _) = texts(&[
        "plan",
        "--n",
        "64",
        "--dist",
        WEIBULL,
        "--load-model",
        "fixed",
        "--format",
        "table",
    ]);
    assert!(
        table.contains("# warning: --load-model fixed makes extra work free"),
        "{table}"
    );
    assert!(table.contains("recommend: n=64 frc s=3:"), "{table}");
    let (_, err) = texts(&[
        "plan",
        "--n",
        "64",
        "--dist",
        WEIBULL,
        "--load-model",
        "fixed",
        "--format",
        "csv",
    ]);
    assert!(
        err.contains("warning: --load-model fixed makes extra work free"),
        "{err}"
    );
    let (table, _) = texts(&[
        "plan",
        "--n",
        "64",
        "--dist",
        WEIBULL,
        "--load-model",
        "affine",
        "--unit-time",
        "0.1",
        "--format",
        "table",
    ]);
    assert!(
        !table.contains("warning") && !table.contains("load-model=scaled by default"),
        "{table}"
    );

    // --linear searches mds; --max-load inf lifts the bound.
    let v = json(&[
        "plan",
        "--n",
        "12",
        "--linear",
        "--max-load",
        "inf",
        "--load-model",
        "fixed",
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["scheme"] == "mds"));
    assert!(rows.iter().any(|r| num(r, "load") > 4.0));
    assert_eq!(v["config"]["max_load"], Value::Null);
    assert!(!v["config"]["notes"].to_string().contains("mds not searched"));
    // Uncoded appears once: the codes at s = 0 are it under another name.
    let at_load_one = rows
        .iter()
        .filter(|r| num(r, "load") == 1.0 && num(r, "k") == 12.0)
        .count();
    assert_eq!(at_load_one, 1, "{rows:?}");
}

/// A trace is in seconds; `--time-unit ms` converts it, and every time of
/// the output is 1000 times the seconds' (the same draws).
#[test]
fn times_carry_their_unit() {
    let args = [
        "sweep",
        "--n",
        "8",
        "--s",
        "0..2",
        "--dist",
        "replay:path=data/trace-llm-8w.csv",
    ];
    let trials = ["--trials", "3000"];
    let s = json(&[&args[..], &trials].concat());
    let ms = json(&[&args[..], &trials, &["--time-unit", "ms"]].concat());
    assert_eq!(s["config"]["time_unit"], "s");
    assert_eq!(ms["config"]["time_unit"], "ms");
    assert_eq!(ms["config"]["dist"], "replay:path=data/trace-llm-8w.csv,scale=1000");
    for (a, b) in s["rows"].as_array().unwrap().iter().zip(ms["rows"].as_array().unwrap()) {
        for key in ["mean", "p50", "p99", "ci95_low"] {
            assert!(rel(num(b, key), 1000.0 * num(a, key)) < 1e-12, "{key}: {a} {b}");
        }
        assert!(rel(num(b, "speedup"), num(a, "speedup")) < 1e-12);
    }
    let (table, _) = texts(&[&args[..], &trials, &["--format", "table"]].concat());
    assert!(table.contains("# times in seconds;"), "{table}");
    let (table, _) = texts(&["sweep", "--n", "8", "--s", "1", "--trials", "1000", "--format", "table"]);
    assert!(table.contains("# times in the unit of --dist (--time-unit"), "{table}");
    let (table, _) = texts(&[
        "sweep",
        "--n",
        "8",
        "--s",
        "1",
        "--trials",
        "1000",
        "--time-unit",
        "us",
        "--format",
        "table",
    ]);
    assert!(table.contains("# times in microseconds;"), "{table}");
}

/// The cost columns follow their definitions from the row's own mean,
/// load and message: hours = iterations × mean, GPU-hours = n × hours,
/// storage = load × data / n, bytes = n × messages × message × gradient.
#[test]
fn sweep_costs_follow_from_each_row() {
    let v = json(&[
        "sweep",
        "--n",
        "12",
        "--s",
        "0..3",
        "--m",
        "2",
        "--scheme",
        "crc,comm-efficient,multi-message",
        "--trials",
        "4000",
        "--time-unit",
        "ms",
        "--iterations-per-run",
        "36000",
        "--gpu-hour-price",
        "3",
        "--dataset-size",
        "12GB",
        "--gradient-size",
        "100MB",
    ]);
    assert_eq!(v["config"]["costs"]["iterations_per_run"], 36000);
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.len() >= 8, "{rows:?}");
    for r in rows {
        let (mean, n, load, message) = (num(r, "mean"), num(r, "n"), num(r, "load"), num(r, "message"));
        let seconds = mean / 1000.0;
        assert!(rel(num(r, "iterations_per_hour"), 3600.0 / seconds) < 1e-12, "{r}");
        assert!(rel(num(r, "run_hours"), 36000.0 * seconds / 3600.0) < 1e-12, "{r}");
        assert!(rel(num(r, "gpu_hours"), n * num(r, "run_hours")) < 1e-12, "{r}");
        assert!(rel(num(r, "cost"), 3.0 * num(r, "gpu_hours")) < 1e-12, "{r}");
        assert!(rel(num(r, "storage_bytes"), load * 12e9 / n) < 1e-12, "{r}");
        let messages = if r["scheme"] == "multi-message" {
            num(r, "s") + 1.0
        } else {
            1.0
        };
        assert!(
            rel(num(r, "bytes_per_iteration"), n * messages * message * 1e8) < 1e-12,
            "{r}"
        );
    }
    assert!(
        rows.iter()
            .any(|r| r["scheme"] == "comm-efficient" && num(r, "message") == 0.5)
    );
    // Without cost flags, no cost columns at all.
    let plain = json(&["sweep", "--n", "12", "--s", "1", "--trials", "1000", "--time-unit", "s"]);
    assert!(plain["rows"][0].get("run_hours").is_none() && plain["config"].get("costs").is_none());
    // Sizes alone need no time unit.
    let sizes = json(&[
        "sweep",
        "--n",
        "12",
        "--s",
        "1",
        "--trials",
        "1000",
        "--dataset-size",
        "1.2MB",
    ]);
    assert_eq!(num(&sizes["rows"][0], "storage_bytes"), 2.0 * 1.2e6 / 12.0);
    assert!(sizes["rows"][0].get("run_hours").is_none());
}

/// `--objective cost` ranks by a run's cost, which favours the smaller of
/// two clusters of equal speed; the objective is the cost column and its
/// interval the mean's, scaled alike.
#[test]
fn plan_ranks_by_cost() {
    let v = json(&[
        "plan",
        "--n",
        "8,16",
        "--dist",
        "shifted-exp:shift=1,rate=2",
        "--ref-n",
        "8",
        "--scheme",
        "uncoded,crc",
        "--objective",
        "cost",
        "--time-unit",
        "s",
        "--iterations-per-run",
        "7200",
        "--gpu-hour-price",
        "2",
        "--simulate",
        "--trials",
        "4000",
    ]);
    let rows = v["rows"].as_array().unwrap();
    let objectives: Vec<f64> = rows.iter().map(|r| num(r, "objective")).collect();
    assert!(objectives.windows(2).all(|w| w[0] <= w[1]), "{objectives:?}");
    for r in rows {
        let cost = 2.0 * num(r, "n") * 7200.0 * num(r, "mean") / 3600.0;
        assert!(rel(num(r, "cost"), cost) < 1e-12, "{r}");
        assert!(rel(num(r, "objective"), cost) < 1e-12, "{r}");
    }
    let rec = v["recommendation"].as_str().unwrap();
    assert!(rec.contains("cost ") && rec.contains("per run ("), "{rec}");
    // By the mean the larger cluster is faster; by cost the smaller is cheaper.
    let by_mean = json(&[
        "plan",
        "--n",
        "8,16",
        "--dist",
        "shifted-exp:shift=1,rate=2",
        "--ref-n",
        "8",
        "--scheme",
        "uncoded,crc",
        "--time-unit",
        "s",
        "--simulate",
        "--trials",
        "4000",
    ]);
    assert_eq!(num(&by_mean["rows"][0], "n"), 16.0);
    assert_eq!(num(&rows[0], "n"), 8.0);
    // The interval of the cost is the mean's, times the same constant.
    for r in rows {
        let same = |m: &&Value| m["n"] == r["n"] && m["scheme"] == r["scheme"] && m["s"] == r["s"];
        let m = by_mean["rows"].as_array().unwrap().iter().find(same).unwrap();
        let factor = num(r, "objective") / num(m, "objective");
        for end in ["objective_low", "objective_high"] {
            assert!(rel(num(r, end), factor * num(m, end)) < 1e-12, "{r} {m}");
        }
        assert!(num(r, "objective_low") < num(r, "objective") && num(r, "objective") < num(r, "objective_high"));
    }
}

/// A 64-worker trace plans 32 and 128 workers: --ref-n scales the recorded
/// times by N0/n under `scaled`, and a replay at another n says how its
/// workers are drawn.
#[test]
fn traces_plan_other_cluster_sizes() {
    let trace = "replay:path=data/trace-llm-64w.csv";
    let base = ["plan", "--dist", trace, "--scheme", "uncoded", "--trials", "3000"];
    let plain = json(&[&base[..], &["--n", "32"]].concat());
    let scaled = json(&[&base[..], &["--n", "32", "--ref-n", "64"]].concat());
    // Same draws, every time doubled (64/32).
    assert!(rel(num(&scaled["rows"][0], "mean"), 2.0 * num(&plain["rows"][0], "mean")) < 1e-12);
    assert!(rel(num(&scaled["rows"][0], "load"), 2.0) < 1e-12);
    let warn = plain["config"]["warnings"].to_string();
    assert!(warn.contains("replay at n=32 from a trace of 64 workers"), "{warn}");
    assert!(warn.contains("drawn with replacement"), "{warn}");
    let same = json(&[&base[..], &["--n", "64"]].concat());
    let warn = same["config"]["warnings"].to_string();
    assert!(!warn.contains("replay at"), "{warn}");
    // 43 recorded steps: the short-trace warning, and the bootstrap's note.
    assert!(
        warn.contains("the trace has 43 complete steps (fewer than 100)"),
        "{warn}"
    );
    let notes = same["config"]["notes"].to_string();
    assert!(
        notes.contains("uncertainty of the trace's 43 recorded steps: a bootstrap over steps (30 replicates"),
        "{notes}"
    );
    let off = json(&[&base[..], &["--n", "64", "--trace-bootstrap", "0"]].concat());
    assert!(!off["config"]["notes"].to_string().contains("bootstrap over steps"));
    let p99 = |v: &Value| num(&v["rows"][0], "objective_high") - num(&v["rows"][0], "objective_low");
    let (with, without) = (
        json(&[&base[..], &["--n", "64", "--objective", "p99"]].concat()),
        json(
            &[
                &base[..],
                &["--n", "64", "--objective", "p99", "--trace-bootstrap", "0"],
            ]
            .concat(),
        ),
    );
    assert!(
        p99(&with) > 5.0 * p99(&without).max(1e-3),
        "{} vs {}",
        p99(&with),
        p99(&without)
    );
    let (_, err) = texts(&[
        "sweep", "--n", "128", "--s", "1", "--dist", trace, "--trials", "2000", "--format", "csv",
    ]);
    assert!(
        err.contains("warning: replay at n=128 from a trace of 64 workers"),
        "{err}"
    );
    assert!(err.contains("larger cluster"), "{err}");
}

/// The bootstrap over steps covers the truth at its nominal rate: traces of
/// 40 steps of 8 i.i.d. exp(1) workers, replayed, estimate the uncoded mean
/// E[max of 8] = H_8. Monte Carlo error alone (about ±0.06) covers it
/// rarely, since the 40 recorded steps carry a standard error of
/// sd(max)/√40 ≈ 0.195; with the data's variance added the 95% interval
/// should cover in about 95% of 80 traces (binomial standard error 2.4%)
/// and have a half-width near 1.96·√(0.195² + 0.028²) ≈ 0.39.
#[test]
fn trace_bootstrap_covers_the_truth() {
    use gcsim::engine;
    use gcsim::load::LoadModel;
    use gcsim::plan::{Objective, PlanRequest, plan};
    use gcsim::scheme::SchemeKind;
    use gcsim::trace::Trace;
    use gcsim::workers::Workers;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Exp};
    use std::sync::Arc;

    let truth: f64 = (1..=8).map(|k| 1.0 / k as f64).sum();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    let exp = Exp::new(1.0).unwrap();
    let (reps, mut covered, mut covered_mc, mut half) = (80, 0, 0, 0.0);
    for r in 0..reps {
        let mut text = String::from("step,worker,time\n");
        for step in 0..40 {
            for w in 0..8 {
                text += &format!("{step},{w},{}\n", exp.sample(&mut rng));
            }
        }
        let trace = Arc::new(Trace::parse("synthetic.csv", &text).unwrap());
        let request = |replicates| PlanRequest {
            trials: 2000,
            seed: r,
            data_replicates: replicates,
            parallel: None,
            ..super::plan::request(
                8,
                Workers::Replay(trace.clone()),
                LoadModel::Fixed,
                vec![SchemeKind::Uncoded],
                Objective::Mean,
            )
        };
        let simulate = |study: &gcsim::study::Study, options: &engine::Options| {
            engine::simulate_full(&engine::TrialPlan::new(study), study, &engine::Silent, options)
        };
        let row = &plan(&request(30), &simulate).unwrap()[0];
        let (lo, hi) = (row.objective_low.unwrap(), row.objective_high.unwrap());
        covered += usize::from(lo <= truth && truth <= hi);
        half += (hi - lo) / 2.0 / reps as f64;
        let mc = &plan(&request(0), &simulate).unwrap()[0];
        assert_eq!(mc.objective, row.objective, "the estimate itself does not change");
        covered_mc += usize::from(mc.objective_low.unwrap() <= truth && truth <= mc.objective_high.unwrap());
    }
    let rate = covered as f64 / reps as f64;
    assert!((0.85..=1.0).contains(&rate), "coverage {rate} ({covered} of {reps})");
    assert!((0.30..=0.47).contains(&half), "mean half-width {half}");
    assert!(
        (covered_mc as u64) < reps / 2,
        "Monte Carlo error alone covered {covered_mc} of {reps}"
    );
}

/// The cost columns reach every output: the tables of run (key: value) and
/// sweep, and `--columns` of a merge of shards.
#[test]
fn cost_columns_reach_tables_and_merges() {
    let costs = [
        "--time-unit",
        "s",
        "--iterations-per-run",
        "100",
        "--gpu-hour-price",
        "2",
        "--dataset-size",
        "1GB",
    ];
    let (run, _) = texts(
        &[
            &[
                "run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "1000", "--format", "table",
            ][..],
            &costs,
        ]
        .concat(),
    );
    for key in [
        "iterations_per_hour:",
        "run_hours:",
        "gpu_hours:",
        "cost:",
        "storage_bytes:",
    ] {
        assert!(run.contains(key), "{key} in {run}");
    }
    let (sweep, _) = texts(
        &[
            &[
                "sweep", "--n", "8", "--s", "0..1", "--trials", "1000", "--format", "table",
            ][..],
            &costs,
        ]
        .concat(),
    );
    let header = sweep.lines().find(|l| l.starts_with("scheme")).unwrap();
    let names: Vec<&str> = header.split_whitespace().collect();
    assert!(
        names.ends_with(&["iterations_per_hour", "run_hours", "gpu_hours", "cost", "storage_bytes"]),
        "{header}"
    );
    let dir = std::env::temp_dir().join(format!("gcsim-cost-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let part = |i: usize| dir.join(format!("p{i}.json")).display().to_string();
    for i in 1..=2 {
        let shard = format!("{i}/2");
        texts(
            &[
                &[
                    "sweep",
                    "--n",
                    "8",
                    "--s",
                    "0..1",
                    "--trials",
                    "2097152",
                    "--shard",
                    &shard,
                    "--out",
                    &part(i),
                    "-q",
                ][..],
                &costs,
            ]
            .concat(),
        );
    }
    let (merged, _) = texts(&[
        "merge",
        &part(1),
        &part(2),
        "--format",
        "csv",
        "--columns",
        "s,mean,cost",
    ]);
    let lines: Vec<&str> = merged.lines().collect();
    assert_eq!(lines[0], "s,mean,cost");
    for line in &lines[1..] {
        let cells: Vec<f64> = line.split(',').map(|c| c.parse().unwrap()).collect();
        assert!(rel(cells[2], 2.0 * 8.0 * 100.0 * cells[1] / 3600.0) < 1e-12, "{line}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `sweep --n 16,32` is the two sweeps, row for row (each size on its own
/// draws of the same seed), under one header that names both sizes; what
/// does not fit several sizes is refused.
#[test]
fn sweep_takes_several_cluster_sizes() {
    let args = [
        "sweep",
        "--s",
        "0..2",
        "--scheme",
        "uncoded,crc",
        "--trials",
        "3000",
        "--format",
        "csv",
    ];
    let (both, _) = texts(&[&args[..], &["--n", "16,32"]].concat());
    let (a, _) = texts(&[&args[..], &["--n", "16"]].concat());
    let (b, _) = texts(&[&args[..], &["--n", "32"]].concat());
    let expected: Vec<&str> = a.lines().chain(b.lines().skip(1)).collect();
    assert_eq!(both.lines().collect::<Vec<_>>(), expected);
    let v = json(&["sweep", "--n", "16,32", "--s", "1", "--trials", "1000"]);
    assert_eq!(v["config"]["sizes"], "16,32");
    let (table, _) = texts(&[
        "sweep", "--n", "8..10", "--s", "1", "--trials", "1000", "--format", "table",
    ]);
    assert!(table.starts_with("# gcsim sweep n=8..10 "), "{table}");
    for (extra, says) in [
        (&["--plot", "x.png"][..], "--plot draws one cluster size"),
        (
            &["--shard", "1/2", "--out", "x.json"][..],
            "--shard runs one cluster size",
        ),
        (&["--workers", "8:exp:rate=1"][..], "--workers fixes n"),
    ] {
        let out = Command::cargo_bin("gcsim")
            .unwrap()
            .args(["sweep", "--n", "8,16", "--s", "1"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(says), "{err}");
    }
}
