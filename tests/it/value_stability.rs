//! Value stability: golden values at fixed seeds, as rand_distr's
//! `tests/value_stability.rs` keeps them, so that any change to what a
//! sampler draws or what a command prints is flagged, and made deliberately.
//!
//! Two kinds of pin:
//! - the first four draws of every worker law (`gcsim::dist::Dist` as a
//!   `rand` `Distribution<f64>`, from `Xoshiro256PlusPlus::seed_from_u64(7)`),
//!   each also as a straggler mixture, against literal `f64` values, bit for
//!   bit;
//! - the output of the binary on small, fast runs (a few thousand trials,
//!   one thread, seed 7): every sampling path of the engine and one output of
//!   each command, compared byte for byte with the files in `tests/golden/`.
//!
//! A change that alters these values on purpose (a new sampler, a new output
//! column) updates them deliberately: for the literals, edit them from the
//! failure message; for the golden files, rerun with `GCSIM_BLESS=1`, which
//! rewrites every golden file from the current binary instead of comparing:
//!
//! ```text
//! GCSIM_BLESS=1 cargo test --release --test it value_stability
//! git diff tests/golden/
//! ```
//!
//! and review the diff before committing it.

use std::path::{Path, PathBuf};
use std::process::Command;

use gcsim::dist::Dist;
use rand::SeedableRng;
use rand_distr::Distribution;
use rand_xoshiro::Xoshiro256PlusPlus;

// ---------------------------------------------------------------------------
// Worker laws: the first draws, bit for bit.

/// The first four draws of `dist` from the pinned stream.
fn first_draws(dist: &Dist) -> [f64; 4] {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    [(); 4].map(|_| dist.sample(&mut rng))
}

/// `dist` alone and as a mixture with half the workers four times slower.
fn check_draws(dist: Dist, plain: [f64; 4], mixture: [f64; 4]) {
    assert_eq!(first_draws(&dist), plain, "{dist}");
    let slow = dist.with_stragglers(0.5, 4.0).unwrap();
    assert_eq!(first_draws(&slow), mixture, "{slow}");
}

#[test]
fn exp_draws() {
    check_draws(
        Dist::exp(1.5).unwrap(),
        [
            0.10167494798366727,
            0.48230462090201476,
            0.8861747135929069,
            0.7910519326010492,
        ],
        [
            0.4066997919346691,
            3.5446988543716276,
            4.622782066469039,
            3.2244751547289585,
        ],
    );
}

#[test]
fn shifted_exp_draws() {
    check_draws(
        Dist::shifted_exp(1.0, 2.0).unwrap(),
        [
            1.0762562109877505,
            1.361728465676511,
            1.66463103519468,
            1.593288949450787,
        ],
        [
            4.305024843951002,
            6.65852414077872,
            7.467086549851779,
            6.418356366046719,
        ],
    );
}

#[test]
fn pareto_draws() {
    check_draws(
        Dist::pareto(1.0, 3.0).unwrap(),
        [
            2.623816737576608,
            1.7977378997106028,
            1.1169764220445118,
            1.3277600313689522,
        ],
        [
            10.495266950306432,
            4.467905688178047,
            4.049662081872087,
            4.454842766398242,
        ],
    );
}

#[test]
fn lognormal_draws() {
    check_draws(
        Dist::lognormal(0.0, 0.5).unwrap(),
        [
            0.40118297693948957,
            0.4248257626020265,
            1.4261777494053975,
            0.8605169094946438,
        ],
        [
            1.6047319077579583,
            5.70471099762159,
            8.414060336456249,
            5.641040060978147,
        ],
    );
}

#[test]
fn weibull_draws() {
    check_draws(
        Dist::weibull(1.0, 1.5).unwrap(),
        [
            0.2854544462386262,
            0.8058888021526055,
            1.208946479974497,
            1.1208070050521013,
        ],
        [
            1.1418177849545048,
            4.835785919897988,
            5.772311812041942,
            4.539975680411736,
        ],
    );
}

