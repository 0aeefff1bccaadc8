use std::io::Write;
use std::path::PathBuf;

use super::*;
use crate::train::problem::Problem;

/// A temporary CSV holding `text`; the handle keeps it alive.
fn csv_file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

/// The error message of reading `text`, after checking it is one line naming the file.
fn read_error(text: &str, target: Option<&str>) -> String {
    let f = csv_file(text);
    let err = Dataset::read_csv(f.path(), target).unwrap_err().to_string();
    let file = f.path().display().to_string();
    assert!(err.starts_with(&file), "{err}");
    assert!(!err.contains('\n'), "{err}");
    err[file.len()..].to_string()
}

fn shipped(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("data")
        .join(name)
}

/// A data set whose row i has the single feature i and target i.
fn numbered(rows: usize) -> Dataset {
    Dataset {
        names: vec!["i".into()],
        features: (0..rows).map(|i| i as f64).collect(),
        targets: (0..rows).map(|i| i as f64).collect(),
        d: 1,
    }
}

#[test]
fn reads_names_and_the_target_by_name_or_last() {
    let f = csv_file("\u{feff}a, b ,y\n1,2,3\n\n4,5e-1,-6\r\n");
    let last = Dataset::read_csv(f.path(), None).unwrap();
    assert_eq!(last.names, ["a", "b"]);
    assert_eq!((last.rows(), last.d), (2, 2));
    assert_eq!(last.features, [1.0, 2.0, 4.0, 0.5]);
    assert_eq!(last.targets, [3.0, -6.0]);
    assert_eq!(last.row(1), [4.0, 0.5]);
    let by_name = Dataset::read_csv(f.path(), Some("a")).unwrap();
    assert_eq!(by_name.names, ["b", "y"]);
    assert_eq!(by_name.features, [2.0, 3.0, 0.5, -6.0]);
    assert_eq!(by_name.targets, [1.0, 4.0]);
}

#[test]
fn each_bad_file_has_its_own_one_line_message() {
    assert_eq!(
        read_error("", None),
        ": the file is empty; the data needs a header row of column names, then one row per example"
    );
    assert_eq!(
        read_error("a,b\n\n", None),
        ": a header but no data rows; the data needs at least one row under the header"
    );
    assert_eq!(
        read_error("y\n1\n", None),
        ":1: the only column is `y`; the data needs a target column and at least one feature column"
    );
    assert_eq!(
        read_error("a,b,a\n1,2,3\n", None),
        ":1: column `a` appears twice in the header; column names must be distinct"
    );
    assert_eq!(
        read_error("a,b,y\n1,2,3\n", Some("label")),
        ":1: no column named `label` for the target; the columns are: a, b, y"
    );
    assert_eq!(
        read_error("a,b,y\n1,2,3\n4,5\n", None),
        ":3: 2 fields, the header has 3; every row needs one value per column"
    );
    for bad in ["x", "", "inf", "NaN", "1e999"] {
        assert_eq!(
            read_error(&format!("a,b,y\n1,2,3\n\n4,{bad},6\n"), None),
            format!(":4: column 2 (`b`) holds `{bad}`; every cell must be a finite number (e.g. 3, -0.5, 1e-4)")
        );
    }
    let missing = Path::new("/nonexistent/gcsim-data.csv");
    let err = Dataset::read_csv(missing, None).unwrap_err().to_string();
    assert!(
        err.starts_with("/nonexistent/gcsim-data.csv: cannot read the data: "),
        "{err}"
    );
    let f = csv_file("");
    std::fs::write(f.path(), b"a,y\n1,\xff\n").unwrap();
    let err = Dataset::read_csv(f.path(), None).unwrap_err().to_string();
    assert!(err.contains("cannot read the data"), "{err}");
}

