//! `gcsim train`'s step and its divergence check: the default step 1/L on
//! data with more features than rows, and a step too large reported as
//! diverged rather than trained.

use assert_cmd::Command;
use faer::{Mat, Side};

use gcsim::load::LoadModel;
use gcsim::scheme::SchemeKind;
use gcsim::train::problem::Problem;
use gcsim::train::run::DIVERGENCE_FACTOR;

use super::common::scheme;
use super::train::{rel, setup, study, train};

/// With more features than training rows the default step is still 1/L,
/// L = c·λ_max(XᵀX/N): λ_max here from faer's eigensolver on the d×d
/// matrix itself. The standardised features are centred, so the all-ones
/// vector is an eigenvector of XXᵀ/N with eigenvalue 1 (the intercept's),
/// and a power iteration started there alone gave L = c and step 1/c.
#[test]
fn train_default_step_on_wide_data_is_one_over_lambda_max() {
    for problem in [Problem::LeastSquares, Problem::Logistic] {
        let setup = setup(problem, "synthetic:rows=12,features=300,noise=1", None);
        let t = &setup.train;
        let (n, d) = (t.rows(), t.d);
        assert!(n < d, "{n} rows, {d} features: wider than tall");
        let x = Mat::from_fn(n, d, |i, j| t.features[i * d + j]);
        let product = x.transpose() * &x;
        let gram = Mat::from_fn(d, d, |i, j| product[(i, j)] / n as f64);
        let top = gram
            .self_adjoint_eigenvalues(Side::Lower)
            .unwrap()
            .into_iter()
            .fold(f64::MIN, f64::max);
        let c = if problem == Problem::Logistic { 0.25 } else { 1.0 };
        assert!(top > 10.0, "{problem}: λ_max {top}, far from the intercept's 1");
        assert!(
            rel(setup.step, 1.0 / (c * top)) < 1e-8,
            "{problem}: step {} vs 1/L = {}",
            setup.step,
            1.0 / (c * top)
        );
    }
}

/// A step ten times 1/L multiplies the least-squares loss by about 81 an
/// iteration: the run is marked diverged at the first iteration whose loss
/// passes DIVERGENCE_FACTOR times the start, long before it would overflow,
/// and the trajectory stops before that iteration.
#[test]
fn train_reports_a_step_too_large_as_diverged() {
    let data = format!("{}/data/diabetes.csv", env!("CARGO_MANIFEST_DIR"));
    let one_over_l = setup(Problem::LeastSquares, &data, None).step;
    let setup = setup(Problem::LeastSquares, &data, Some(10.0 * one_over_l));
    let iterations = 40;
    let study = study(
        4,
        "exp:rate=1",
        LoadModel::Fixed,
        vec![scheme(SchemeKind::Uncoded, 4, 0)],
        2,
        iterations,
    );
    for run in &train(&study, &setup)[0].runs {
        let at = run.diverged.expect("a step of 10/L diverges");
        assert_eq!(at, run.loss.len() as u64, "the trajectory stops before the iteration");
        assert!(at > 1 && at < iterations, "diverged at iteration {at}");
        let start = run.loss[0];
        assert!(
            run.loss
                .iter()
                .all(|&l| l.is_finite() && l <= DIVERGENCE_FACTOR * start)
        );
        assert!(run.loss[run.loss.len() - 1] > 1e3 * start, "the loss was growing");
    }
    // The table says so, and stderr names the step and the flag.
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .args(["train", "--problem", "least-squares", "--data", &data, "--n", "4"])
        .args([
            "--scheme",
            "uncoded",
            "--iterations",
            "40",
            "--repeats",
            "2",
            "--step",
            "30",
        ])
        .args(["--format", "csv", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let header: Vec<&str> = stdout.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = stdout.lines().nth(1).unwrap().split(',').collect();
    let column = header.iter().position(|&h| h == "diverged").unwrap();
    assert_eq!(row[column].parse::<f64>().unwrap(), 1.0, "{stdout}");
    assert!(
        stderr.contains("uncoded: 1.000 of the runs diverged at step 30.00 (--step)")
            && stderr.contains("smaller --step"),
        "{stderr}"
    );
}
