//! A user's encoding matrix (`--code FILE`, scheme `custom`), approximate
//! gradient coding (`approx-regular`), and numerical failure shown as
//! undecodable trials.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use faer::{Col, Mat, Scale};
use predicates::prelude::*;
use rand::SeedableRng;
use rand::seq::index::sample;
use rand_xoshiro::Xoshiro256PlusPlus;

use gcsim::codes::Code;
use gcsim::codes::custom::CustomMatrix;
use gcsim::dist::Dist;
use gcsim::engine::{self, Silent};
use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::Study;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// Tandon et al.'s frc matrix for n workers and tolerance s, as CSV.
fn frc_csv(n: usize, s: usize) -> String {
    (0..n)
        .map(|i| {
            let row: Vec<&str> = (0..n)
                .map(|j| if i / (s + 1) == j / (s + 1) { "1" } else { "0" })
                .collect();
            row.join(",") + "\n"
        })
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn custom_study(text: &str, s: Option<usize>, load: LoadModel, trials: u64, seed: u64) -> Study {
    let m = CustomMatrix::parse("code.csv", text).unwrap();
    let scheme = Scheme::custom(m.shape(), s).unwrap();
    Study::new(m.b.nrows(), Dist::exp(1.0).unwrap(), load, vec![scheme], trials, seed)
        .unwrap()
        .with_custom(Some(m))
        .unwrap()
}

/// frc's matrix as a user's file, decoded by its rank condition, has the
/// law of `--scheme frc` (the maximum over groups of the group minimum):
/// the mean within 4 standard errors of the exact mean, and the exact CDF
/// at the sample p50, p90 and p99 within 4 binomial standard errors of the
/// level. A decoder that waited for all n (custom's threshold k = n) misses
/// the mean by about 80 standard errors.
#[test]
fn a_custom_frc_matrix_has_the_law_of_frc() {
    let (n, s, trials) = (12, 2, 40_000);
    let study = custom_study(&frc_csv(n, s), None, LoadModel::Scaled, trials, 3);
    let frc = Scheme::new(
        SchemeKind::Frc,
        n,
        Params {
            s: Some(s),
            ..Params::default()
        },
    )
    .unwrap();
    let law = study.exact_law(&frc).expect("frc has an exact law");
    let outcome = engine::simulate(&study, &Silent);
    let row = &gcsim::report::rows(&study, &outcome)[0];
    let (mean, se) = (row.mean, row.std_err.unwrap());
    assert!(
        (mean - law.mean()).abs() < 4.0 * se,
        "custom frc {mean} ± {se}, frc exact {}",
        law.mean()
    );
    for (q, x) in [(0.5, row.p50), (0.9, row.p90), (0.99, row.p99)] {
        let sd = (q * (1.0 - q) / trials as f64).sqrt();
        assert!((law.cdf(x) - q).abs() < 4.0 * sd, "F(p{q} = {x}) = {}", law.cdf(x));
    }
    assert_eq!((row.undecodable, row.approx_error), (Some(0.0), Some(0.0)));
    assert_eq!((row.decoder, row.exact, row.load), ("rank", true, 3.0));
}

/// Rows of different supports give workers different loads: with rows
/// (1,1,0,0), (0,0,1,0), (0,0,0,1), (0,1,0,0) the master decodes 1ᵀ exactly
/// from workers {0, 1, 2} (and not without worker 0), so T = max(T₀, T₁, T₂)
/// with worker 0 at load 2. Under `scaled`, P(T ≤ t) = (1 − e^{−t/2})(1 −
/// e^{−t})²; under `additive`, worker 0's time is Gamma(2, 1) and
/// P(T ≤ t) = (1 − e^{−t}(1 + t))(1 − e^{−t})². The mean ∫(1 − F) against
/// the simulation within 4 standard errors; one load for every worker (the
/// largest, 2) moves the scaled mean from 2.57 to 3.67.
#[test]
fn workers_loads_follow_their_rows() {
    let text = "1,1,0,0\n0,0,1,0\n0,0,0,1\n0,1,0,0\n";
    type Cdf = fn(f64) -> f64;
    let cdfs: [(LoadModel, Cdf); 2] = [
        (LoadModel::Scaled, |t| {
            (1.0 - (-t / 2.0).exp()) * (1.0 - (-t).exp()).powi(2)
        }),
        (LoadModel::Additive, |t| {
            (1.0 - (-t).exp() * (1.0 + t)) * (1.0 - (-t).exp()).powi(2)
        }),
    ];
    for (model, cdf) in cdfs {
        // ∫₀^∞ (1 − F(t)) dt by the trapezoid rule on [0, 60].
        let h = 1e-3;
        let exact: f64 = (0..60_000)
            .map(|i| {
                let (a, b) = (i as f64 * h, (i + 1) as f64 * h);
                0.5 * h * ((1.0 - cdf(a)) + (1.0 - cdf(b)))
            })
            .sum();
        let study = custom_study(text, None, model, 30_000, 8);
        let outcome = engine::simulate(&study, &Silent);
        let m = &outcome.configs[0].mean;
        let se = m.std_err.unwrap();
        assert!(
            (m.mean - exact).abs() < 4.0 * se,
            "{model}: simulated {} ± {se}, exact {exact}",
            m.mean
        );
    }
}

/// min over u of ‖B_Fᵀu − 1‖² / n by conjugate gradients on the normal
/// equations (CGLS, from u = 0): an independent least-squares solve, exact
/// for rank-deficient B_F too.
fn least_squares_error(bf: &Mat<f64>) -> f64 {
    let a = bf.transpose().to_owned(); // n × k: min ‖a·u − 1‖
    let ones = Col::<f64>::from_fn(a.nrows(), |_| 1.0);
    let mut u = Col::<f64>::zeros(a.ncols());
    let mut r = ones.clone();
    let mut s = a.transpose() * &r;
    let mut p = s.clone();
    let mut gamma = s.squared_norm_l2();
    for _ in 0..10 * a.ncols() {
        if gamma < 1e-28 {
            break;
        }
        let q = &a * &p;
        let alpha = gamma / q.squared_norm_l2();
        u += Scale(alpha) * &p;
        r -= Scale(alpha) * &q;
        s = a.transpose() * &r;
        let next = s.squared_norm_l2();
        p = &s + Scale(next / gamma) * &p;
        gamma = next;
    }
    (&ones - &a * &u).squared_norm_l2() / a.nrows() as f64
}

/// approx-regular's `approx_error` (the simulated mean of ‖uᵀB_F − 1‖²/n
/// over the fastest n − s workers) against an independent estimate: uniform
/// random sets of n − s workers (what the fastest are, for i.i.d. workers),
/// drawn with a sampler of the test's own, each solved by CGLS. The two
/// means agree within 4 standard errors of their difference; `ignore`'s is
/// exactly s/n. Also: B is a d-regular graph's adjacency over d.
#[test]
fn approx_regular_error_matches_an_independent_least_squares_solve() {
    let (n, s, d, seed) = (30, 6, 3, 4);
    let scheme = |kind, d| {
        Scheme::new(
            kind,
            n,
            Params {
                s: Some(s),
                d,
                ..Params::default()
            },
        )
        .unwrap()
    };
    let approx = scheme(SchemeKind::ApproxRegular, Some(d));
    let study = Study::new(
        n,
        Dist::exp(1.0).unwrap(),
        LoadModel::Fixed,
        vec![scheme(SchemeKind::Ignore, None), approx],
        20_000,
        seed,
    )
    .unwrap();
    let b = study.code(&approx).unwrap().encoding().clone();
    assert_eq!(b, Code::new(&approx, seed).unwrap().encoding().clone());
    for i in 0..n {
        let (row, col) = (b.row(i), b.col(i));
        assert!((row.sum() - 1.0).abs() < 1e-12 && (col.sum() - 1.0).abs() < 1e-12);
        assert_eq!(row.iter().filter(|&&v| v != 0.0).count(), d);
        assert!(row.iter().all(|&v| v == 0.0 || v == 1.0 / d as f64));
    }
    let inexact = gcsim::engine::approx::inexact(&study, &gcsim::engine::Silent);
    assert_eq!(inexact[0].error, s as f64 / n as f64);
    assert_eq!(inexact[0].data_fraction, (n - s) as f64 / n as f64);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
    let (errors, shares): (Vec<f64>, Vec<f64>) = (0..20_000)
        .map(|_| {
            let mut rows = sample(&mut rng, n, n - s).into_vec();
            rows.sort_unstable();
            let bf = Mat::from_fn(rows.len(), n, |i, j| b[(rows[i], j)]);
            // The partitions some arrived worker holds.
            let held = (0..n).filter(|&j| bf.col(j).iter().any(|&v| v != 0.0)).count();
            (least_squares_error(&bf), held as f64 / n as f64)
        })
        .unzip();
    let mean_se = |xs: &[f64]| {
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
        (mean, (2.0 * var / xs.len() as f64).sqrt())
    };
    let (mean, se) = mean_se(&errors);
    let engine = inexact[1].error;
    assert!(
        (engine - mean).abs() < 4.0 * se,
        "engine {engine} vs reference {mean} ± {se}"
    );
    assert!(mean > 0.0 && mean < s as f64 / n as f64, "{mean}");
    // With d = 3 a partition is lost only if its three holders are all late.
    let (share, se) = mean_se(&shares);
    let engine = inexact[1].data_fraction;
    assert!(
        (engine - share).abs() < 4.0 * se,
        "engine share {engine} vs reference {share} ± {se}"
    );
    assert!(share > (n - s) as f64 / n as f64 && share < 1.0, "{share}");
}

/// The example: Vandermonde mds at n = 50, k = 45 fails in float64,
/// so the rank decoder reports most trials undecodable (the mean is then
/// inf with a warning); the Gaussian generator decodes every trial.
#[test]
fn vandermonde_mds_fails_numerically_as_undecodable_trials() {
    let column = |generator: &str| {
        let out = gcsim()
            .args([
                "sweep",
                "--n",
                "50",
                "--scheme",
                "mds",
                "--k",
                "45",
                "--decoder",
                "rank",
            ])
            .args(["--generator", generator, "--trials", "2000", "--format", "csv"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = |name: &str| row[header.iter().position(|&h| h == name).unwrap()].to_string();
        (at("undecodable").parse::<f64>().unwrap(), at("mean"), out.stderr)
    };
    let (undecodable, mean, stderr) = column("vandermonde");
    // A fraction of the 2000 trials: a whole number of them, at most all.
    assert!(undecodable > 0.5 && undecodable <= 1.0, "{undecodable}");
    let count = undecodable * 2000.0;
    assert!((count - count.round()).abs() < 1e-6, "{undecodable}");
    assert_eq!(mean, "inf");
    assert!(String::from_utf8_lossy(&stderr).contains("never decoded"));
    let (undecodable, mean, _) = column("gaussian");
    assert_eq!(undecodable, 0.0);
    assert!(mean.parse::<f64>().unwrap().is_finite());
}

/// The command line end to end: `run --code FILE` needs no --scheme or --n,
/// a shard of a custom study merges to the single run's bytes (the matrix
/// travels in the shard file), and `codes --code` checks the matrix.
#[test]
fn cli_runs_shards_and_checks_a_users_code() {
    let dir = tempfile::tempdir().unwrap();
    let code = write(dir.path(), "frc.csv", &frc_csv(12, 2));
    let code = code.to_str().unwrap();
    let args = ["run", "--code", code, "--trials", "3000", "--format", "csv"];
    let single = gcsim().args(args).output().unwrap();
    assert!(single.status.success(), "{}", String::from_utf8_lossy(&single.stderr));
    let text = String::from_utf8(single.stdout.clone()).unwrap();
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("custom,12,0,,12,3.0,1.0,true,3000,"),
        "{text}"
    );
    // One block of trials, so one shard: the matrix travels in the file.
    let part = dir.path().join("part1.json");
    gcsim()
        .args(&args[..5])
        .args(["--shard", "1/1", "--out"])
        .arg(&part)
        .assert()
        .success();
    let parts = [part];
    let merged = gcsim()
        .arg("merge")
        .args(&parts)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    assert_eq!(merged.stdout, single.stdout);
    gcsim()
        .args(["codes", "--code", code, "--s", "2", "--format", "csv"])
        .assert()
        .success()
        .stdout(predicate::str::contains("custom,,12,2,,10,true,79.0,79,true,1.0,"));
    // Three stragglers can take a whole group: the check fails, exit 1.
    gcsim().args(["codes", "--code", code, "--s", "3"]).assert().code(1);
}

/// Bad input names the flag and what is accepted; never a panic.
#[test]
fn bad_custom_and_approx_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ragged = write(dir.path(), "ragged.csv", "1,0\n1\n");
    let text = write(dir.path(), "text.csv", "1,x\n");
    let frc = write(dir.path(), "frc.csv", &frc_csv(6, 1));
    let (ragged, text, frc) = [ragged, text, frc].map(|p| p.to_str().unwrap().to_string()).into();
    // Command lines with no spaces inside an argument: the temporary paths have none.
    let cases: Vec<(String, &str)> = vec![
        ("run --code missing.csv".into(), "--code missing.csv:"),
        (format!("run --code {ragged}"), "row 2 has 1 entries but row 1 has 2"),
        (format!("run --code {text}"), "`x` is not a finite number"),
        (format!("run --code {frc} --n 7"), "has 6 rows (workers) but --n is 7"),
        (
            format!("run --code {frc} --scheme crc"),
            "--code applies only to --scheme custom",
        ),
        ("run --n 6 --scheme custom".into(), "custom needs --code FILE"),
        (
            format!("run --code {frc} --s 6"),
            "--s 6 is out of range for custom with n=6; accepted: 0..5",
        ),
        (
            "run --n 10 --scheme approx-regular --s 2 --d 0".into(),
            "--d 0 is out of range for approx-regular with n=10; accepted: 1..10",
        ),
        (
            "run --n 10 --scheme crc --s 2 --d 2".into(),
            "--d applies only to --scheme approx-regular",
        ),
        (
            "sweep --n 10 --s 2 --d 2".into(),
            "--d applies only to --scheme approx-regular",
        ),
        (
            format!("sweep --n 6 --s 1 --scheme crc --code {frc}"),
            "--code applies only to --scheme custom",
        ),
        (
            "plan --n 10 --scheme approx-regular".into(),
            "does not search --scheme approx-regular",
        ),
        ("plan --n 10 --scheme custom".into(), "does not search --scheme custom"),
        ("run --n 10".into(), "give --scheme SCHEME"),
    ];
    for (line, message) in cases {
        gcsim()
            .args(line.split_whitespace())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message).and(predicate::str::contains("panicked").not()));
    }
}

