//! `gcsim train`: gradient descent on the simulated timeline, against
//! closed-form gradient descent, the engine's iteration law, and the
//! identities between schemes that the update rules imply.

use assert_cmd::Command;
use faer::{Col, Mat, Scale, Side};

use gcsim::load::LoadModel;
use gcsim::scheme::{Params, Scheme, SchemeKind};
use gcsim::study::{Decoder, Study, Workers};
use gcsim::train::data::DataSource;
use gcsim::train::problem::Problem;
use gcsim::train::run::{Trained, Trainer};
use gcsim::train::setup::{Recipe, Schedule, Setup};

use super::common::scheme;
use super::errors::assert_usage_error;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn manifest(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

pub(super) fn setup(problem: Problem, data: &str, step: Option<f64>) -> Setup {
    Setup::prepare(&Recipe {
        problem,
        data: data.parse::<DataSource>().unwrap(),
        target: None,
        test_fraction: 0.2,
        l2: 0.0,
        step,
        schedule: Schedule::Constant,
        seed: 3,
    })
    .unwrap()
}

pub(super) fn study(
    n: usize,
    dist: &str,
    load: LoadModel,
    schemes: Vec<Scheme>,
    repeats: u64,
    iterations: u64,
) -> Study {
    let workers = Workers::from_dist(dist, std::path::Path::new("")).unwrap();
    Study::with_workers(n, workers, load, schemes, repeats, 11)
        .unwrap()
        .with_iterations(iterations)
        .unwrap()
}

pub(super) fn train(study: &Study, setup: &Setup) -> Vec<Trained> {
    Trainer::new(study, setup).unwrap().run(&|_| {})
}

pub(super) fn with(kind: SchemeKind, n: usize, params: Params) -> Scheme {
    Scheme::new(kind, n, params).unwrap()
}

/// Relative difference, for values of any size.
pub(super) fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(1e-300)
}

/// The exact schemes decode the same full gradient, so their iterates are
/// the same up to rounding: uncoded, frc, crc, mds (X·w decoded),
/// comm-efficient (m coordinate blocks), and the strategies whose master
/// ends with every partition. Only their clocks differ.
#[test]
fn exact_schemes_follow_the_same_iterates() {
    let n = 12;
    for problem in [Problem::LeastSquares, Problem::Logistic] {
        let setup = setup(problem, "synthetic:rows=600,features=8,noise=0.5", None);
        let schemes = vec![
            scheme(SchemeKind::Uncoded, n, 0),
            scheme(SchemeKind::Frc, n, 2),
            scheme(SchemeKind::Crc, n, 2),
            scheme(SchemeKind::Mds, n, 3),
            with(
                SchemeKind::CommEfficient,
                n,
                Params {
                    s: Some(2),
                    m: Some(3),
                    ..Params::default()
                },
            ),
            scheme(SchemeKind::MultiMessage, n, 2),
            with(SchemeKind::Speculative, n, Params::default()),
            with(
                SchemeKind::PartialCrc,
                n,
                Params {
                    s: Some(1),
                    parts: Some(4),
                    ..Params::default()
                },
            ),
        ];
        let study = study(
            n,
            "exp:rate=1,p_slow=0.1,slowdown=5,persist=0.5",
            LoadModel::Scaled,
            schemes,
            2,
            40,
        );
        let trained = train(&study, &setup);
        let reference = &trained[0];
        for t in &trained[1..] {
            for (run, base) in t.runs.iter().zip(&reference.runs) {
                assert_eq!(run.loss.len(), 41, "{}", t.scheme);
                for i in 0..run.loss.len() {
                    assert!(
                        rel(run.loss[i], base.loss[i]) < 1e-9,
                        "{problem:?} {} iteration {i}: loss {} vs uncoded {}",
                        t.scheme,
                        run.loss[i],
                        base.loss[i]
                    );
                    assert!(rel(run.metric[i], base.metric[i]) < 1e-9, "{} metric", t.scheme);
                }
                assert!(
                    run.time.last() != base.time.last(),
                    "{}: its own clock, not uncoded's",
                    t.scheme
                );
            }
        }
        // Training made progress.
        let run = &reference.runs[0];
        assert!(run.loss[40] < 0.7 * run.loss[0], "{problem:?}: {:?}", run.loss);
    }
}

