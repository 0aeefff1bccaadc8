//! `gcsim fit` on traces with a load column: the model chosen for traces
//! drawn from each load model (with the library's own samplers at fixed
//! seeds), affine's unit time against its standard error, the CLI end to
//! end, its errors, and the example trace `data/trace-load.csv`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use gcsim::dist::Dist;
use gcsim::fit::load::{LoadFitReport, LoadTrace, fit_loads};
use gcsim::load::LoadModel;
use gcsim::rng::trial_rng;
use predicates::prelude::*;
use rand::RngExt;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// A trace drawn from `model`: `steps` steps of `workers` workers at each
/// load, time = `model.sample(load, dist)` times the step's factor (1 unless
/// `step_spread` > 0: then e^(σZ) with σ = `step_spread`, shared by the
/// step's workers and applied to X, so that the workers of a step are
/// correlated while X keeps one law at every load). Step s draws from
/// stream s of `seed`; steps are numbered on through the loads; times are
/// written to 6 decimals.
pub fn synthetic(model: LoadModel, dist: &Dist, loads: &[f64], steps: u64, workers: u64, seed: u64) -> String {
    correlated(model, dist, loads, steps, workers, 0.0, seed)
}

fn correlated(
    model: LoadModel,
    dist: &Dist,
    loads: &[f64],
    steps: u64,
    workers: u64,
    step_spread: f64,
    seed: u64,
) -> String {
    let mut csv = String::from("step,worker,time,load\n");
    for (j, &load) in loads.iter().enumerate() {
        for s in 0..steps {
            let step = j as u64 * steps + s;
            let mut rng = trial_rng(seed, step);
            // Box–Muller from two uniforms: the step's shared factor.
            let z =
                (-2.0 * (1.0 - rng.random::<f64>()).ln()).sqrt() * (std::f64::consts::TAU * rng.random::<f64>()).cos();
            let factor = (step_spread * z).exp();
            for w in 0..workers {
                let t = match model {
                    // The factor scales X, the part that straggles.
                    LoadModel::Affine { unit_time } => unit_time * load + factor * dist_sample(dist, &mut rng),
                    _ => factor * model.sample(load, dist, &mut rng),
                };
                writeln!(csv, "{step},{w},{t:.6},{load}").unwrap();
            }
        }
    }
    csv
}

fn dist_sample(dist: &Dist, rng: &mut rand_xoshiro::Xoshiro256PlusPlus) -> f64 {
    LoadModel::Fixed.sample(1.0, dist, rng)
}

fn fit(csv: &str) -> LoadFitReport {
    fit_loads(&LoadTrace::parse("synthetic.csv", csv).unwrap(), 0).unwrap()
}

fn model_row<'a>(report: &'a LoadFitReport, name: &str) -> &'a gcsim::fit::load::ModelFit {
    report.models.iter().find(|m| m.model.name() == name).unwrap()
}

/// Within this many standard errors: a correct estimate misses with
/// probability 6·10⁻⁵.
const Z: f64 = 4.0;

/// Traces of 3 loads × 150 steps × 8 workers (3600 times) from each model
/// with a log-normal X: the true model ranks first and fits; every model
/// that is not the truth is rejected, except affine for fixed data (affine
/// contains fixed), which then ranks below fixed. In particular data from
/// scaled do not pick additive (their variances grow as ℓ² and ℓ). The
/// variance-growth exponent is within 4 standard errors of the model's.
#[test]
fn picks_the_model_the_data_come_from() {
    let dist: Dist = "lognormal:mu=0,sigma=0.5".parse().unwrap();
    let cases = [
        (LoadModel::Fixed, 0.0),
        (LoadModel::Scaled, 2.0),
        (LoadModel::Additive, 1.0),
        (LoadModel::Affine { unit_time: 0.4 }, 0.0),
    ];
    for (i, (truth, exponent)) in cases.into_iter().enumerate() {
        let report = fit(&synthetic(truth, &dist, &[1.0, 2.0, 4.0], 150, 8, 10 + i as u64));
        let best = &report.models[0];
        assert_eq!(best.model.name(), truth.name(), "{truth}: {report:#?}");
        assert!(best.fits && best.p >= 0.01, "{truth}: {best:?}");
        for m in &report.models[1..] {
            let nested = truth == LoadModel::Fixed && m.model.name() == "affine";
            assert!(m.fits == nested, "{truth}: {} fits = {}: {m:?}", m.model.name(), m.fits);
        }
        let b = report.variance_growth;
        assert!(
            (b - exponent).abs() < Z * report.variance_growth_std_err,
            "{truth}: b = {b} ± {}",
            report.variance_growth_std_err
        );
        assert!(
            report.best.starts_with(&format!("--load-model {}", truth.name())),
            "{}",
            report.best
        );
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }
}

