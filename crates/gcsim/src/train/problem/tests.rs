use std::path::Path;

use faer::{Mat, Side};

use super::*;
use crate::train::data::{Standardizer, Synthetic};

/// A shipped data set, split at seed 0 (20% test), standardised with an intercept.
fn shipped(name: &str, problem: Problem) -> (Dataset, Dataset) {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("data")
        .join(name);
    let data = Dataset::read_csv(&path, None).unwrap();
    let (train, test) = data.split(0.2, 0);
    let s = Standardizer::fit(&train);
    let (mut train, mut test) = (s.apply(&train), s.apply(&test));
    problem.prepare_targets(&mut train, &mut test).unwrap();
    (train, test)
}

/// Synthetic data, split at seed 0 (20% test), standardised with an intercept.
fn synthetic(problem: Problem, rows: usize, features: usize, seed: u64) -> (Dataset, Dataset) {
    let data = Dataset::synthetic(problem, Synthetic::new(rows, features, 1.0).unwrap(), seed);
    let (train, test) = data.split(0.2, 0);
    let s = Standardizer::fit(&train);
    (s.apply(&train), s.apply(&test))
}

/// ∇f(w) in full: the data part over all rows plus λw.
fn gradient(obj: &Objective, data: &Dataset, w: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; data.d];
    obj.add_partial_gradient(data, 0..data.rows(), w, &mut g);
    obj.add_l2(w, &mut g);
    g
}

/// `steps` of gradient descent from 0 with step 1/L.
fn descend(obj: &Objective, data: &Dataset, steps: usize) -> Vec<f64> {
    let step = 1.0 / obj.smoothness(data);
    let mut w = vec![0.0; data.d];
    for _ in 0..steps {
        let g = gradient(obj, data, &w);
        w.iter_mut().zip(&g).for_each(|(wj, gj)| *wj -= step * gj);
    }
    w
}

/// A weight vector with entries of both signs and sizes.
fn some_weights(d: usize) -> Vec<f64> {
    (0..d).map(|j| 0.3 * ((j as f64 * 1.7).sin() + 0.2)).collect()
}

#[test]
fn problem_names_round_trip_and_unknown_is_refused() {
    for p in Problem::ALL {
        assert_eq!(p.name().parse(), Ok(p));
        assert_eq!(p.to_string(), p.name());
    }
    assert_eq!(
        "ridge".parse::<Problem>().unwrap_err().to_string(),
        "unknown problem `ridge`; accepted: least-squares, logistic"
    );
    assert!("Logistic".parse::<Problem>().is_err());
    assert_eq!(metric_name(Problem::LeastSquares), "test_mse");
    assert_eq!(metric_name(Problem::Logistic), "test_accuracy");
}

fn with_targets(targets: &[f64]) -> Dataset {
    Dataset {
        names: vec!["x".into()],
        features: vec![1.0; targets.len()],
        targets: targets.to_vec(),
        d: 1,
    }
}

#[test]
fn prepare_targets_maps_two_values_to_0_and_1() {
    let (mut train, mut test) = (with_targets(&[4.0, -2.0, 4.0]), with_targets(&[-2.0]));
    Problem::Logistic.prepare_targets(&mut train, &mut test).unwrap();
    assert_eq!((train.targets, test.targets), (vec![1.0, 0.0, 1.0], vec![0.0]));
    // One value in training is enough when the test rows hold the other.
    let (mut train, mut test) = (with_targets(&[1.0, 1.0]), with_targets(&[0.0]));
    assert!(Problem::Logistic.prepare_targets(&mut train, &mut test).is_ok());
    let (mut train, mut test) = (with_targets(&[3.5, -7.0]), with_targets(&[]));
    Problem::LeastSquares.prepare_targets(&mut train, &mut test).unwrap();
    assert_eq!(train.targets, [3.5, -7.0], "least squares leaves targets alone");
}

#[test]
fn prepare_targets_refuses_other_than_two_values() {
    let err = |train: &[f64], test: &[f64]| {
        let (mut a, mut b) = (with_targets(train), with_targets(test));
        Problem::Logistic
            .prepare_targets(&mut a, &mut b)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(&[1.0, 1.0], &[1.0]),
        "logistic regression needs a target with two values; the target column has 1 distinct value (1)"
    );
    assert_eq!(
        err(&[2.0, 0.0, 1.0, 5.0], &[3.0, 0.5, 4.0]),
        "logistic regression needs a target with two values; the target column has 7 distinct values (0, 0.5, 1, 2, 3, ...)"
    );
    let diabetes = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("data/diabetes.csv");
    let mut data = Dataset::read_csv(&diabetes, None).unwrap();
    let mut none = with_targets(&[]);
    let msg = Problem::Logistic
        .prepare_targets(&mut data, &mut none)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("has 214 distinct values (25, 31, 37, 39, 40, ...)"),
        "{msg}"
    );
}

