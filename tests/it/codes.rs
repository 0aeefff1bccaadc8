//! `gcsim codes` end to end: every exact scheme decodes every pattern of at
//! most s stragglers at small n (exhaustively) with residuals under 1e-9, the
//! output formats, reproducibility and every error. Fixed seeds throughout.

use assert_cmd::Command;
use predicates::prelude::*;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn json_row(args: &[&str]) -> serde_json::Value {
    let out = gcsim()
        .arg("codes")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["config"]["command"], "codes");
    v["rows"][0].clone()
}

#[test]
fn exact_schemes_decode_every_pattern_exhaustively() {
    let cases: &[&[&str]] = &[
        &["--scheme", "frc", "--n", "12", "--s", "3"],
        &["--scheme", "crc", "--n", "12", "--s", "3"],
        &["--scheme", "crc", "--n", "10", "--s", "9"],
        &["--scheme", "comm-efficient", "--n", "12", "--s", "3", "--m", "2"],
        &[
            "--scheme",
            "comm-efficient",
            "--n",
            "10",
            "--s",
            "2",
            "--m",
            "3",
            "--generator",
            "vandermonde",
        ],
        &["--scheme", "mds", "--n", "12", "--k", "8"],
        &["--scheme", "uncoded", "--n", "5"],
    ];
    for args in cases {
        let r = json_row(args);
        assert_eq!(r["exhaustive"], true, "{args:?}");
        assert_eq!(r["patterns_checked"].as_f64(), r["patterns_total"].as_f64(), "{args:?}");
        assert_eq!(r["decodable_fraction"], 1.0, "{args:?} {r}");
        assert!(r["max_residual"].as_f64().unwrap() < 1e-9, "{args:?} {r}");
        assert!(r["e2e_error"].as_f64().unwrap() < 1e-9, "{args:?} {r}");
        assert_eq!(r["pass"], true);
    }
}

#[test]
fn above_the_limit_a_sample_is_decoded() {
    let r = json_row(&["--scheme", "crc", "--n", "30", "--s", "3", "--limit", "200"]);
    assert_eq!(r["exhaustive"], false);
    assert_eq!(r["patterns_checked"], 200);
    assert_eq!(r["patterns_total"], 1.0 + 30.0 + 435.0 + 4060.0);
    assert_eq!(r["decodable_fraction"], 1.0);
}

#[test]
fn csv_has_one_documented_row_and_repeats_byte_for_byte() {
    let args = [
        "codes",
        "--scheme",
        "comm-efficient",
        "--n",
        "20",
        "--s",
        "2",
        "--m",
        "2",
        "--limit",
        "100",
    ];
    let a = gcsim()
        .args(args)
        .args(["--format", "csv", "--threads", "1"])
        .output()
        .unwrap();
    let b = gcsim()
        .args(args)
        .args(["--format", "csv", "--threads", "2"])
        .output()
        .unwrap();
    assert_eq!(a.stdout, b.stdout);
    let csv = String::from_utf8(a.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "scheme,generator,n,s,m,k,exact,patterns_total,patterns_checked,exhaustive,decodable_fraction,max_residual,median_condition,max_condition,tolerance,e2e_sets,e2e_error,e2e_tolerance,pass"
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("comm-efficient,gaussian,20,2,2,18,true,")
    );
    assert!(lines.next().is_none());
}

#[test]
fn ill_conditioned_vandermonde_fails_with_status_1() {
    gcsim()
        .args([
            "codes",
            "--scheme",
            "mds",
            "--n",
            "40",
            "--k",
            "36",
            "--generator",
            "vandermonde",
        ])
        .args(["--limit", "50", "--format", "table"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("FAIL"))
        .stderr(predicate::str::contains(
            "50 of 50 straggler patterns decoded with a residual above 1e-9",
        ));
}

/// A random crc draw with one straggler pattern just past the tolerance
/// (κ ≈ 2.9e7, so float64 rounding is about 6e-9): the table does not round
/// its 83 681 of 83 682 decodable patterns to 1.0000, and the error names
/// the check, the count and the rounding behind it.
#[test]
fn a_failure_names_its_check_and_never_shows_a_full_fraction() {
    gcsim()
        .args(["codes", "--scheme", "crc", "--n", "26", "--s", "5", "--format", "table"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(" 0.999988 "))
        .stderr(predicate::str::contains(
            "1 of 83682 straggler patterns decoded with a residual above 1e-9 (largest 1.016e-9, condition up to 2.865e7: \
             float64 rounding at that condition, eps*cond = 6.4e-9, in this draw of the random matrix; another --seed draws another)",
        ))
        .stderr(predicate::str::contains("end-to-end").not());
}

#[test]
fn ignore_reports_its_approximation_error_without_failing() {
    let r = json_row(&["--scheme", "ignore", "--n", "10", "--s", "2"]);
    assert_eq!(r["exact"], false);
    assert!(
        (r["max_residual"].as_f64().unwrap() - 0.2_f64.sqrt()).abs() < 1e-12,
        "{r}"
    );
    assert_eq!(r["pass"], false);
}

#[test]
fn out_writes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codes.json");
    gcsim()
        .args(["codes", "--scheme", "frc", "--n", "6", "--s", "1", "--out"])
        .arg(&path)
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote 1 row"));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["rows"][0]["scheme"], "frc");
}

#[test]
fn bad_input_is_a_one_line_error_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--scheme", "frc", "--n", "10", "--s", "2"], "s+1 must divide n"),
        (
            &["--scheme", "comm-efficient", "--n", "10", "--s", "2", "--m", "0"],
            "--m 0 is out of range",
        ),
        (&["--scheme", "comm-efficient", "--n", "10", "--s", "2"], "needs --m"),
        (
            &["--scheme", "crc", "--n", "10", "--s", "2", "--generator", "vandermonde"],
            "--generator vandermonde does not apply to crc",
        ),
        (&["--scheme", "crc", "--n", "3000", "--s", "2"], "--n 3000 is too large"),
        (
            &["--scheme", "crc", "--n", "10", "--s", "2", "--limit", "0"],
            "--limit 0",
        ),
        (&["--scheme", "crc", "--n", "0", "--s", "0"], "--n 0"),
        (
            &["--scheme", "crc", "--n", "10", "--s", "2", "--out", "x.bin"],
            "--out x.bin",
        ),
    ];
    for (args, message) in cases {
        let out = gcsim().arg("codes").args(*args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("Error: ") && err.contains(message), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// Every example of `codes --help` that needs no file runs and exits as
/// its comment says: 0, or 1 where it says `exits 1`.
#[test]
fn help_examples_run_as_stated() {
    let out = gcsim().args(["codes", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("Examples:"), "{help}");
    let mut ran = 0;
    for line in help.lines().filter_map(|l| l.strip_prefix("  gcsim codes ")) {
        let (args, comment) = line.split_once('#').unwrap_or((line, ""));
        if args.contains("--code ") || args.contains("--shard") {
            continue;
        }
        let code = if comment.contains("exits 1") { 1 } else { 0 };
        let format: &[&str] = if args.contains("--format") {
            &[]
        } else {
            &["--format", "csv"]
        };
        gcsim()
            .arg("codes")
            .args(args.split_whitespace())
            .args(format)
            .assert()
            .code(code);
        ran += 1;
    }
    assert_eq!(ran, 8, "{help}");
}
