//! `gcsim trace` end to end on the shipped traces, small edge-case traces,
//! its heatmap and its errors.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use gcsim::dist::Dist;
use predicates::prelude::*;

use crate::errors::assert_usage_error;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join(name)
}

/// Runs `gcsim trace` with `args` after the file, expecting success.
fn run(file: &Path, args: &[&str]) -> (String, String) {
    let out = gcsim().arg("trace").arg(file).args(args).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{}: {stderr}", file.display());
    assert!(!stderr.contains("panicked"), "{stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

fn json(file: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&run(file, &all).0).unwrap()
}

/// The fitted string, which the `--dist` parser reads whole.
fn fitted_law(fitted: &str) -> Dist {
    fitted.parse().unwrap_or_else(|e| panic!("{fitted}: {e}"))
}

#[test]
fn json_has_every_field() {
    for (name, workers, steps) in [("trace-llm-8w.csv", 8, 32), ("trace-llm-64w.csv", 64, 43)] {
        let v = json(&trace(name), &[]);
        assert_eq!(v["workers"], workers, "{name}");
        assert_eq!(v["steps"], steps, "{name}");
        assert_eq!(v["s"], (workers / 10).max(1));
        assert_eq!(v["s_source"], "default max(1, n/10)");
        let rows = v["per_worker"].as_array().unwrap();
        assert_eq!(rows.len(), workers);
        for key in [
            "worker",
            "mean",
            "rank",
            "slowest_share",
            "stay_slowest",
            "autocorrelation",
            "slow_state_share",
        ] {
            assert!(rows.iter().all(|r| r.get(key).is_some()), "{name}: {key}");
        }
        let mut ranks: Vec<u64> = rows.iter().map(|r| r["rank"].as_u64().unwrap()).collect();
        ranks.sort();
        assert_eq!(ranks, (1..=workers as u64).collect::<Vec<_>>());
        let shares: f64 = rows.iter().map(|r| r["slowest_share"].as_f64().unwrap()).sum();
        assert!((shares - v["s"].as_f64().unwrap()).abs() < 1e-9, "{shares}");
        assert!(v["mean_cross_correlation"].is_f64() && v["mean_autocorrelation"].is_f64());
        let m = &v["model"];
        for key in [
            "method",
            "slow_state",
            "p_slow",
            "p_slow_se",
            "slowdown",
            "slowdown_se",
            "persist",
            "persist_se",
            "separation",
            "standard_errors",
            "base",
        ] {
            assert!(m.get(key).is_some(), "{name}: model.{key}");
        }
        assert!(m["method"].as_str().unwrap().contains("Baum-Welch"));
        let fitted = v["fitted"].as_str().unwrap();
        let law = fitted_law(fitted);
        assert!(fitted.starts_with(m["base"].as_str().unwrap()), "{fitted}");
        // Both traces hold two groups of workers: the model finds them, and
        // the warnings call them heterogeneity.
        assert_eq!(m["slow_state"], true, "{name}");
        assert!(law.stragglers().is_some(), "{fitted}");
        // States that never change: the largest persistence the simulator takes.
        assert_eq!(law.persist(), 0.999, "{fitted}");
        let warnings: Vec<&str> = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&format!("estimates from {steps} steps are rough")))
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("heterogeneity") && w.contains("--workers"))
        );
    }
}

