//! The `gcsim` binary end to end: outputs, reproducibility and every error.

use assert_cmd::Command;
use predicates::prelude::*;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = gcsim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// SPEC §5's columns, then the communication model's (issue 8: appended, never reordered).
const HEADER: &str = "scheme,n,s,m,k,load,message,exact,trials,mean,std_err,ci95_low,ci95_high,p50,p90,p99,p999,speedup,p99_speedup,analytic_mean,analytic_p99,link,transfer_time,decode_time,decoder,approx_error";

#[test]
fn csv_has_the_spec_columns() {
    let csv = stdout_of(&[
        "sweep",
        "--n",
        "20",
        "--s",
        "0..3",
        "--scheme",
        "crc,comm-efficient",
        "--m",
        "2",
        "--trials",
        "2000",
        "--format",
        "csv",
    ]);
    let mut lines = csv.lines();
    assert_eq!(lines.next().unwrap(), HEADER);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 8);
    for r in &rows {
        assert_eq!(r.len(), 26);
        assert_eq!(r[8], "2000");
        let (mean, analytic): (f64, f64) = (r[9].parse().unwrap(), r[19].parse().unwrap());
        let se: f64 = r[10].parse().unwrap();
        assert!((mean - analytic).abs() < 5.0 * se, "{r:?}");
        assert!(!r.iter().any(|c| c.contains("NaN")));
    }
    assert_eq!(
        &rows[0][..9],
        ["crc", "20", "0", "", "20", "1.0", "1.0", "true", "2000"]
    );
    assert_eq!(
        &rows[5][..8],
        ["comm-efficient", "20", "1", "2", "19", "3.0", "0.5", "true"]
    );
    // crc s=0 is uncoded on the same draws: speedup exactly 1.
    assert_eq!(rows[0][17], "1.0");
}

#[test]
fn piped_output_defaults_to_csv() {
    let out = stdout_of(&["run", "--n", "10", "--scheme", "uncoded", "--trials", "100"]);
    assert!(out.starts_with(HEADER));
}