/// Under `--decoder rank` the master decodes from the shortest prefix of
/// the arrivals that the real code decodes
/// (`Code::shortest_decodable_prefix`): the exact codes still follow
/// uncoded's iterates, which a prefix one message short (a least-squares
/// approximation) would not.
#[test]
fn rank_decoded_codes_follow_the_same_iterates() {
    let n = 12;
    let setup = setup(Problem::LeastSquares, "synthetic:rows=600,features=8,noise=0.5", None);
    let schemes = vec![
        scheme(SchemeKind::Uncoded, n, 0),
        scheme(SchemeKind::Frc, n, 2),
        scheme(SchemeKind::Crc, n, 3),
        scheme(SchemeKind::Mds, n, 3),
    ];
    let study = study(n, "exp:rate=1", LoadModel::Fixed, schemes, 2, 30)
        .with_decoder(Decoder::Rank)
        .unwrap();
    let trained = train(&study, &setup);
    let reference = &trained[0];
    for t in &trained[1..] {
        for (run, base) in t.runs.iter().zip(&reference.runs) {
            assert_eq!(run.loss.len(), 31, "{}", t.scheme);
            for i in 0..run.loss.len() {
                assert!(
                    rel(run.loss[i], base.loss[i]) < 1e-9,
                    "{} iteration {i}: loss {} vs uncoded {}",
                    t.scheme,
                    run.loss[i],
                    base.loss[i]
                );
            }
        }
    }
}

/// The time axis: one training iteration is one iteration of the engine,
/// so the mean time per iteration is the exact mean `run` reports (within
/// 4 standard errors of the iterations' sample).
#[test]
fn iterations_take_the_engines_time() {
    let n = 10;
    let setup = setup(Problem::LeastSquares, "synthetic:rows=300,features=4,noise=1", None);
    for (kind, s) in [(SchemeKind::Crc, 2), (SchemeKind::Frc, 1), (SchemeKind::Ignore, 3)] {
        let sch = scheme(kind, n, s);
        let study = study(n, "shifted-exp:shift=1,rate=2", LoadModel::Scaled, vec![sch], 8, 250);
        let exact = study.exact_iteration_law(&sch).unwrap().mean();
        let trained = train(&study, &setup);
        let steps: Vec<f64> = trained[0]
            .runs
            .iter()
            .flat_map(|r| r.time.windows(2).map(|w| w[1] - w[0]))
            .collect();
        let m = steps.len() as f64;
        let mean = steps.iter().sum::<f64>() / m;
        let var = steps.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0);
        let se = (var / m).sqrt();
        assert!(
            (mean - exact).abs() < 4.0 * se,
            "{sch}: {mean} per iteration, exact {exact} (se {se})"
        );
    }
}

/// Least squares with the exact gradient is gradient descent,
/// w ← w − η(XᵀXw − Xᵀy)/N, computed here independently; with η = 1/L the
/// loss gap contracts by (1 − μ/L)² per iteration, μ and L the extreme
/// eigenvalues of XᵀX/N, and asymptotically at exactly that rate.
#[test]
fn least_squares_is_closed_form_gradient_descent() {
    let setup = setup(Problem::LeastSquares, &manifest("data/diabetes.csv"), None);
    let (x, y) = {
        let t = &setup.train;
        let x = Mat::from_fn(t.rows(), t.d, |i, j| t.features[i * t.d + j]);
        (x, Col::from_fn(t.rows(), |i| t.targets[i]))
    };
    let rows = x.nrows() as f64;
    let h = Scale(1.0 / rows) * (x.transpose() * &x);
    let b = Scale(1.0 / rows) * (x.transpose() * &y);
    let eig = h.self_adjoint_eigenvalues(Side::Lower).unwrap();
    let (mu, l) = (
        eig.iter().copied().fold(f64::MAX, f64::min),
        eig.iter().copied().fold(f64::MIN, f64::max),
    );
    assert!(rel(setup.step, 1.0 / l) < 1e-8, "the default step is 1/L");
    let iterations = 1500;
    let n = 8;
    let study = study(
        n,
        "exp:rate=1",
        LoadModel::Fixed,
        vec![scheme(SchemeKind::Uncoded, n, 0)],
        1,
        iterations,
    );
    let run = &train(&study, &setup)[0].runs[0];
    let loss = |w: &Col<f64>| (&x * w - &y).squared_norm_l2() / (2.0 * rows);
    let w_star = faer::linalg::solvers::Solve::solve(&h.partial_piv_lu(), &b);
    let f_star = loss(&w_star);
    let mut w = Col::<f64>::zeros(x.ncols());
    for t in 0..=iterations as usize {
        assert!(
            rel(run.loss[t], loss(&w)) < 1e-10,
            "iteration {t}: {} vs closed form {}",
            run.loss[t],
            loss(&w)
        );
        w -= Scale(setup.step) * (&h * &w - &b);
    }
    let gap = |t: usize| run.loss[t] - f_star;
    let rate = (1.0 - mu / l).powi(2);
    for t in (0..=iterations as usize).step_by(50) {
        assert!(
            gap(t) <= gap(0) * rate.powi(t as i32) * (1.0 + 1e-6) + 1e-9 * f_star,
            "iteration {t}"
        );
    }
    // Where the slowest mode dominates and the gap is still well above rounding.
    let t = (0..iterations as usize)
        .rev()
        .find(|&t| gap(t) > 1e-7 * f_star)
        .unwrap();
    assert!(t > 200, "the gap stays resolvable for a while ({t})");
    let observed = gap(t) / gap(t - 1);
    assert!(
        (observed - rate).abs() < 1e-3,
        "rate {observed} vs (1 - mu/L)^2 = {rate}"
    );
}