/// The groups of each trace: stage 2 of the 64-worker trace (its upper 32
/// workers) and the last two workers of the 8-worker one.
#[test]
fn finds_the_slow_groups() {
    let v = json(&trace("trace-llm-64w.csv"), &[]);
    let m = &v["model"];
    assert!((m["p_slow"].as_f64().unwrap() - 0.5).abs() < 1e-6, "{m}");
    let slowdown = m["slowdown"].as_f64().unwrap();
    assert!((1.4..1.6).contains(&slowdown), "{slowdown}");
    let rows = v["per_worker"].as_array().unwrap();
    for (i, r) in rows.iter().enumerate() {
        let share = r["slow_state_share"].as_f64().unwrap();
        assert_eq!(share, if i < 32 { 0.0 } else { 1.0 }, "worker {}", r["worker"]);
    }
    let v = json(&trace("trace-llm-8w.csv"), &["--s", "2"]);
    assert_eq!((v["s"].as_u64(), v["s_source"].as_str()), (Some(2), Some("given")));
    let rows = v["per_worker"].as_array().unwrap();
    let top: Vec<u64> = rows
        .iter()
        .filter(|r| r["rank"].as_u64().unwrap() <= 2)
        .map(|r| r["worker"].as_u64().unwrap())
        .collect();
    assert_eq!(top, [6, 7]);
    // With s = 2, workers 6 and 7 are the two slowest of every step.
    for r in &rows[6..] {
        assert_eq!(
            (r["slowest_share"].as_f64(), r["stay_slowest"].as_f64()),
            (Some(1.0), Some(1.0))
        );
    }
}