#[test]
fn shipped_breast_cancer_has_569_rows_of_30_features() {
    let data = Dataset::read_csv(&shipped("breast-cancer.csv"), None).unwrap();
    assert_eq!((data.rows(), data.d), (569, 30));
    assert_eq!(
        (data.names[0].as_str(), data.names[29].as_str()),
        ("mean_radius", "worst_fractal_dimension")
    );
    let ones = data.targets.iter().filter(|&&y| y == 1.0).count();
    let zeros = data.targets.iter().filter(|&&y| y == 0.0).count();
    assert_eq!((zeros, ones), (212, 357));
    // sklearn's first row: mean radius 17.99, malignant.
    assert_eq!((data.row(0)[0], data.targets[0]), (17.99, 0.0));
}

#[test]
fn shipped_diabetes_has_442_rows_of_10_features() {
    let data = Dataset::read_csv(&shipped("diabetes.csv"), Some("target")).unwrap();
    assert_eq!((data.rows(), data.d), (442, 10));
    assert_eq!(
        data.names,
        ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
    );
    assert_eq!((data.row(0)[2], data.targets[0]), (32.1, 151.0));
    let (lo, hi) = data
        .targets
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &y| (a.min(y), b.max(y)));
    assert_eq!((lo, hi), (25.0, 346.0));
}

#[test]
fn split_partitions_the_rows_by_seed() {
    let data = numbered(101);
    let (train, test) = data.split(0.2, 7);
    assert_eq!((train.rows(), test.rows()), (81, 20));
    assert_eq!(train.names, data.names);
    let mut seen: Vec<f64> = train.targets.iter().chain(&test.targets).copied().collect();
    seen.sort_by(f64::total_cmp);
    assert_eq!(seen, data.targets, "disjoint and covering");
    assert_eq!(train.features, train.targets, "rows move with their targets");
    assert_eq!(data.split(0.2, 7), (train.clone(), test.clone()));
    let (other, _) = data.split(0.2, 8);
    assert_ne!(other.targets, train.targets);
    assert_ne!(
        train.targets[..10],
        (20..30).map(|i| i as f64).collect::<Vec<_>>()[..],
        "shuffled"
    );
}

#[test]
fn split_keeps_one_training_row_and_allows_no_test() {
    assert_eq!(numbered(2).split(0.9, 0).0.rows(), 1);
    let (train, test) = numbered(5).split(0.0, 3);
    assert_eq!((train.rows(), test.rows()), (5, 0));
    assert_eq!(numbered(10).split(0.25, 0).1.rows(), 3, "round(2.5) = 3");
}

/// Golden value: a changed permutation changes every trained result.
#[test]
fn split_value_stability() {
    let (train, test) = numbered(8).split(0.25, 0);
    assert_eq!(test.targets, [4.0, 5.0]);
    assert_eq!(train.targets, [6.0, 7.0, 1.0, 2.0, 3.0, 0.0]);
}