// ---------------------------------------------------------------------------
// Golden files: the binary's output, byte for byte.

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary from the repository root (so `data/...` paths resolve)
/// and returns its stdout; the run must succeed.
fn gcsim(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_gcsim"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gcsim {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Compares `actual` with `tests/golden/<name>`, or rewrites the file under
/// `GCSIM_BLESS=1`. On a difference, names the file and the first differing
/// line.
fn check_golden(name: &str, actual: &[u8]) {
    let path: PathBuf = root().join("tests/golden").join(name);
    if std::env::var_os("GCSIM_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}; GCSIM_BLESS=1 creates it", path.display()));
    if expected == actual {
        return;
    }
    let (expected, actual) = (String::from_utf8_lossy(&expected), String::from_utf8_lossy(actual));
    let (mut want, mut got) = (expected.split_inclusive('\n'), actual.split_inclusive('\n'));
    let mut line = 1;
    loop {
        match (want.next(), got.next()) {
            (Some(w), Some(g)) if w == g => line += 1,
            (w, g) => panic!(
                "tests/golden/{name} differs at line {line}:\n  golden:  {:?}\n  current: {:?}\n\
                 If the change is deliberate, rewrite the golden files with\n  \
                 GCSIM_BLESS=1 cargo test --release --test it value_stability\nand review `git diff tests/golden/`.",
                w.unwrap_or("<end of file>"),
                g.unwrap_or("<end of file>"),
            ),
        }
    }
}

/// Small fast runs: a few thousand trials on one thread at seed 7.
const FAST: [&str; 8] = ["--trials", "2000", "--seed", "7", "--threads", "1", "--format", "csv"];

/// `sweep` on 12 workers, s = 0..3, uncoded, frc and crc, with `extra`
/// choosing the workers and the model; pinned in `name`.
fn sweep_golden(name: &str, extra: &[&str]) {
    let mut args = vec!["sweep", "--s", "0..3", "--scheme", "uncoded,frc,crc"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&FAST);
    check_golden(name, &gcsim(&args));
}

// The order-statistic path: laws that are a transform of one standard
// exponential, and the bootstrap from a trace.

#[test]
fn order_statistics_exp() {
    sweep_golden("sweep-exp.csv", &["--n", "12", "--dist", "exp:rate=1"]);
}

/// Above 32 workers the top block is drawn in every trial and the lower
/// order statistics on demand; s = 40 reaches below the block.
#[test]
fn order_statistics_exp_below_the_top_block() {
    let args = [
        "run",
        "--n",
        "64",
        "--scheme",
        "crc",
        "--s",
        "40",
        "--dist",
        "exp:rate=1",
    ];
    check_golden("run-exp-n64.csv", &gcsim(&[&args[..], &FAST].concat()));
}

#[test]
fn order_statistics_shifted_exp() {
    sweep_golden(
        "sweep-shifted-exp.csv",
        &["--n", "12", "--dist", "shifted-exp:shift=1,rate=2"],
    );
}

#[test]
fn order_statistics_pareto() {
    sweep_golden("sweep-pareto.csv", &["--n", "12", "--dist", "pareto:scale=1,shape=3"]);
}

#[test]
fn order_statistics_weibull() {
    sweep_golden(
        "sweep-weibull.csv",
        &["--n", "12", "--dist", "weibull:scale=1,shape=1.5"],
    );
}

#[test]
fn order_statistics_trace_bootstrap() {
    sweep_golden(
        "sweep-trace.csv",
        &["--n", "8", "--dist", "trace:path=data/trace-llm-8w.csv"],
    );
}

#[test]
fn order_statistics_lognormal() {
    sweep_golden(
        "sweep-lognormal.csv",
        &["--n", "12", "--dist", "lognormal:mu=0,sigma=0.5"],
    );
}

// The draw-and-sort path: one draw per worker.