#[test]
fn json_has_config_and_rows() {
    let out = stdout_of(&[
        "run",
        "--n",
        "12",
        "--scheme",
        "frc",
        "--s",
        "2",
        "--trials",
        "500",
        "--seed",
        "9",
        "--format",
        "json",
        "--load-model",
        "affine",
        "--unit-time",
        "0.5",
        "--dist",
        "exp:mu=2,p_slow=0.1,slowdown=4",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let c = &v["config"];
    assert_eq!(c["n"], 12);
    assert_eq!(c["seed"], 9);
    assert_eq!(c["trials"], 500);
    assert_eq!(c["dist"], "exp:rate=2,p_slow=0.1,slowdown=4");
    assert_eq!(c["load_model"], "affine");
    assert_eq!(c["unit_time"], 0.5);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let keys: Vec<&str> = rows[0].as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected: Vec<&str> = HEADER.split(',').collect();
    expected.sort();
    let mut keys_sorted = keys.clone();
    keys_sorted.sort();
    assert_eq!(keys_sorted, expected);
    assert_eq!(rows[0]["scheme"], "frc");
    assert_eq!(rows[0]["m"], serde_json::Value::Null);
    assert!(rows[0]["analytic_p99"].as_f64().unwrap() > 0.0);
    assert_eq!(rows[0]["load"], 3.0);
}

#[test]
fn analytic_columns_are_empty_where_no_theory_exists() {
    let csv = stdout_of(&[
        "run",
        "--n",
        "6",
        "--scheme",
        "crc",
        "--s",
        "1",
        "--trials",
        "500",
        "--load-model",
        "additive",
        "--dist",
        "pareto:scale=1,shape=3",
    ]);
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((row[19], row[20]), ("", ""));
}

#[test]
fn analytic_mode_gives_exact_values_without_trials() {
    let csv = stdout_of(&["sweep", "--n", "100", "--s", "0,20,50", "--analytic", "--format", "csv"]);
    let rows: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let h = |n: usize| (1..=n).map(|j| 1.0 / j as f64).sum::<f64>();
    for (row, s) in rows.iter().zip([0usize, 20, 50]) {
        assert_eq!(row[8], "0", "no trials");
        assert_eq!(row[10], "", "no standard error");
        let mean: f64 = row[9].parse().unwrap();
        assert!((mean - (h(100) - h(s))).abs() < 1e-12, "{row:?}");
        assert_eq!(row[9], row[19]);
    }
    let speedup: f64 = rows[1][17].parse().unwrap();
    assert!((speedup - 3.26).abs() < 0.005);
    let json = stdout_of(&[
        "run",
        "--n",
        "10",
        "--scheme",
        "crc",
        "--s",
        "1",
        "--analytic",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["config"]["mode"], "analytic");
    // No exact law: a clear error naming the flag.
    gcsim()
        .args([
            "run",
            "--n",
            "10",
            "--scheme",
            "crc",
            "--s",
            "1",
            "--analytic",
            "--load-model",
            "additive",
            "--dist",
            "pareto:scale=1,shape=2",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--analytic: no exact law for crc s=1"));
}

#[test]
fn infinite_means_are_inf_with_a_warning() {
    let args = [
        "run",
        "--n",
        "10",
        "--scheme",
        "crc",
        "--s",
        "1",
        "--dist",
        "pareto:scale=1,shape=0.5",
        "--trials",
        "3000",
    ];
    let out = gcsim().args(args).args(["--format", "csv"]).output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: crc s=1 k=9: the exact mean is infinite"),
        "{stderr}"
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((row[9], row[10], row[11], row[19]), ("inf", "", "", "inf"));
    assert!(!csv.contains("NaN"));
    let json = String::from_utf8(gcsim().args(args).args(["--format", "json"]).output().unwrap().stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["rows"][0]["mean"], "inf");
    assert_eq!(v["rows"][0]["analytic_mean"], "inf");
    assert_eq!(v["rows"][0]["std_err"], serde_json::Value::Null);
    assert!(v["config"]["warnings"][0].as_str().unwrap().contains("infinite"));
}

#[test]
fn table_names_every_parameter() {
    let out = stdout_of(&[
        "sweep", "--n", "30", "--s", "0..5", "--scheme", "frc,crc", "--trials", "1000", "--format", "table",
    ]);
    let first = out.lines().next().unwrap();
    for part in [
        "n=30",
        "dist=exp:rate=1",
        "load-model=fixed",
        "scheme=frc,crc",
        "s=0..5",
        "trials=1000",
        "seed=0",
    ] {
        assert!(first.contains(part), "{first}");
    }
    assert!(out.contains("# skipped: frc at s=3 (s+1 must divide n, n=30)"), "{out}");
    let rows: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(rows[0].starts_with("scheme"));
    assert_eq!(rows.len(), 1 + 5 + 6);
}

#[test]
fn sweep_notes_skipped_values_on_stderr() {
    gcsim()
        .args([
            "sweep", "--n", "10", "--s", "0..3", "--scheme", "frc", "--trials", "100",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "note: skipped frc at s=2; s=3 (s+1 must divide n, n=10)",
        ));
}

#[test]
fn same_seed_same_bytes_on_any_thread_count() {
    for scheme in ["uncoded", "ignore", "frc", "crc", "comm-efficient", "mds"] {
        let args = |threads: &'static str| {
            let mut a = vec![
                "sweep",
                "--n",
                "12",
                "--s",
                "1,2,3",
                "--scheme",
                scheme,
                "--trials",
                "70000",
                "--format",
                "csv",
                "--threads",
                threads,
                "--dist",
                "pareto:scale=1,shape=3",
            ];
            if scheme == "comm-efficient" {
                a.extend(["--m", "2"]);
            }
            a
        };
        let one = stdout_of(&args("1"));
        assert_eq!(one, stdout_of(&args("2")), "{scheme}");
        assert_eq!(one, stdout_of(&args("3")), "{scheme}");
    }
}

#[test]
fn different_seeds_differ() {
    let a = stdout_of(&[
        "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "1000", "--seed", "1",
    ]);
    let b = stdout_of(&[
        "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "1000", "--seed", "2",
    ]);
    assert_ne!(a, b);
}

#[test]
fn out_writes_the_file_in_the_extension_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    gcsim()
        .args([
            "run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "100", "--out",
        ])
        .arg(&path)
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote 1 row to"));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["rows"][0]["k"], 7);
    // No temporary file is left behind, and the file is not private.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
    }
}

#[test]
fn a_failed_run_leaves_the_previous_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    std::fs::write(&path, "previous").unwrap();
    gcsim()
        .args(["run", "--n", "8", "--scheme", "frc", "--s", "2", "--out"])
        .arg(&path)
        .assert()
        .code(2);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
}

#[test]
fn help_explains_with_examples() {
    gcsim()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("gcsim sweep --n 100 --s 0..50"));
    gcsim()
        .args(["sweep", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--load-model"))
        .stdout(predicate::str::contains("exp:rate=1,p_slow=0.05,slowdown=8"))
        .stdout(predicate::str::contains("Examples:"));
    gcsim()
        .args(["run", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("gcsim run --n 100 --scheme crc --s 20"));
}

/// Every invalid input: exit status 2, one line on stderr naming the flag or
/// key and what is accepted, no panic.
#[test]
fn bad_input_is_a_clear_one_line_error() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--n", "0", "--scheme", "uncoded"],
            "for '--n <N>': `0` is out of range; accepted: a whole number >= 1",
        ),
        (
            &["run", "--n", "10", "--scheme", "crc", "--s", "10"],
            "--s 10 is out of range for crc with n=10; accepted: 0..9",
        ),
        (
            &["run", "--n", "10", "--scheme", "crc", "--s", "-1"],
            "`-1` is negative",
        ),
        (
            &["run", "--n", "10", "--scheme", "crc", "--s", "two"],
            "`two` is not a whole number",
        ),
        (&["run", "--n", "10", "--scheme", "crc"], "crc needs --s"),
        (&["sweep", "--n", "10", "--s", "5..2"], "the start 5 exceeds the end 2"),
        (&["sweep", "--n", "10", "--s", "0..99999999"], "limit"),
        (
            &["run", "--n", "10", "--scheme", "frc", "--s", "2"],
            "s+1 must divide n; accepted s: 0, 1, 4, 9",
        ),
        (
            &["run", "--n", "10", "--scheme", "comm-efficient", "--s", "1", "--m", "0"],
            "--m 0 is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "comm-efficient", "--s", "5", "--m", "6"],
            "s+m must be at most n",
        ),
        (
            &["run", "--n", "10", "--scheme", "mds", "--k", "0"],
            "--k 0 is out of range for mds with n=10; accepted: 1..10",
        ),
        (
            &["run", "--n", "10", "--scheme", "mds", "--k", "11"],
            "--k 11 is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "lrc"],
            "invalid value 'lrc' for '--scheme <SCHEME>'",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "gauss:mean=1"],
            "unknown distribution `gauss`",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "exp:lambda=1"],
            "unknown key `lambda` for `exp`",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "pareto:scale=1"],
            "needs the key `shape`",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "exp:rate=0"],
            "`rate=0` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "pareto:scale=1,shape=-2",
            ],
            "`shape=-2` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "pareto:scale=0,shape=2",
            ],
            "`scale=0` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "shifted-exp:shift=-1,rate=1",
            ],
            "`shift=-1` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "exp:rate=1,p_slow=1.5,slowdown=2",
            ],
            "`p_slow=1.5` is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--dist",
                "exp:rate=1,p_slow=0.5,slowdown=0.5",
            ],
            "`slowdown=0.5` is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "exp:rate=NaN"],
            "`rate=NaN` is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--dist", "exp:rate=inf"],
            "`rate=inf` is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--load-model", "quadratic"],
            "invalid value 'quadratic' for '--load-model <MODEL>'",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--load-model", "affine"],
            "--load-model affine needs --unit-time",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--unit-time", "1"],
            "--unit-time applies only to --load-model affine",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--trials", "0"],
            "--trials 0 is out of range",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--threads", "0"],
            "--threads 0 is out of range",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "uncoded",
                "--out",
                "/nonexistent-dir/x.csv",
            ],
            "the directory /nonexistent-dir does not exist",
        ),
        (
            &["run", "--n", "10", "--scheme", "uncoded", "--out", "x.parquet"],
            "cannot tell the format from the extension",
        ),
        (
            &["sweep", "--n", "10", "--scheme", "comm-efficient", "--s", "1"],
            "comm-efficient needs --m",
        ),
        (
            &["sweep", "--n", "10", "--s", "1", "--m", "2"],
            "--m applies only to --scheme comm-efficient",
        ),
        (
            &["sweep", "--n", "10", "--s", "1", "--k", "2"],
            "--k applies only to --scheme mds",
        ),
        (
            &[
                "run",
                "--n",
                "100000",
                "--scheme",
                "mds",
                "--k",
                "1",
                "--load-model",
                "additive",
            ],
            "draws per trial",
        ),
        (
            &[
                "run",
                "--n",
                "1000",
                "--scheme",
                "uncoded",
                "--trials",
                "100000000000000",
            ],
            "lower --trials",
        ),
    ];
    for (args, expected) in cases {
        let out = gcsim().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: expected `{expected}` in: {stderr}"
        );
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let first = lines.first().copied().unwrap_or("");
        assert!(
            first.contains(expected),
            "{args:?}: the first line should say it: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn broken_pipe_is_quiet_success() {
    use std::io::Read;
    use std::process::{Command as Std, Stdio};
    let bin = assert_cmd::cargo::cargo_bin("gcsim");
    let mut child = Std::new(bin)
        .args([
            "sweep",
            "--n",
            "10",
            "--s",
            "0..9",
            "--scheme",
            "ignore,crc,mds",
            "--trials",
            "2000",
            "--format",
            "csv",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close our end before the output is complete.
    let mut stdout = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    stdout.read_exact(&mut byte).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(!err.contains("Error"), "{err}");
}

/// A run killed before it finishes leaves the previous output as it was and
/// no temporary file behind: the result is written, to a temporary file
/// renamed into place, only once complete.
#[test]
fn a_killed_run_leaves_the_previous_file_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    std::fs::write(&path, "previous").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("gcsim");
    let mut child = std::process::Command::new(bin)
        .args([
            "sweep",
            "--n",
            "100",
            "--s",
            "0..50",
            "--trials",
            "500000000",
            "--quiet",
            "--out",
        ])
        .arg(&path)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "still running when killed");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("r.csv")]);
}