/// `ignore` with s = 0 uses every partition: uncoded, bit for bit.
#[test]
fn ignore_without_tolerance_is_uncoded() {
    let n = 10;
    let setup = setup(Problem::Logistic, "synthetic:rows=400,features=5,noise=1", None);
    let schemes = vec![scheme(SchemeKind::Uncoded, n, 0), scheme(SchemeKind::Ignore, n, 0)];
    let study = study(n, "exp:rate=1", LoadModel::Fixed, schemes, 3, 30);
    let trained = train(&study, &setup);
    assert_eq!(trained[0].runs, trained[1].runs);
}

/// K-async with K = n: every update holds all n gradients, each computed on
/// the current model, so the iterates are synchronous gradient descent's,
/// bit for bit.
#[test]
fn k_async_with_every_worker_is_synchronous() {
    let n = 8;
    let setup = setup(Problem::Logistic, "synthetic:rows=400,features=5,noise=1", None);
    let k = |kind| {
        with(
            kind,
            n,
            Params {
                k: Some(n),
                ..Params::default()
            },
        )
    };
    let schemes = vec![scheme(SchemeKind::Uncoded, n, 0), k(SchemeKind::KAsync)];
    let study = study(n, "exp:rate=1", LoadModel::Fixed, schemes, 2, 25);
    let trained = train(&study, &setup);
    for (a, b) in trained[0].runs.iter().zip(&trained[1].runs) {
        assert_eq!(a.loss, b.loss);
        assert_eq!(a.metric, b.metric);
    }
    // With K < n the updates are stale and differ.
    let fewer = with(
        SchemeKind::KAsync,
        n,
        Params {
            k: Some(n / 2),
            ..Params::default()
        },
    );
    let study = super::train::study(n, "exp:rate=1", LoadModel::Fixed, vec![fewer], 1, 25);
    let stale = &train(&study, &setup)[0].runs[0];
    assert_ne!(stale.loss, trained[0].runs[0].loss);
}

/// `ignore` drops the partitions of the slowest workers. When stragglers
/// persist, the same partitions are dropped iteration after iteration and
/// the model drifts towards the other partitions' optimum: its training
/// loss ends measurably higher than when stragglers are drawn afresh.
#[test]
fn ignore_pays_for_persistent_stragglers() {
    // A small step averages the dropped partitions over many iterations
    // when they change; 8 training rows per partition make their optima differ.
    let n = 20;
    let setup = setup(
        Problem::LeastSquares,
        "synthetic:rows=200,features=10,noise=2",
        Some(0.05),
    );
    let final_losses = |persist: f64| -> Vec<f64> {
        let dist = format!("exp:rate=1,p_slow=0.15,slowdown=10,persist={persist}");
        let study = study(
            n,
            &dist,
            LoadModel::Fixed,
            vec![scheme(SchemeKind::Ignore, n, 6)],
            24,
            300,
        );
        train(&study, &setup)[0]
            .runs
            .iter()
            .map(|r| *r.loss.last().unwrap())
            .collect()
    };
    let stats = |xs: &[f64]| {
        let m = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / m;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1.0);
        (mean, (var / m).sqrt())
    };
    let (persistent, se_p) = stats(&final_losses(0.95));
    let (fresh, se_f) = stats(&final_losses(0.0));
    let margin = 4.0 * (se_p * se_p + se_f * se_f).sqrt();
    assert!(
        persistent - fresh > margin,
        "persistent {persistent} ± {se_p}, fresh {fresh} ± {se_f}"
    );
}

