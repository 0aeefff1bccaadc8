//! Intervals that include the uncertainty of a trace's recorded steps in
//! `run`, `sweep`, `merge` and scenarios (`--trace-bootstrap`, key
//! `trace_bootstrap`): coverage of a known truth, the shard and merge
//! identity, and the flag's errors.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use serde_json::Value;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// The JSON output of a successful run of `args`.
fn json(args: &[&str]) -> Value {
    let out = gcsim()
        .args(args)
        .args(["--format", "json", "-j", "2", "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// A scratch directory of this test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gcsim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn trace(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
        .display()
        .to_string()
}

/// Writes a trace of `steps` steps of 8 i.i.d. exponential workers.
fn synthetic(path: &Path, steps: usize, rng: &mut impl rand::Rng) {
    let exp = Exp::new(1.0).unwrap();
    let mut text = String::from("step,worker,time\n");
    for step in 0..steps {
        for w in 0..8 {
            text += &format!("{step},{w},{}\n", exp.sample(rng));
        }
    }
    std::fs::write(path, text).unwrap();
}

/// `run` on a replayed trace of 40 steps of 8 i.i.d. exponential workers:
/// the truth, the mean of the slowest of 8, is H₈. With the bootstrap over
/// steps (the default) the 95% interval of the mean covers it in at least
/// 85% of 80 traces (the nominal 95% less 4 standard errors of a rate over
/// 80), and std_err is its half-width over 1.96; with Monte Carlo error
/// alone (`--trace-bootstrap 0`) it covers it in fewer than half.
#[test]
fn run_intervals_cover_the_truth_of_a_trace() {
    let truth: f64 = (1..=8).map(|k| 1.0 / k as f64).sum();
    let dir = scratch("trace-coverage");
    let path = dir.join("t.csv");
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
    let (reps, mut covered, mut covered_mc) = (80, 0, 0);
    for r in 0..reps {
        synthetic(&path, 40, &mut rng);
        let dist = format!("replay:path={}", path.display());
        let seed = r.to_string();
        let args = [
            "run", "--n", "8", "--scheme", "uncoded", "--dist", &dist, "--trials", "2000", "--seed", &seed,
        ];
        let out = json(&args);
        let row = &out["rows"][0];
        assert_eq!(out["config"]["trace_bootstrap"], 30, "the default is recorded");
        let (lo, hi) = (num(row, "ci95_low"), num(row, "ci95_high"));
        let se = num(row, "std_err");
        assert!(
            ((hi - lo) / 2.0 / se - 1.959964).abs() < 1e-3,
            "std_err {se} and [{lo}, {hi}]"
        );
        covered += usize::from(lo <= truth && truth <= hi);
        let mc = json(&[&args[..], &["--trace-bootstrap", "0"]].concat());
        let mc_row = &mc["rows"][0];
        assert_eq!(
            num(mc_row, "mean"),
            num(row, "mean"),
            "the estimate itself does not change"
        );
        assert!(mc["config"].get("trace_bootstrap").is_none(), "{}", mc["config"]);
        covered_mc += usize::from(num(mc_row, "ci95_low") <= truth && truth <= num(mc_row, "ci95_high"));
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(covered >= 68, "covered {covered} of {reps}");
    assert!(
        covered_mc < reps / 2,
        "Monte Carlo error alone covered {covered_mc} of {reps}"
    );
}

/// Where the recorded steps carry no uncertainty, the bootstrap adds none:
/// every step of this trace holds the same 8 times (rotated among the
/// workers), so every replicate of `trace:` has the same pooled law and
/// their spread is Monte Carlo noise alone, which is subtracted. With 400
/// replicates of 2000 trials each, std_err stays within 2× the Monte Carlo
/// one of 20 000 trials (expected ≈ 1; without the subtraction ≈ √11 ≈ 3.3,
/// since each replicate's Monte Carlo variance is 10× the run's).
#[test]
fn steps_without_spread_add_no_uncertainty() {
    let dir = scratch("trace-no-spread");
    let path = dir.join("t.csv");
    let times = [0.5, 0.7, 0.8, 1.0, 1.1, 1.3, 2.0, 3.5];
    let mut text = String::from("step,worker,time\n");
    for step in 0..120 {
        for w in 0..8 {
            text += &format!("{step},{w},{}\n", times[(w + step) % 8]);
        }
    }
    std::fs::write(&path, text).unwrap();
    let dist = format!("trace:path={}", path.display());
    let args = [
        "run", "--n", "8", "--scheme", "uncoded", "--dist", &dist, "--trials", "20000",
    ];
    let std_err = |b: &str| {
        num(
            &json(&[&args[..], &["--trace-bootstrap", b]].concat())["rows"][0],
            "std_err",
        )
    };
    let (with, without) = (std_err("400"), std_err("0"));
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        (1.0..2.0).contains(&(with / without)),
        "std_err {with} with the bootstrap, {without} without"
    );
}

/// A sharded sweep on a replayed trace, merged, is the single run byte for
/// byte: the merge runs the same bootstrap replicates and keeps the
/// warnings of the shards' configuration.
#[test]
fn merged_shards_of_a_trace_are_the_single_run() {
    let dir = scratch("trace-merge");
    let dist = format!("replay:path={}", trace("trace-llm-8w.csv"));
    let base = [
        "sweep", "--n", "8", "--scheme", "crc", "--s", "0..2", "--dist", &dist, "--trials", "2100000", "-q", "-j", "2",
    ];
    let single = dir.join("single.json");
    gcsim()
        .args(base)
        .args(["--out", single.to_str().unwrap()])
        .assert()
        .success();
    let mut parts = Vec::new();
    for i in 1..=2 {
        let part = dir.join(format!("p{i}.json"));
        let shard = format!("{i}/2");
        gcsim()
            .args(base)
            .args(["--shard", &shard, "--out", part.to_str().unwrap()])
            .assert()
            .success();
        parts.push(part);
    }
    let merged = dir.join("merged.json");
    gcsim()
        .arg("merge")
        .args(&parts)
        .args(["-q", "--out", merged.to_str().unwrap()])
        .assert()
        .success();
    let (a, b) = (std::fs::read(&single).unwrap(), std::fs::read(&merged).unwrap());
    std::fs::remove_dir_all(&dir).ok();
    assert!(a == b, "the merge differs from the single run");
    let v: Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(v["config"]["trace_bootstrap"], 30);
    let warnings = v["config"]["warnings"].to_string();
    assert!(warnings.contains("complete steps (fewer than 100)"), "{warnings}");
}

/// A scenario study on a trace widens its intervals by default, and not
/// with `trace_bootstrap = 0`; a bad value is an error naming the key.
#[test]
fn scenario_studies_take_trace_bootstrap() {
    let dir = scratch("trace-scenario");
    let file = dir.join("s.toml");
    let scenario = |extra: &str| {
        format!(
            "name = \"t\"\nn = 8\ndist = \"replay:path={}\"\ntrials = 4000\n{extra}\n[[study]]\nlabel = \"u\"\nschemes = [\"uncoded\"]\n",
            trace("trace-llm-8w.csv")
        )
    };
    let std_err = |extra: &str| {
        std::fs::write(&file, scenario(extra)).unwrap();
        let out = dir.join("out");
        gcsim()
            .args([
                "scenario",
                file.to_str().unwrap(),
                "--out-dir",
                out.to_str().unwrap(),
                "-q",
            ])
            .assert()
            .success();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(out.join("t").join("u.json")).unwrap()).unwrap();
        (num(&v["rows"][0], "std_err"), v["config"]["trace_bootstrap"].clone())
    };
    let (wide, b) = std_err("");
    assert_eq!(b, 30);
    let (narrow, b) = std_err("trace_bootstrap = 0");
    assert!(b.is_null(), "{b}");
    assert!(wide > 2.0 * narrow, "with the bootstrap {wide}, without {narrow}");
    std::fs::write(&file, scenario("trace_bootstrap = 1")).unwrap();
    let out = gcsim().args(["scenario", file.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(":5:") && err.contains("key `trace_bootstrap` 1 estimates no spread"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--trace-bootstrap` needs a trace and a simulation, and 1 replicate has no spread.
#[test]
fn trace_bootstrap_errors_name_the_flag() {
    let dist = format!("replay:path={}", trace("trace-llm-8w.csv"));
    for (args, expected) in [
        (
            vec!["run", "--n", "8", "--scheme", "uncoded", "--trace-bootstrap", "5"],
            "--trace-bootstrap resamples a trace's recorded steps: it needs --dist trace:path=FILE or replay:path=FILE",
        ),
        (
            vec![
                "sweep",
                "--n",
                "8",
                "--s",
                "0..1",
                "--dist",
                &dist,
                "--trace-bootstrap",
                "1",
            ],
            "--trace-bootstrap 1 estimates no spread",
        ),
        (
            vec![
                "sweep",
                "--n",
                "8",
                "--s",
                "0..1",
                "--dist",
                "trace:path=data/trace-llm-8w.csv",
                "--analytic",
                "--trace-bootstrap",
                "5",
            ],
            "--trace-bootstrap widens Monte Carlo intervals, and --analytic has none",
        ),
        (
            vec![
                "run",
                "--n",
                "8",
                "--scheme",
                "uncoded",
                "--dist",
                &dist,
                "--trace-bootstrap",
                "1000000000",
            ],
            "--trace-bootstrap 1000000000: the run and its 1000000000 replicates of 10000 trials take 80000000800000 worker draws, more than the limit",
        ),
    ] {
        let out = gcsim()
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