/// A custom code decoded by its rank condition has no exact law (its
/// columns `analytic_mean` and `analytic_p99` are empty), while with --s it
/// waits for any n − s and has the law of that rule; `sweep --code` runs
/// the custom scheme by default, as `run --code` does, with the same rows;
/// and a rank study names its generator in the JSON config.
#[test]
fn sweep_takes_a_users_code_and_rank_rows_have_no_exact_law() {
    let dir = tempfile::tempdir().unwrap();
    let code = write(dir.path(), "frc.csv", &frc_csv(12, 2));
    let csv = |command: &str, extra: &[&str]| {
        let out = gcsim()
            .args([command, "--code"])
            .arg(&code)
            .args(extra)
            .args(["--trials", "2000", "--format", "csv"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let text = csv("sweep", &[]);
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let cells = |text: &str| -> Vec<Vec<String>> {
        text.lines()
            .skip(1)
            .map(|l| l.split(',').map(String::from).collect())
            .collect()
    };
    let rank = cells(&text);
    assert_eq!(rank.len(), 1, "{text}");
    assert_eq!(rank[0][0], "custom");
    assert_eq!(rank[0][column("decoder")], "rank");
    assert_eq!(rank[0][column("analytic_mean")], "", "{text}");
    assert_eq!(csv("run", &[]), text);
    let approximate = csv("sweep", &["--s", "0,2"]);
    for (row, s) in cells(&approximate).iter().zip(["0", "2"]) {
        assert_eq!((row[0].as_str(), row[column("s")].as_str()), ("custom", s));
        assert!(row[column("analytic_mean")].parse::<f64>().is_ok(), "{approximate}");
    }
    let json = gcsim()
        .args([
            "sweep",
            "--n",
            "12",
            "--scheme",
            "mds",
            "--k",
            "10",
            "--decoder",
            "rank",
        ])
        .args(["--generator", "vandermonde", "--trials", "200", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["config"]["generator"], "vandermonde");
}

/// C(a, b) as a float (0 when b > a).
fn choose(a: usize, b: usize) -> f64 {
    if b > a {
        return 0.0;
    }
    (0..b).map(|i| (a - i) as f64 / (b - i) as f64).product()
}

/// ErasureHead's `approx_error` is the share of partitions whose group of
/// d is wholly among the s workers not awaited: for i.i.d. workers that set
/// is uniform, so a given group is out with probability
/// q₁ = C(n−d, s−d)/C(n, s), two given groups with q₂ = C(n−2d, s−2d)/C(n, s),
/// and the error L = (d/n)·G over the G groups out has mean q₁ and the
/// variance that follows. The engine's mean over its error trials agrees
/// within 4.5 standard errors; with s < d it is exact, and with d = 1 it is
/// ignore's s/n in every trial.
#[test]
fn erasurehead_loses_the_groups_wholly_late() {
    let study = |n, s, d| {
        let scheme = Scheme::new(
            SchemeKind::ErasureHead,
            n,
            Params {
                s: Some(s),
                d: Some(d),
                ..Params::default()
            },
        )
        .unwrap();
        Study::new(n, Dist::exp(1.0).unwrap(), LoadModel::Fixed, vec![scheme], 20_000, 3).unwrap()
    };
    for (n, s, d) in [(12, 3, 3), (12, 4, 3), (20, 7, 2), (30, 12, 5)] {
        let inexact = gcsim::engine::approx::inexact(&study(n, s, d), &gcsim::engine::Silent);
        let groups = (n / d) as f64;
        let (q1, q2) = (
            choose(n - d, s - d) / choose(n, s),
            choose(n - 2 * d, s - 2 * d) / choose(n, s),
        );
        let mean_g = groups * q1;
        let var_g = groups * (groups - 1.0) * q2 + mean_g - mean_g * mean_g;
        let share = d as f64 / n as f64;
        let se = share * (var_g / 20_000.0).sqrt();
        let engine = inexact[0].error;
        assert!(
            (engine - q1).abs() < 4.5 * se,
            "n={n} s={s} d={d}: {engine} vs {q1} ± {se}"
        );
        assert!((inexact[0].data_fraction - (1.0 - q1)).abs() < 4.5 * se);
    }
    let exact = study(12, 2, 3);
    assert!(exact.schemes()[0].exact_gradient());
    assert_eq!(
        gcsim::engine::approx::inexact(&exact, &gcsim::engine::Silent)[0].error,
        0.0
    );
    let singletons = gcsim::engine::approx::inexact(&study(10, 3, 1), &gcsim::engine::Silent);
    assert!((singletons[0].error - 0.3).abs() < 1e-12, "{}", singletons[0].error);
}

/// ErasureHead refuses a group size that does not divide n, and the other
/// schemes refuse --d by naming its readers.
#[test]
fn erasurehead_needs_groups_that_divide_n() {
    gcsim()
        .args([
            "run",
            "--n",
            "12",
            "--scheme",
            "erasurehead",
            "--s",
            "4",
            "--d",
            "5",
            "--trials",
            "10",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "erasurehead does not admit s=4, d=5 with n=12: d must divide n",
        ));
    gcsim()
        .args([
            "run", "--n", "12", "--scheme", "crc", "--s", "2", "--d", "3", "--trials", "10",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--d applies only to --scheme approx-regular and erasurehead, not to --scheme crc",
        ));
    gcsim()
        .args([
            "sweep", "--n", "12", "--scheme", "crc", "--s", "2", "--d", "3", "--trials", "10",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--d applies only to --scheme approx-regular and erasurehead, neither of which is in --scheme",
        ));
}