/// Affine's unit time: the Anderson–Darling minimiser recovers c within 4
/// bootstrap standard errors, for a light-tailed X and for one with rare
/// stragglers 20 times slower (which move a mean-based estimate); the best
/// line carries it, and the base law is X's.
#[test]
fn recovers_the_unit_time() {
    for (i, (law, c)) in [
        ("shifted-exp:shift=0.5,rate=2", 0.145),
        ("lognormal:mu=0,sigma=0.3,p_slow=0.02,slowdown=20", 0.8),
    ]
    .into_iter()
    .enumerate()
    {
        let dist: Dist = law.parse().unwrap();
        let report = fit(&synthetic(
            LoadModel::Affine { unit_time: c },
            &dist,
            &[1.0, 2.0, 4.0],
            150,
            8,
            30 + i as u64,
        ));
        let affine = model_row(&report, "affine");
        let (got, se) = (affine.unit_time.unwrap(), affine.unit_time_std_err.unwrap());
        assert!(
            se > 0.0 && (got - c).abs() < Z * se,
            "{law}: c = {got} ± {se}, true {c}"
        );
        assert!(affine.fits, "{law}: {affine:?}");
        assert_eq!(report.models[0].model.name(), "affine", "{law}: {report:#?}");
        assert!(
            report.best.contains(&format!("--unit-time {got} --dist ")),
            "{}",
            report.best
        );
    }
    // The light-tailed base law is found again: shift 0.5 within 1% (the
    // fitted c moves it by about se × load).
    let dist: Dist = "shifted-exp:shift=0.5,rate=2".parse().unwrap();
    let report = fit(&synthetic(
        LoadModel::Affine { unit_time: 0.145 },
        &dist,
        &[1.0, 2.0, 4.0],
        150,
        8,
        30,
    ));
    let base: Dist = model_row(&report, "affine").dist.as_ref().unwrap().parse().unwrap();
    assert!((base.mean() - dist.mean()).abs() < 0.02 * dist.mean(), "{base}");
}

/// Additive at loads that are not whole: the variance grows as
/// (⌊ℓ⌋ + frac(ℓ)²)·σ², as the simulator draws it, and the model fits.
#[test]
fn additive_at_fractional_loads() {
    let dist: Dist = "exp:rate=1".parse().unwrap();
    let report = fit(&synthetic(LoadModel::Additive, &dist, &[0.5, 1.5, 3.0], 150, 8, 40));
    assert_eq!(report.models[0].model.name(), "additive", "{report:#?}");
    assert!(report.models[0].fits);
    // No load 1: the base law is the log-normal with X's fitted mean and variance.
    assert!(report.models[0].dist.as_ref().unwrap().starts_with("lognormal:"));
    assert!(
        report.warnings.iter().any(|w| w.contains("no times at load 1")),
        "{:?}",
        report.warnings
    );
}