/// The command end to end: the table's verdict, the CSV's columns, the
/// curves and the figure.
#[test]
fn train_answers_which_scheme_is_first() {
    let dir = tempfile::tempdir().unwrap();
    let curves = dir.path().join("curves.csv");
    let plot = dir.path().join("tta.png");
    let out = gcsim()
        .args([
            "train",
            "--data",
            &manifest("data/breast-cancer.csv"),
            "--n",
            "10",
            "--scheme",
            "uncoded,ignore,crc,k-async",
            "--s",
            "2",
            "--repeats",
            "3",
            "--iterations",
            "40",
            "--target-metric",
            "0.95",
            "--format",
            "table",
            "--curves",
            curves.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("# first to target: "), "{table}");
    assert!(table.contains("ignore s=2"), "{table}");
    let text = std::fs::read_to_string(&curves).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "strategy,repeat,iteration,time,loss,test_accuracy"
    );
    assert_eq!(lines.count(), 4 * 3 * 41);
    assert!(std::fs::metadata(&plot).unwrap().len() > 10_000);

    let out = gcsim()
        .args([
            "train",
            "--data",
            "synthetic:rows=300,features=3,noise=1",
            "--problem",
            "least-squares",
            "--n",
            "6",
            "--scheme",
            "crc",
            "--s",
            "0,1",
            "--iterations",
            "20",
            "--repeats",
            "2",
            "--target-loss",
            "1e9",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "strategy,exact,repeats,reached,time_to_target,time_to_target_ci_low,time_to_target_ci_high,iterations_to_target,time_per_iteration,final_loss,final_metric,final_time,diverged,stalled"
    );
    // A target met at the start: reached in every repeat at time 0.
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&row[..5], ["crc s=0", "true", "2", "1.0", "0.0"]);
}

#[test]
fn train_refuses_bad_input() {
    let bc = manifest("data/breast-cancer.csv");
    let base = ["train", "--n", "10", "--s", "2"];
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["--test-fraction", "1"], vec!["--test-fraction", "below 1"]),
        (vec!["--l2", "-1"], vec!["--l2", ">= 0"]),
        (vec!["--step", "0"], vec!["--step", "> 0"]),
        (vec!["--schedule", "fast"], vec!["--schedule", "inv-sqrt"]),
        (vec!["--schedule", "inverse:decay=-1"], vec!["--schedule", "D > 0"]),
        (vec!["--problem", "svm"], vec!["--problem", "logistic"]),
        (vec!["--repeats", "0"], vec!["--repeats", "1 to"]),
        (vec!["--iterations", "0"], vec!["--iterations", "1 to"]),
        (vec!["--data", "no-such.csv"], vec!["no-such.csv", "cannot read"]),
        (vec!["--data", &bc, "--target", "nope"], vec!["nope", "the columns are"]),
        (vec!["--data", "synthetic:rows=1"], vec!["rows"]),
        (vec!["--target-loss", "nan"], vec!["--target-loss"]),
        (vec!["--plot", "loss.jpg"], vec!["--plot", ".png, .svg or .pdf"]),
        (
            vec!["--data", "synthetic:rows=10,features=2"],
            vec!["partitions", "training set has"],
        ),
    ];
    for (extra, expected) in cases {
        let mut args: Vec<&str> = base.to_vec();
        if !extra.contains(&"--scheme") {
            args.extend(["--scheme", "crc"]);
        }
        args.extend(extra);
        assert_usage_error(&args, None, &expected);
    }
    // Logistic regression needs a target of two values.
    assert_usage_error(
        &[
            "train",
            "--data",
            &manifest("data/diabetes.csv"),
            "--n",
            "4",
            "--s",
            "1",
        ],
        None,
        &["two"],
    );
}