#[test]
fn table_ends_with_the_fitted_line_and_csv_has_a_row_per_worker() {
    let (table, stderr) = run(&trace("trace-llm-64w.csv"), &["--format", "table"]);
    let last = table.lines().last().unwrap();
    let fitted = last.strip_prefix("fitted: --dist ").unwrap_or_else(|| panic!("{last}"));
    fitted_law(fitted);
    // The line runs as it is, over consecutive iterations.
    Command::cargo_bin("gcsim")
        .unwrap()
        .args([
            "run",
            "--n",
            "64",
            "--scheme",
            "crc",
            "--s",
            "3",
            "--iterations",
            "20",
            "--trials",
            "500",
        ])
        .args(["--dist", fitted])
        .assert()
        .success();
    assert!(
        table.contains("# warning: estimates from 43 steps are rough"),
        "{table}"
    );
    assert!(table.contains("mean cross-worker correlation"), "{table}");
    assert!(
        stderr.contains("warning: estimates from 43 steps are rough"),
        "{stderr}"
    );

    let (csv, stderr) = run(&trace("trace-llm-64w.csv"), &["--format", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "worker,mean,rank,slowest_share,stay_slowest,autocorrelation,slow_state_share"
    );
    assert_eq!(lines.count(), 64);
    assert!(stderr.lines().any(|l| l == last), "{stderr}");
}

#[test]
fn out_writes_the_file_and_prints_the_fitted_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.json");
    let (stdout, _) = run(&trace("trace-llm-8w.csv"), &["--out", out.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        stdout.trim(),
        format!("fitted: --dist {}", v["fitted"].as_str().unwrap())
    );
}

/// Width and height of a PNG, and whether it has more than one colour.
fn png_size(path: &Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    let px = frame.line_size / frame.width as usize;
    assert!(buf.chunks(px).any(|p| p[..3] != buf[..3]), "blank image");
    (frame.width, frame.height)
}

#[test]
fn plot_writes_a_heatmap() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("heat.png");
    let (_, stderr) = run(
        &trace("trace-llm-8w.csv"),
        &["--format", "csv", "--plot", png.to_str().unwrap()],
    );
    assert!(stderr.contains("wrote figure"), "{stderr}");
    assert_eq!(png_size(&png), gcsim_figures::plot::SIZE);
    let svg = dir.path().join("heat.svg");
    run(
        &trace("trace-llm-64w.csv"),
        &["--format", "csv", "--plot", svg.to_str().unwrap()],
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    for label in ["time / step median", "trace-llm-64w.csv", "worker", "step"] {
        assert!(text.contains(label), "no {label} in the SVG");
    }
    // No temporary file is left beside the figures.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

/// Too few steps, constant workers and a single worker: the undefined
/// statistics are empty (null in JSON, `-` in the table), never NaN, and a
/// note says why.
#[test]
fn undefined_statistics_are_empty_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let two_steps = write(
        "two.csv",
        "step,worker,time\n1,0,1\n1,1,2\n1,2,3\n2,0,1\n2,1,2.5\n2,2,3\n",
    );
    let constant = write(
        "constant.csv",
        "step,worker,time\n1,0,1\n1,1,2\n2,0,1\n2,1,2.5\n3,0,1\n3,1,2.2\n4,0,1\n4,1,2\n",
    );
    let one_worker = write("one.csv", "step,worker,time\n1,0,1\n2,0,1.5\n3,0,1.2\n4,0,1.1\n");
    let flat = write(
        "flat.csv",
        "step,worker,time\n1,0,2\n1,1,2\n2,0,2\n2,1,2\n3,0,2\n3,1,2\n",
    );
    for (file, note) in [
        (&two_steps, "need at least 3 steps"),
        (&constant, "have the same time in every step"),
        (&one_worker, "one worker"),
        (&flat, "have the same time in every step"),
    ] {
        let v = json(file, &[]);
        let notes = v["notes"].to_string();
        assert!(notes.contains(note), "{}: {notes}", file.display());
        for format in ["table", "csv", "json"] {
            let (out, err) = run(file, &["--format", format]);
            assert!(
                !out.to_lowercase().contains("nan") && !err.to_lowercase().contains("nan"),
                "{} {format}: {out}{err}",
                file.display()
            );
        }
    }
    let v = json(&two_steps, &[]);
    assert!(
        v["per_worker"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["autocorrelation"].is_null())
    );
    assert!(v["mean_cross_correlation"].is_null() && v["model"]["p_slow"].is_null());
    assert_eq!(v["model"]["slow_state"], false);
    let v = json(&constant, &[]);
    assert!(v["per_worker"][0]["autocorrelation"].is_null());
    assert!(v["per_worker"][1]["autocorrelation"].is_f64());
    let v = json(&flat, &[]);
    assert!(
        v["notes"].to_string().contains("no slow state to fit"),
        "{}",
        v["notes"]
    );
    assert!(v["fitted"].is_null());
    let (table, _) = run(&flat, &["--format", "table"]);
    assert!(table.ends_with("fitted: none (see the notes)\n"), "{table}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.csv");
    let file = trace("trace-llm-8w.csv");
    let file = file.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["trace", missing.to_str().unwrap()],
            &["missing.csv: cannot read the trace"],
        ),
        (&["trace", file, "--s", "0"], &["--s", "`0` is out of range", ">= 1"]),
        (&["trace", file, "--s", "-2"], &["--s", "`-2` is negative"]),
        (
            &["trace", file, "--s", "9"],
            &["--s 9 is out of range for a trace of 8 workers; accepted: 1..8"],
        ),
        (&["trace", file, "--format", "xml"], &["'xml'", "--format"]),
        (
            &["trace", file, "--plot", "heat.jpg"],
            &["--plot heat.jpg", ".png, .svg or .pdf"],
        ),
        (
            &["trace", file, "--out", "/nonexistent-dir/t.json"],
            &["does not exist"],
        ),
        (&["trace"], &["<FILE>"]),
    ];
    for (args, expected) in cases {
        assert_usage_error(args, Some(dir.path()), expected);
    }
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "step,worker,time\n1,0,fast\n").unwrap();
    assert_usage_error(
        &["trace", bad.to_str().unwrap()],
        None,
        &["bad.csv:2: time `fast` is not a number"],
    );
}

#[test]
fn help_states_the_method_with_examples() {
    gcsim()
        .args(["trace", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("gcsim trace data/trace-llm-64w.csv"))
        .stdout(predicate::str::contains("--plot heatmap.png"))
        .stdout(predicate::str::contains("Baum-Welch"))
        .stdout(predicate::str::contains("bootstrap over workers"))
        .stdout(predicate::str::contains("max(1, n/10)"));
    gcsim()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("trace").and(predicate::str::contains("persistence")));
}
