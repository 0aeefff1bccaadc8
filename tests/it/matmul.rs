//! The coded matrix-multiplication schemes (polynomial, matdot, entangled)
//! end to end: their thresholds, loads and messages against the papers'
//! formulas written out here, the exact k-of-n law against the simulator and
//! against the closed form, sweep, plan and scenario, `codes`, and every
//! error. Fixed seeds throughout.

use assert_cmd::Command;
use predicates::prelude::*;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = gcsim().args(args).args(["--format", "json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (flags, k, computation share of the full product, message share of C),
/// from Yu et al. 2017 (pq; 1/(pq); 1/(pq)), Dutta et al. 2019 (2p−1; 1/p;
/// 1) and Yu et al. 2020 (pmq+m−1; 1/(pmq); 1/(pq)), for n = 40.
fn configurations() -> Vec<(Vec<&'static str>, usize, f64, f64)> {
    vec![
        (
            vec!["--scheme", "polynomial", "--p", "4", "--q", "8"],
            32,
            1.0 / 32.0,
            1.0 / 32.0,
        ),
        (
            vec!["--scheme", "polynomial", "--p", "3", "--q", "5"],
            15,
            1.0 / 15.0,
            1.0 / 15.0,
        ),
        (vec!["--scheme", "matdot", "--p", "10"], 19, 1.0 / 10.0, 1.0),
        (vec!["--scheme", "matdot", "--p", "3"], 5, 1.0 / 3.0, 1.0),
        (
            vec!["--scheme", "entangled", "--p", "2", "--m", "2", "--q", "4"],
            17,
            1.0 / 16.0,
            1.0 / 8.0,
        ),
        (
            vec!["--scheme", "entangled", "--p", "3", "--m", "3", "--q", "1"],
            11,
            1.0 / 9.0,
            1.0 / 3.0,
        ),
    ]
}

fn harmonic(n: usize) -> f64 {
    (1..=n).map(|j| 1.0 / j as f64).sum()
}

/// Shifted-exponential workers under `scaled`, n = 40: the simulated mean
/// within 4 standard errors of the exact value, and the exact value equal
/// to ℓ·(shift + (H_n − H_{n−k})/rate) with ℓ = n × the computation share
/// (the k-th order statistic of n, Lee et al. 2017). k, load and message
/// are the papers'.
#[test]
fn exact_law_matches_monte_carlo_and_the_closed_form() {
    let (n, shift, rate) = (40usize, 1.0, 2.0);
    for (flags, k, share, message) in configurations() {
        let mut args = vec!["run", "--n", "40", "--load-model", "scaled"];
        args.extend(&flags);
        args.extend([
            "--dist",
            "shifted-exp:shift=1,rate=2",
            "--trials",
            "20000",
            "--seed",
            "7",
        ]);
        let v = json(&args);
        let row = &v["rows"][0];
        assert_eq!(row["k"].as_u64().unwrap() as usize, k, "{flags:?}");
        assert_eq!(row["s"].as_u64().unwrap() as usize, n - k, "{flags:?}");
        let load = n as f64 * share;
        assert!(
            (row["load"].as_f64().unwrap() - load).abs() < 1e-12,
            "{flags:?}: load {}",
            row["load"]
        );
        assert!((row["message"].as_f64().unwrap() - message).abs() < 1e-12, "{flags:?}");
        assert_eq!(row["exact"], true);
        let closed = load * (shift + (harmonic(n) - harmonic(n - k)) / rate);
        let exact = row["analytic_mean"].as_f64().expect("an exact value");
        assert!(
            (exact - closed).abs() < 1e-9 * closed,
            "{flags:?}: exact {exact} vs {closed}"
        );
        let (mean, se) = (row["mean"].as_f64().unwrap(), row["std_err"].as_f64().unwrap());
        assert!(
            (mean - exact).abs() < 4.0 * se,
            "{flags:?}: MC {mean} ± {se} vs exact {exact}"
        );
        let p99 = row["analytic_p99"].as_f64().unwrap();
        assert!((row["p99"].as_f64().unwrap() - p99).abs() < 0.05 * p99, "{flags:?}");
    }
}

/// A constant transfer time τ for a full C adds τ × the message share.
#[test]
fn communication_carries_the_message_share() {
    for (flags, _, _, message) in configurations() {
        let mut args = vec!["run", "--n", "40", "--comm-time", "2", "--trials", "2000"];
        args.extend(&flags);
        let v = json(&args);
        let t = v["rows"][0]["transfer_time"].as_f64().unwrap();
        assert!((t - 2.0 * message).abs() < 1e-12, "{flags:?}: transfer {t}");
    }
}

#[test]
fn sweep_runs_every_split_and_skips_those_over_n() {
    let v = json(&[
        "sweep",
        "--n",
        "20",
        "--scheme",
        "polynomial,matdot,entangled",
        "--p",
        "1..3",
        "--q",
        "2,7",
        "--m",
        "2",
        "--trials",
        "500",
    ]);
    let rows = v["rows"].as_array().unwrap();
    let ks: Vec<(String, u64)> = rows
        .iter()
        .map(|r| (r["scheme"].as_str().unwrap().to_string(), r["k"].as_u64().unwrap()))
        .collect();
    let want: Vec<(String, u64)> = [
        ("polynomial", 2),
        ("polynomial", 7),
        ("polynomial", 4),
        ("polynomial", 14),
        ("polynomial", 6),
        ("matdot", 1),
        ("matdot", 3),
        ("matdot", 5),
        ("entangled", 5),
        ("entangled", 15),
        ("entangled", 9),
        ("entangled", 13),
    ]
    .iter()
    .map(|(s, k)| (s.to_string(), *k))
    .collect();
    assert_eq!(ks, want);
    let skipped = v["config"]["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s.as_str().unwrap().contains("polynomial at p=3, q=7")),
        "{skipped:?}"
    );
}

#[test]
fn plan_names_the_split_of_the_best_code() {
    let out = gcsim()
        .args([
            "plan",
            "--n",
            "40",
            "--scheme",
            "polynomial,matdot,entangled",
            "--dist",
            "shifted-exp:shift=1,rate=1",
            "--load-model",
            "scaled",
            "--max-load",
            "inf",
            "--comm-time",
            "20",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8(out.stdout).unwrap();
    let best = csv.lines().nth(1).unwrap();
    assert!(best.contains(",exact,"), "{best}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    // The best row's k (30: p = 5, q = 6 makes the most of the load) is
    // named after its split.
    let k = best.split(',').nth(5).unwrap();
    assert_eq!(k, "30", "{best}");
    assert!(
        stderr.contains("recommend: n=40 polynomial p=5 q=6 (k=30): mean 3.7994"),
        "the recommendation names the split and k: {stderr}"
    );
}

#[test]
fn scenario_reads_p_and_q() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mm.toml");
    std::fs::write(
        &path,
        "name = \"mm\"\nn = 12\ntrials = 500\n[[study]]\nlabel = \"a\"\nschemes = [\"polynomial\", \"entangled\"]\np = \"1,2\"\nq = 2\nm = 2\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = gcsim()
        .args([
            "scenario",
            path.to_str().unwrap(),
            "--quiet",
            "--out-dir",
            out_dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(out_dir.join("mm").join("a.csv")).unwrap();
    let ks: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f[4]
        })
        .collect();
    // polynomial pq = 2, 4; entangled 2·2·1 + 1 = 5, 2·2·2 + 1 = 9.
    assert_eq!(ks, ["2", "4", "5", "9"], "{csv}");
}

#[test]
fn codes_checks_each_construction() {
    let cases: &[&[&str]] = &[
        &["--scheme", "polynomial", "--n", "10", "--p", "2", "--q", "3"],
        &[
            "--scheme",
            "polynomial",
            "--n",
            "12",
            "--p",
            "2",
            "--q",
            "3",
            "--generator",
            "gaussian",
        ],
        &[
            "--scheme",
            "matdot",
            "--n",
            "10",
            "--p",
            "4",
            "--generator",
            "chebyshev",
        ],
        &["--scheme", "entangled", "--n", "11", "--p", "2", "--m", "2", "--q", "2"],
    ];
    for args in cases {
        let mut a = vec!["codes"];
        a.extend(*args);
        let v = json(&a);
        let row = &v["rows"][0];
        assert_eq!(row["pass"], true, "{args:?}: {row}");
        assert_eq!(row["decodable_fraction"], 1.0, "{args:?}");
        assert!(row["below_threshold_fraction"].as_f64().unwrap() < 1.0);
        assert!(row["product_error"].as_f64().unwrap() < 1e-9, "{args:?}");
        assert_eq!(row["exhaustive"], true);
    }
}

/// At n = 40 the papers' real Vandermonde points lose the product; the
/// random Khatri-Rao code keeps it.
#[test]
fn codes_reports_vandermonde_instability_at_n_40() {
    let args = [
        "codes",
        "--scheme",
        "polynomial",
        "--n",
        "40",
        "--p",
        "4",
        "--q",
        "8",
        "--limit",
        "50",
    ];
    gcsim()
        .args(args)
        .args(["--format", "csv"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "sets of k=32 workers did not decode the product within 1e-6",
        ));
    let mut g = args.to_vec();
    g.extend(["--generator", "gaussian"]);
    let v = json(&g);
    assert_eq!(v["rows"][0]["pass"], true);
}

#[test]
fn bad_matmul_input_is_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--n", "40", "--scheme", "polynomial", "--p", "5", "--q", "9"],
            "polynomial does not admit p=5, q=9 with n=40: the recovery threshold pq must be at most n",
        ),
        (
            &["run", "--n", "40", "--scheme", "polynomial", "--p", "5"],
            "polynomial needs --q (e.g. --q 4)",
        ),
        (
            &["run", "--n", "40", "--scheme", "matdot"],
            "matdot needs --p (e.g. --p 4)",
        ),
        (
            &["run", "--n", "40", "--scheme", "matdot", "--p", "21"],
            "the recovery threshold 2p-1 must be at most n",
        ),
        (
            &["run", "--n", "40", "--scheme", "entangled", "--p", "2", "--q", "2"],
            "entangled needs --m (e.g. --m 2)",
        ),
        (
            &[
                "run",
                "--n",
                "30",
                "--scheme",
                "entangled",
                "--p",
                "3",
                "--q",
                "3",
                "--m",
                "4",
            ],
            "pmq+m-1 must be at most n; this split needs 39 workers",
        ),
        (
            &["run", "--n", "40", "--scheme", "polynomial", "--p", "0", "--q", "2"],
            "--p 0 is out of range for polynomial with n=40; accepted: 1..40",
        ),
        (
            &[
                "run",
                "--n",
                "40",
                "--scheme",
                "polynomial",
                "--p",
                "2",
                "--q",
                "2",
                "--s",
                "3",
            ],
            "--s does not apply to polynomial",
        ),
        (
            &["run", "--n", "40", "--scheme", "matdot", "--p", "2", "--q", "2"],
            "--q applies only to --scheme polynomial and entangled",
        ),
        (
            &["run", "--n", "40", "--scheme", "crc", "--s", "2", "--p", "2"],
            "--p applies only to --scheme polynomial, matdot and entangled",
        ),
        (
            &[
                "run",
                "--n",
                "40",
                "--scheme",
                "polynomial",
                "--p",
                "2",
                "--q",
                "2",
                "--m",
                "2",
            ],
            "--m applies only to --scheme comm-efficient (message split) and entangled (inner split)",
        ),
        (
            &["sweep", "--n", "40", "--scheme", "crc", "--s", "1", "--q", "2"],
            "--q applies only to --scheme polynomial and entangled",
        ),
        (
            &["sweep", "--n", "40", "--scheme", "polynomial", "--p", "2"],
            "scheme polynomial needs --q",
        ),
        (
            &["sweep", "--n", "4", "--scheme", "polynomial", "--p", "3", "--q", "3"],
            "no configuration to simulate",
        ),
        (
            &[
                "codes",
                "--n",
                "10",
                "--scheme",
                "matdot",
                "--p",
                "3",
                "--generator",
                "gaussian",
            ],
            "--generator gaussian applies only to polynomial",
        ),
        (
            &[
                "codes",
                "--n",
                "10",
                "--scheme",
                "polynomial",
                "--p",
                "2",
                "--q",
                "2",
                "--k",
                "4",
            ],
            "--k does not apply to --scheme polynomial",
        ),
        (
            &[
                "run",
                "--n",
                "10",
                "--scheme",
                "polynomial",
                "--p",
                "2",
                "--q",
                "2",
                "--decoder",
                "rank",
            ],
            "polynomial is a matrix-multiplication code",
        ),
        (
            &["train", "--n", "10", "--scheme", "polynomial", "--p", "2", "--q", "2"],
            "--scheme polynomial codes a matrix product C = A*B, not a gradient",
        ),
    ];
    for (args, message) in cases {
        let out = gcsim().args(*args).output().unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(message), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