/// The partial gradients over a partition sum to the full gradient, which
/// matches a central difference of the data part of f (h = 1e-5, so the
/// error is O(h²·f''') ≈ 1e-10 plus rounding 1e-16/h ≈ 1e-11; tolerance 1e-7).
#[test]
fn gradients_add_up_and_match_finite_differences() {
    for problem in Problem::ALL {
        let (train, _) = shipped("breast-cancer.csv", problem);
        let obj = Objective::new(problem, 0.1, train.rows());
        let w = some_weights(train.d);
        let mut whole = vec![0.0; train.d];
        obj.add_partial_gradient(&train, 0..train.rows(), &w, &mut whole);
        let mut parts = vec![0.0; train.d];
        for range in [0..100, 100..101, 101..300, 300..train.rows()] {
            obj.add_partial_gradient(&train, range, &w, &mut parts);
        }
        let data_loss = |w: &[f64]| obj.loss(&train, w) - 0.05 * dot(w, w);
        let h = 1e-5;
        for j in 0..train.d {
            assert!((parts[j] - whole[j]).abs() < 1e-14, "{problem} partition, j = {j}");
            let (mut up, mut down) = (w.clone(), w.clone());
            up[j] += h;
            down[j] -= h;
            let fd = (data_loss(&up) - data_loss(&down)) / (2.0 * h);
            assert!((fd - whole[j]).abs() < 1e-7, "{problem} j = {j}: {fd} vs {}", whole[j]);
        }
        let mut l2 = vec![0.0; train.d];
        obj.add_l2(&w, &mut l2);
        assert!(l2.iter().zip(&w).all(|(g, x)| *g == 0.1 * x));
    }
}

#[test]
fn gradient_from_predictions_equals_the_partial_gradient() {
    for problem in Problem::ALL {
        let (train, _) = shipped("breast-cancer.csv", problem);
        let obj = Objective::new(problem, 0.0, train.rows());
        let w = some_weights(train.d);
        let rows = 37..190;
        let mut z = vec![0.0; rows.len()];
        obj.predictions(&train, rows.clone(), &w, &mut z);
        assert_eq!(z[0], dot(train.row(37), &w));
        let (mut direct, mut decoded) = (vec![0.0; train.d], vec![0.0; train.d]);
        obj.add_partial_gradient(&train, rows.clone(), &w, &mut direct);
        obj.add_gradient_from_predictions(&train, rows, &z, &mut decoded);
        assert_eq!(direct, decoded, "{problem}");
        assert!(direct.iter().any(|&g| g != 0.0));
    }
}

#[test]
fn logistic_loss_is_stable_for_large_margins() {
    let data = Dataset {
        names: vec!["x".into()],
        features: vec![1.0, 1.0],
        targets: vec![1.0, 0.0],
        d: 1,
    };
    let obj = Objective::new(Problem::Logistic, 0.0, 2);
    // Row 1 (y = 0) at z = 800 costs 800; row 0 (y = 1) costs e^{-800} ≈ 0.
    assert_eq!(obj.loss(&data, &[800.0]), 400.0);
    assert_eq!(obj.loss(&data, &[-800.0]), 400.0);
    assert!((obj.loss(&data, &[0.0]) - 2f64.ln()).abs() < 1e-15);
}