#[test]
fn standardizer_uses_the_training_statistics() {
    let data = Dataset::read_csv(&shipped("breast-cancer.csv"), None).unwrap();
    let (train, test) = data.split(0.2, 1);
    let s = Standardizer::fit(&train);
    let t = s.apply(&train);
    assert_eq!(
        (t.d, t.names[0].as_str(), t.names[1].as_str()),
        (31, "intercept", "mean_radius")
    );
    assert_eq!(t.targets, train.targets);
    let n = t.rows() as f64;
    for j in 0..t.d {
        let col: Vec<f64> = (0..t.rows()).map(|i| t.row(i)[j]).collect();
        let mean = col.iter().sum::<f64>() / n;
        let sd = (col.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        if j == 0 {
            assert!(col.iter().all(|&x| x == 1.0));
        } else {
            assert!(
                mean.abs() < 1e-12 && (sd - 1.0).abs() < 1e-12,
                "column {j}: {mean} {sd}"
            );
        }
    }
    let u = s.apply(&test);
    for j in 1..u.d {
        let expected = (test.row(0)[j - 1] - s.mean()[j - 1]) / s.sd()[j - 1];
        assert_eq!(u.row(0)[j], expected);
    }
    let test_mean: f64 = (0..u.rows()).map(|i| u.row(i)[1]).sum::<f64>() / u.rows() as f64;
    assert!(
        test_mean.abs() > 1e-6,
        "the test set is not standardised by its own mean"
    );
}

#[test]
fn standardizer_leaves_a_constant_feature_finite() {
    let data = Dataset {
        names: vec!["c".into(), "x".into()],
        features: vec![0.1, 1.0, 0.1, 3.0, 0.1, 5.0],
        targets: vec![0.0; 3],
        d: 2,
    };
    let s = Standardizer::fit(&data);
    assert_eq!(s.sd()[0], 1.0);
    let t = s.apply(&data);
    assert!(t.features.iter().all(|x| x.is_finite()));
    assert_eq!((t.row(0)[1], t.row(0)[2]), (0.0, -1.5_f64.sqrt()));
}

#[test]
fn synthetic_spec_parses_with_defaults_and_round_trips() {
    assert_eq!("synthetic".parse::<Synthetic>(), Ok(Synthetic::default()));
    let s: Synthetic = "synthetic:features=3, rows=50".parse().unwrap();
    assert_eq!(s, Synthetic::new(50, 3, 1.0).unwrap());
    assert_eq!(s.to_string(), "synthetic:rows=50,features=3,noise=1");
    assert_eq!(s.to_string().parse(), Ok(s));
    let e = |s: &str| s.parse::<Synthetic>().unwrap_err().to_string();
    assert_eq!(
        e("synthetic;rows=2"),
        "`synthetic;rows=2` is not a synthetic spec; accepted: synthetic or synthetic:rows=R,features=D,noise=S"
    );
    assert_eq!(
        e("synthetic:cols=2"),
        "unknown key `cols` for synthetic data; accepted: rows, features, noise"
    );
    assert_eq!(e("synthetic:rows=5,rows=6"), "key `rows` is given twice");
    assert_eq!(
        e("synthetic:rows=1.5"),
        "`rows=1.5` is not a number; accepted: a whole number >= 2"
    );
    assert_eq!(
        e("synthetic:rows=1"),
        "`rows=1` is out of range; accepted: a whole number >= 2"
    );
    assert_eq!(
        e("synthetic:features=0"),
        "`features=0` is out of range; accepted: a whole number >= 1"
    );
    assert_eq!(
        e("synthetic:rows=100000,features=1001"),
        "synthetic data of rows=100000 × features=1001 is too large; accepted: rows × features <= 100000000"
    );
    assert_eq!(
        e("synthetic:noise=-1"),
        "`noise=-1` is out of range; accepted: a finite number >= 0"
    );
    assert_eq!(
        e("synthetic:noise=inf"),
        "`noise=inf` is out of range; accepted: a finite number >= 0"
    );
}

#[test]
fn data_source_is_synthetic_or_a_path() {
    let s = |s: &str| s.parse::<DataSource>();
    assert_eq!(s("synthetic"), Ok(DataSource::Synthetic(Synthetic::default())));
    assert_eq!(
        s("synthetic:rows=10"),
        Ok(DataSource::Synthetic(Synthetic::new(10, 20, 1.0).unwrap()))
    );
    assert_eq!(s("synthetic.csv"), Ok(DataSource::File("synthetic.csv".into())));
    assert_eq!(s("data/diabetes.csv").unwrap().to_string(), "data/diabetes.csv");
    assert!(s("synthetic:rows=0").is_err());
}

#[test]
fn synthetic_least_squares_is_a_function_of_the_seed() {
    let spec = Synthetic::new(50, 4, 0.5).unwrap();
    let a = Dataset::synthetic(Problem::LeastSquares, spec, 3);
    assert_eq!((a.rows(), a.d, a.names[3].as_str()), (50, 4, "x4"));
    assert_eq!(a, Dataset::synthetic(Problem::LeastSquares, spec, 3));
    assert_ne!(a.features, Dataset::synthetic(Problem::LeastSquares, spec, 4).features);
    // noise = 0: y is exactly linear in x, so 5 rows fix w* and the rest agree.
    let exact = Dataset::synthetic(Problem::LeastSquares, Synthetic::new(50, 4, 0.0).unwrap(), 3);
    let x = faer::Mat::from_fn(50, 4, |i, j| exact.features[i * 4 + j]);
    let y = faer::Mat::from_fn(50, 1, |i, _| exact.targets[i]);
    let w = faer::linalg::solvers::SolveLstsq::solve_lstsq(&x.qr(), &y);
    let residual = &x * &w - &y;
    assert!((0..50).all(|i| residual[(i, 0)].abs() < 1e-10));
}

/// Labels of the two-Gaussian mixture are balanced (P(y=1) = 1/2 by the
/// symmetry x → −x): within 4 standard errors of 1/2 at a fixed seed.
#[test]
fn synthetic_logistic_labels_are_balanced_and_binary() {
    let rows = 20_000;
    let data = Dataset::synthetic(Problem::Logistic, Synthetic::new(rows, 20, 1.0).unwrap(), 11);
    assert!(data.targets.iter().all(|&y| y == 0.0 || y == 1.0));
    let share = data.targets.iter().sum::<f64>() / rows as f64;
    let se = (0.25 / rows as f64).sqrt();
    assert!((share - 0.5).abs() < 4.0 * se, "share of ones {share}");
}

#[test]
fn synthetic_logistic_noise_zero_is_the_sign_of_the_margin() {
    let spec = Synthetic::new(500, 5, 0.0).unwrap();
    let hard = Dataset::synthetic(Problem::Logistic, spec, 2);
    let soft = Dataset::synthetic(Problem::Logistic, Synthetic { noise: 1.0, ..spec }, 2);
    assert_eq!(hard.features, soft.features, "noise changes labels only");
    assert_ne!(hard.targets, soft.targets);
    // Some β ∈ {±1}^5 separates the noiseless labels exactly.
    let separates = (0..32).any(|mask: u32| {
        let beta: Vec<f64> = (0..5).map(|j| if mask >> j & 1 == 1 { 1.0 } else { -1.0 }).collect();
        (0..hard.rows()).all(|i| (dot(hard.row(i), &beta) > 0.0) == (hard.targets[i] == 1.0))
    });
    assert!(separates);
}

#[test]
fn sigmoid_is_stable() {
    assert_eq!(sigmoid(0.0), 0.5);
    assert_eq!(sigmoid(-1000.0), 0.0);
    assert_eq!(sigmoid(1000.0), 1.0);
    assert!((sigmoid(2.0) + sigmoid(-2.0) - 1.0).abs() < 1e-15);
}

/// Golden values: a changed generator changes every synthetic result, so it
/// must be a deliberate decision.
#[test]
fn synthetic_value_stability() {
    let close = |got: &[f64], want: &[f64]| {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-12 * w.abs(), "{got:?} vs {want:?}");
        }
    };
    let spec = Synthetic::new(2, 2, 1.0).unwrap();
    let ls = Dataset::synthetic(Problem::LeastSquares, spec, 0);
    close(
        &ls.features,
        &[
            -0.17242816376149503,
            2.444597657471739,
            0.5242851622668427,
            0.17663836214214157,
        ],
    );
    close(&ls.targets, &[-1.9894532686632171, 1.4916016870344138]);
    let lr = Dataset::synthetic(Problem::Logistic, spec, 0);
    close(
        &lr.features,
        &[
            16.535915808710154,
            6.509967033570237,
            12.057522635521,
            1.252361119571006,
        ],
    );
    assert_eq!(lr.targets, [1.0, 1.0]);
}
