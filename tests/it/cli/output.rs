//! What the binary prints: the CSV columns, JSON structure, analytic
//! columns, infinite means, the table, sweep notes and `--help`.

use predicates::prelude::*;

use super::{HEADER, gcsim, stdout_of};

#[test]
fn csv_has_the_output_columns() {
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
        assert_eq!(r.len(), HEADER.split(',').count());
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

/// A value repeated in a sweep's list gives one row, not two.
#[test]
fn repeated_sweep_values_give_one_row() {
    let csv = stdout_of(&[
        "sweep", "--n", "10", "--s", "1,1,2", "--trials", "200", "--format", "csv",
    ]);
    assert_eq!(csv.lines().count(), 3, "{csv}");
}

/// The table shows approx_error and data_fraction only beside an inexact
/// row, undecodable only where a code decodes and timeout only where a row
/// has a deadline; CSV always has every column.
#[test]
fn table_shows_optional_columns_where_they_say_something() {
    let header = |extra: &[&str]| {
        let args = [
            &["sweep", "--n", "8", "--s", "1", "--trials", "200", "--format", "table"][..],
            extra,
        ]
        .concat();
        stdout_of(&args)
            .lines()
            .find(|l| l.starts_with("scheme"))
            .unwrap()
            .to_string()
    };
    let exact = header(&[]);
    assert!(
        ["approx_error", "undecodable", "data_fraction", "timeout"]
            .iter()
            .all(|c| !exact.contains(c)),
        "{exact}"
    );
    let inexact = header(&["--scheme", "crc,ignore"]);
    assert!(inexact.ends_with("approx_error  data_fraction"), "{inexact}");
    let deadline = &["--scheme", "crc,timeout", "--timeout", "1"][..];
    let timeout = header(deadline);
    assert!(timeout.ends_with("approx_error  data_fraction  timeout"), "{timeout}");
    let rank = header(&["--decoder", "rank"]);
    assert!(rank.ends_with("analytic_p99  undecodable"), "{rank}");
}

/// A transfer law with an infinite mean makes the iteration's mean infinite
/// even when the computation's is finite: `run` writes inf with the warning
/// and `plan` ranks the row's mean as inf instead of a sample mean.
#[test]
fn heavy_transfer_times_make_infinite_means() {
    let comm = [
        "--comm-dist",
        "pareto:scale=1,shape=0.5",
        "--trials",
        "2000",
        "--format",
        "csv",
    ];
    let out = gcsim()
        .args(["run", "--n", "1", "--scheme", "uncoded"])
        .args(comm)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("the exact mean is infinite"));
    let csv = String::from_utf8(out.stdout).unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((row[9], row[10]), ("inf", ""));
    // A shared link: every scheme waits for a heavy transfer.
    let out = gcsim()
        .args(["plan", "--n", "6", "--link", "shared", "--top", "100"])
        .args(comm)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no recommendation: every candidate's mean is infinite"));
    let out = String::from_utf8(out.stdout).unwrap();
    let means: Vec<&str> = out.lines().skip(1).map(|l| l.split(',').nth(9).unwrap()).collect();
    assert!(!means.is_empty() && means.iter().all(|m| *m == "inf"), "{out}");
}

/// The table's rows hold the same values as the CSV, one cell per header
/// column, in the same order (numbers to four significant digits).
#[test]
fn table_rows_hold_the_csv_values() {
    let args = [
        "sweep",
        "--n",
        "8",
        "--s",
        "1,2",
        "--scheme",
        "crc,ignore",
        "--trials",
        "500",
    ];
    let table = stdout_of(&[&args[..], &["--format", "table"]].concat());
    let csv = stdout_of(&[&args[..], &["--format", "csv"]].concat());
    let lines: Vec<&str> = table.lines().filter(|l| !l.starts_with('#')).collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    let csv_header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let csv_rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(lines.len() - 1, csv_rows.len(), "{table}");
    for (line, row) in lines[1..].iter().zip(&csv_rows) {
        // The interval is one cell of two words, `[lo, hi]`.
        let cells: Vec<String> = line.replace(", ", ",").split_whitespace().map(String::from).collect();
        assert_eq!(cells.len(), header.len(), "{line}");
        let cell = |name: &str| cells[header.iter().position(|h| *h == name).unwrap()].clone();
        let value = |name: &str| row[csv_header.iter().position(|h| *h == name).unwrap()];
        assert_eq!(cell("scheme"), value("scheme"));
        assert_eq!(cell("s"), value("s"));
        for name in ["mean", "p99", "approx_error"] {
            let (shown, exact): (f64, f64) = (cell(name).parse().unwrap(), value(name).parse().unwrap());
            assert!(
                (shown - exact).abs() <= 5e-4 * exact.abs().max(1e-3),
                "{name}: {shown} vs {exact}"
            );
        }
        // The interval cell is `[ci95_low, ci95_high]`.
        let ci = cell("ci95");
        let (lo, hi) = ci
            .strip_prefix('[')
            .and_then(|c| c.strip_suffix(']'))
            .and_then(|c| c.split_once(','))
            .unwrap_or_else(|| panic!("an interval, not {ci}"));
        for (shown, name) in [(lo, "ci95_low"), (hi, "ci95_high")] {
            let (shown, exact): (f64, f64) = (shown.parse().unwrap(), value(name).parse().unwrap());
            assert!(
                (shown - exact).abs() <= 5e-4 * exact.abs(),
                "{name}: {shown} vs {exact}"
            );
        }
    }
}