#[test]
fn draws_straggler_mixture() {
    sweep_golden(
        "sweep-mixture.csv",
        &["--n", "12", "--dist", "exp:rate=1,p_slow=0.1,slowdown=5"],
    );
}

// Worker classes, in index order and placed at random in every trial.

#[test]
fn worker_classes_in_order() {
    sweep_golden(
        "sweep-classes.csv",
        &["--workers", "10:exp:rate=1", "--workers", "2:exp:rate=0.2"],
    );
}

// Classes read by k-of-n rules alone: each class's top block, extended
// downward where the merged top needs it.
#[test]
fn worker_classes_top_blocks() {
    let mut args = vec![
        "sweep",
        "--n",
        "40",
        "--s",
        "0..12",
        "--scheme",
        "crc",
        "--workers",
        "20:exp:rate=1",
        "--workers",
        "20:exp:rate=0.5",
    ];
    args.extend_from_slice(&FAST);
    check_golden("sweep-classes-top.csv", &gcsim(&args));
}

#[test]
fn worker_classes_shuffled() {
    sweep_golden(
        "sweep-classes-shuffled.csv",
        &[
            "--workers",
            "10:exp:rate=1",
            "--workers",
            "2:exp:rate=0.2",
            "--shuffle-placement",
        ],
    );
}

#[test]
fn trace_replay() {
    sweep_golden(
        "sweep-replay.csv",
        &["--n", "8", "--dist", "replay:path=data/trace-llm-8w.csv"],
    );
}

#[test]
fn additive_load_model() {
    sweep_golden(
        "sweep-additive.csv",
        &["--n", "12", "--dist", "exp:rate=1", "--load-model", "additive"],
    );
}

#[test]
fn random_communication_on_a_shared_link() {
    sweep_golden(
        "sweep-comm-shared.csv",
        &[
            "--n",
            "12",
            "--dist",
            "exp:rate=1",
            "--comm-dist",
            "exp:rate=2",
            "--link",
            "shared",
        ],
    );
}

/// Constant transfers and k-of-n rules: the sorted sample by spacings.
#[test]
fn constant_communication_on_both_links() {
    for (file, link) in [
        ("sweep-comm-constant-dedicated.csv", "dedicated"),
        ("sweep-comm-constant-shared.csv", "shared"),
    ] {
        let mut args = vec!["sweep", "--n", "12", "--s", "0..3", "--scheme", "uncoded,crc"];
        args.extend(["--dist", "pareto:scale=1,shape=2", "--comm-time", "0.3", "--link", link]);
        args.extend_from_slice(&FAST);
        check_golden(file, &gcsim(&args));
    }
}

/// The same above 32 workers, every rule in the top block: the top order
/// statistics, and below them the fastest and the ranges the shared link's
/// queue cannot skip, by bisection; and a shared link that is the
/// bottleneck: the top block by its ends, its middle drawn in the few
/// trials (about one in twenty, Pareto's tail) whose slowest finish
/// reaches the queue.
#[test]
fn constant_communication_by_bisection() {
    let weibull = "weibull:scale=1,shape=4";
    for (file, link, dist, timeout, tau) in [
        ("sweep-comm-bisection-dedicated.csv", "dedicated", weibull, "4", "0.02"),
        ("sweep-comm-bisection-shared.csv", "shared", weibull, "4", "0.02"),
        (
            "sweep-comm-bisection-bottleneck.csv",
            "shared",
            "pareto:scale=1,shape=3",
            "12",
            "0.35",
        ),
    ] {
        let mut args = vec![
            "sweep",
            "--n",
            "64",
            "--s",
            "0,1,5,20",
            "--scheme",
            "uncoded,crc,timeout",
        ];
        args.extend(["--timeout", timeout, "--dist", dist]);
        args.extend(["--comm-time", tau, "--link", link]);
        args.extend_from_slice(&FAST);
        check_golden(file, &gcsim(&args));
    }
}