/// The workers of a step share a factor e^(0.8 Z) on X: times within a
/// step are strongly correlated (X's log has variance 0.64 + 0.25, 0.64 of
/// it shared). Treating steps as the units keeps the true model fitting in
/// each of 3 traces; treating the times as independent rejects it in all 3
/// (p = 0.002, 0.001, 0.0004: both tests then count 8 times as many
/// independent units as there are).
#[test]
fn correlated_steps_keep_the_true_model() {
    let dist: Dist = "lognormal:mu=0,sigma=0.5".parse().unwrap();
    for seed in 50..53 {
        let report = fit(&correlated(
            LoadModel::Scaled,
            &dist,
            &[1.0, 2.0, 4.0],
            150,
            8,
            0.8,
            seed,
        ));
        let scaled = model_row(&report, "scaled");
        assert!(scaled.fits, "seed {seed}: {scaled:?}");
        assert_eq!(report.models[0].model.name(), "scaled", "seed {seed}");
        assert_eq!(report.units, "step");
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The example trace: affine, c = 0.145 s per unit of load, X log-normal
/// with median 1 s (σ = 0.3), at loads 1, 2 and 4, 60 steps × 8 workers each.
fn example_trace() -> String {
    let dist: Dist = "lognormal:mu=0,sigma=0.3".parse().unwrap();
    synthetic(
        LoadModel::Affine { unit_time: 0.145 },
        &dist,
        &[1.0, 2.0, 4.0],
        60,
        8,
        2024,
    )
}

/// `data/trace-load.csv` is [`example_trace`]; `GCSIM_BLESS=1` rewrites it.
#[test]
fn the_example_trace_is_reproducible() {
    let path = root().join("data/trace-load.csv");
    let text = example_trace();
    if std::env::var_os("GCSIM_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == text,
        "data/trace-load.csv differs from example_trace(); GCSIM_BLESS=1 rewrites it"
    );
}

/// The best: line of a table.
fn best_flags(stdout: &str) -> Vec<String> {
    let last = stdout.lines().last().unwrap();
    let flags = last
        .strip_prefix("best: ")
        .unwrap_or_else(|| panic!("last line {last:?}"));
    flags.split(' ').map(String::from).collect()
}

/// The example end to end: table, CSV and JSON agree on the best model, and
/// its flags run a simulation.
#[test]
fn cli_fits_the_example_and_its_flags_run() {
    let path = root().join("data/trace-load.csv");
    let table = gcsim()
        .arg("fit")
        .arg(&path)
        .args(["--format", "table"])
        .output()
        .unwrap();
    assert!(table.status.success(), "{}", String::from_utf8_lossy(&table.stderr));
    let stdout = String::from_utf8(table.stdout).unwrap();
    assert!(stdout.contains("1440 times at 3 loads (1, 2, 4)"), "{stdout}");
    assert!(stdout.contains("variance growth"), "{stdout}");
    let flags = best_flags(&stdout);
    assert_eq!(flags[..3], ["--load-model", "affine", "--unit-time"], "{flags:?}");
    let c: f64 = flags[3].parse().unwrap();
    assert!((c - 0.145).abs() < 0.02, "{c}");
    gcsim()
        .args([
            "run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "2000", "--format", "csv",
        ])
        .args(&flags)
        .assert()
        .success();

    let csv = gcsim()
        .arg("fit")
        .arg(&path)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(csv.status.success());
    let text = String::from_utf8(csv.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "rank,model,parameters,unit_time,unit_time_std_err,moments_chi2,moments_df,moments_p,moments_unit_time,\
         ad,ad_p,p,fits,dist,dist_ks_distance,flags"
    );
    assert_eq!(lines.count(), 4);
    let stderr = String::from_utf8(csv.stderr).unwrap();
    assert!(stderr.lines().any(|l| l == stdout.lines().last().unwrap()), "{stderr}");

    let json = gcsim()
        .arg("fit")
        .arg(&path)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        format!("best: {}", v["best"].as_str().unwrap()),
        stdout.lines().last().unwrap()
    );
    assert_eq!(v["loads"].as_array().unwrap().len(), 3);
    assert_eq!(v["models"][0]["model"], "affine");
    assert_eq!(v["units"], "step");
    assert_eq!(v["permutations"], 499);

    // --out: the file in its format, the best: line on stdout when piped.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("models.json");
    let run = gcsim().arg("fit").arg(&path).arg("--out").arg(&out).output().unwrap();
    assert!(run.status.success());
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written, v);
    assert_eq!(
        String::from_utf8(run.stdout).unwrap().trim(),
        stdout.lines().last().unwrap()
    );
    assert!(
        String::from_utf8(run.stderr)
            .unwrap()
            .contains("wrote 4 load models to")
    );
}