/// Gradient descent with step 1/L reaches the ridge solution
/// (XᵀX/N + λI)w = Xᵀy/N to 1e-6 in every coordinate.
#[test]
fn least_squares_descent_reaches_the_normal_equations() {
    let (train, test) = synthetic(Problem::LeastSquares, 300, 6, 5);
    let (n, d, l2) = (train.rows(), train.d, 0.01);
    let obj = Objective::new(Problem::LeastSquares, l2, n);
    let x = Mat::from_fn(n, d, |i, j| train.features[i * d + j]);
    let y = Mat::from_fn(n, 1, |i, _| train.targets[i]);
    let gram = x.transpose() * &x;
    let a = Mat::from_fn(d, d, |i, j| gram[(i, j)] / n as f64 + if i == j { l2 } else { 0.0 });
    let xty = x.transpose() * &y;
    let b = Mat::from_fn(d, 1, |i, _| xty[(i, 0)] / n as f64);
    let exact = faer::linalg::solvers::Solve::solve(&a.llt(Side::Lower).unwrap(), &b);
    let exact: Vec<f64> = (0..d).map(|i| exact[(i, 0)]).collect();
    let w = descend(&obj, &train, 2000);
    let gap = w
        .iter()
        .zip(exact.iter())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(gap < 1e-6, "max |w - w_exact| = {gap}");
    // The fit explains the noise-1 data: test MSE near the noise variance.
    let mse = metric(Problem::LeastSquares, &test, &w);
    assert!((0.5..2.0).contains(&mse), "test mse {mse}");
}

/// The power iteration's λ_max matches faer's symmetric eigensolver.
#[test]
fn smoothness_is_the_largest_eigenvalue() {
    let cases = [
        (
            Problem::LeastSquares,
            shipped("diabetes.csv", Problem::LeastSquares).0,
            0.0,
        ),
        (
            Problem::Logistic,
            shipped("breast-cancer.csv", Problem::Logistic).0,
            0.5,
        ),
        (
            Problem::LeastSquares,
            synthetic(Problem::LeastSquares, 400, 20, 1).0,
            1e-3,
        ),
    ];
    for (problem, train, l2) in cases {
        let (n, d) = (train.rows(), train.d);
        let x = Mat::from_fn(n, d, |i, j| train.features[i * d + j]);
        let product = x.transpose() * &x;
        let gram = Mat::from_fn(d, d, |i, j| product[(i, j)] / n as f64);
        let top = gram
            .self_adjoint_eigenvalues(Side::Lower)
            .unwrap()
            .into_iter()
            .fold(f64::MIN, f64::max);
        let c = if problem == Problem::Logistic { 0.25 } else { 1.0 };
        let expected = c * top + l2;
        let got = Objective::new(problem, l2, n).smoothness(&train);
        assert!(
            ((got - expected) / expected).abs() < 1e-8,
            "{problem}: {got} vs {expected}"
        );
    }
    let zero = Dataset {
        names: vec!["x".into()],
        features: vec![0.0; 3],
        targets: vec![0.0; 3],
        d: 1,
    };
    assert_eq!(Objective::new(Problem::Logistic, 0.2, 3).smoothness(&zero), 0.2);
}

/// Tandon's mixture is learnable: logistic regression by gradient descent
/// reaches a test accuracy far above chance (0.95 at this seed; the labels'
/// own noise, y ~ Bernoulli(σ(xᵀβ)) with xᵀβ of sd ≈ 10, caps it near there).
#[test]
fn logistic_fit_on_synthetic_data_beats_chance() {
    let (train, test) = synthetic(Problem::Logistic, 5000, 10, 9);
    let obj = Objective::new(Problem::Logistic, 1e-4, train.rows());
    let w = descend(&obj, &train, 300);
    let accuracy = metric(Problem::Logistic, &test, &w);
    assert!(accuracy > 0.9, "test accuracy {accuracy}");
    assert!(obj.loss(&train, &w) < 2f64.ln() - 0.3);
}

#[test]
fn logistic_fit_on_breast_cancer_is_accurate() {
    let (train, test) = shipped("breast-cancer.csv", Problem::Logistic);
    let obj = Objective::new(Problem::Logistic, 1e-3, train.rows());
    let w = descend(&obj, &train, 500);
    let accuracy = metric(Problem::Logistic, &test, &w);
    assert!(accuracy > 0.93, "test accuracy {accuracy}");
}

#[test]
fn metric_counts_accuracy_and_mse() {
    let data = Dataset {
        names: vec!["x".into()],
        features: vec![1.0, -1.0, 2.0, 0.0],
        targets: vec![1.0, 0.0, 0.0, 0.0],
        d: 1,
    };
    // z = 1, -1, 2, 0: right, right, wrong, right (0 is not > 0).
    assert_eq!(metric(Problem::Logistic, &data, &[1.0]), 0.75);
    // errors 0, -1, 2, 0.
    assert_eq!(metric(Problem::LeastSquares, &data, &[1.0]), 5.0 / 4.0);
}