#[test]
fn rank_decoder() {
    sweep_golden(
        "sweep-decoder-rank.csv",
        &["--n", "12", "--dist", "exp:rate=1", "--decoder", "rank"],
    );
}

// One output of each command.

#[test]
fn run_command() {
    let args = [
        "run",
        "--n",
        "12",
        "--scheme",
        "frc",
        "--s",
        "2",
        "--dist",
        "exp:rate=1",
    ];
    check_golden("run.csv", &gcsim(&[&args[..], &FAST].concat()));
}

#[test]
fn sweep_analytic() {
    let out = gcsim(&[
        "sweep",
        "--n",
        "100",
        "--s",
        "0..5",
        "--scheme",
        "frc,crc",
        "--analytic",
        "--format",
        "csv",
    ]);
    check_golden("sweep-analytic.csv", &out);
}

/// `verify` prints a table (it has no CSV), with every check and its verdict.
#[test]
fn verify_table() {
    check_golden("verify.txt", &gcsim(&["verify", "--trials", "5000", "--threads", "1"]));
}

#[test]
fn plan_exact() {
    let out = gcsim(&[
        "plan",
        "--n",
        "12",
        "--dist",
        "exp:rate=1",
        "--load-model",
        "scaled",
        "--linear",
        "--max-load",
        "inf",
        "--format",
        "csv",
    ]);
    check_golden("plan-exact.csv", &out);
}

#[test]
fn plan_simulated() {
    let args = [
        "plan",
        "--n",
        "12",
        "--dist",
        "lognormal:mu=0,sigma=0.5",
        "--load-model",
        "fixed",
        "--linear",
        "--max-load",
        "inf",
        "--simulate",
        "--top",
        "6",
    ];
    check_golden("plan-simulate.csv", &gcsim(&[&args[..], &FAST].concat()));
}

#[test]
fn codes_command() {
    let out = gcsim(&["codes", "--scheme", "frc", "--n", "12", "--s", "2", "--format", "csv"]);
    check_golden("codes-frc.csv", &out);
}

#[test]
fn fit_command() {
    check_golden("fit.csv", &gcsim(&["fit", "data/trace-llm-8w.csv", "--format", "csv"]));
}

/// The load fit's permutations and bootstrap draw from fixed streams: the
/// same rows on any number of threads.
#[test]
fn fit_load_command() {
    let rows = gcsim(&["fit", "data/trace-load.csv", "--format", "csv"]);
    check_golden("fit-load.csv", &rows);
    let one_thread = Command::new(env!("CARGO_BIN_EXE_gcsim"))
        .args(["fit", "data/trace-load.csv", "--format", "csv"])
        .env("RAYON_NUM_THREADS", "1")
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(one_thread.stdout, rows);
}

/// Two shards of 1.1 million trials (blocks are 2^20 trials, so each shard
/// holds one), merged.
#[test]
fn merge_of_two_shards() {
    let dir = tempfile::tempdir().unwrap();
    let shard = |i: &str, file: &str| {
        let out = dir.path().join(file);
        let out = out.to_str().unwrap();
        let args = ["run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "1100000"];
        gcsim(
            &[
                &args[..],
                &["--seed", "7", "--threads", "1", "--shard", i, "--out", out],
            ]
            .concat(),
        );
        out.to_owned()
    };
    let (a, b) = (shard("1/2", "a.json"), shard("2/2", "b.json"));
    check_golden("merge.csv", &gcsim(&["merge", &a, &b, "--format", "csv"]));
}

/// `scenario` on `tests/golden/scenario.toml`: the CSV it writes.
#[test]
fn scenario_command() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    gcsim(&[
        "scenario",
        "tests/golden/scenario.toml",
        "--out-dir",
        out_dir,
        "--threads",
        "1",
    ]);
    let csv = std::fs::read(dir.path().join("golden/schemes.csv")).unwrap();
    check_golden("scenario.csv", &csv);
}