#[test]
fn bad_load_columns_exit_2_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let head = "step,worker,time,load\n";
    let cases = [
        (
            write("word.csv", &format!("{head}1,0,0.5,1\n1,1,0.5,big\n")),
            "word.csv:3: load `big` is not a number",
        ),
        (
            write("zero.csv", &format!("{head}1,0,0.5,0\n")),
            "zero.csv:2: load `0` is out of range; accepted: a finite number > 0",
        ),
        (
            write("negative.csv", &format!("{head}1,0,0.5,-1\n")),
            "negative.csv:2: load `-1` is out of range",
        ),
        (
            write("empty-cell.csv", &format!("{head}1,0,0.5,\n")),
            "empty-cell.csv:2: load `` is not a number",
        ),
        (
            write("one.csv", &format!("{head}1,0,0.5,2\n1,1,0.6,2\n2,0,0.7,2\n")),
            "one.csv: every row has load 2; fitting the load model needs times at 2 or more loads",
        ),
        (
            write(
                "few.csv",
                &format!("{head}1,0,0.5,1\n1,1,0.6,1\n1,2,0.7,1\n1,0,0.5,2\n"),
            ),
            "few.csv: load 2: 1 times; every load needs at least 3",
        ),
    ];
    for (path, expected) in cases {
        let out = gcsim().arg("fit").arg(&path).output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    }
}

/// Few times per load and few steps are warned about, on stderr and in the table.
#[test]
fn warns_of_few_times_and_steps() {
    let dist: Dist = "exp:rate=1".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.csv");
    std::fs::write(&path, synthetic(LoadModel::Fixed, &dist, &[1.0, 2.0], 5, 4, 3)).unwrap();
    gcsim()
        .arg("fit")
        .arg(&path)
        .args(["--format", "table"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "# warning: load 1 has 20 times, fewer than 30",
        ))
        .stdout(predicate::str::contains(
            "fewer than 10: too few to allow for correlation within a step",
        ))
        .stderr(predicate::str::contains(
            "warning: fewer than 2 loads have 30 or more times",
        ));
}

#[test]
fn help_states_the_method() {
    gcsim()
        .args(["fit", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Calibrating the load model"))
        .stdout(predicate::str::contains("Scholz"))
        .stdout(predicate::str::contains("gcsim fit data/trace-load.csv"));
}

/// The time column may name its unit, as a plain trace's does: the same
/// times written in milliseconds (`time_ms`) and microseconds (`time_us`)
/// are read as the seconds of `time`, bit for bit; a trace without a time
/// column is refused with the names accepted.
#[test]
fn time_column_names_its_unit() {
    let mut rng = trial_rng(5, 0);
    let (mut s, mut ms, mut us) = (
        String::from("step,worker,time,load\n"),
        String::from("step,worker,time_ms,load\n"),
        String::from("step,worker,time_us,load\n"),
    );
    for load in [1, 2] {
        for step in 0..12 {
            for w in 0..4 {
                let k: u64 = rng.random_range(100_000..3_000_000); // microseconds
                writeln!(s, "{step},{w},{}.{:06},{load}", k / 1_000_000, k % 1_000_000).unwrap();
                writeln!(ms, "{step},{w},{}.{:03},{load}", k / 1000, k % 1000).unwrap();
                writeln!(us, "{step},{w},{k},{load}").unwrap();
            }
        }
    }
    let times = |csv: &str| -> Vec<Vec<f64>> {
        let trace = LoadTrace::parse("t.csv", csv).unwrap();
        trace.loads().iter().map(|l| l.times.clone()).collect()
    };
    assert_eq!(times(&ms), times(&s));
    assert_eq!(times(&us), times(&s));
    let err = LoadTrace::parse("t.csv", "step,worker,seconds,load\n0,0,1,1\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("`time_ms` (milliseconds)"), "{err}");
}
