//! `gcsim plan --parallel`: the schemes across a layout's replicas, each
//! row the run of its configuration on the same draws, ranked by the
//! objective; bucket counts compared; GPU-hours of every rank; a scenario's
//! `[[plan]]` with a layout; what is refused.

use std::collections::HashMap;

use assert_cmd::Command;

use super::errors::assert_usage_error;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// 6 replicas of 3 stages of 2 tensor ranks (36 ranks), 2 microbatches.
const JOB: [&str; 12] = [
    "--parallel",
    "dp=6,pp=3,tp=2",
    "--microbatches",
    "2",
    "--dist",
    "exp:rate=1,p_slow=0.1,slowdown=4",
    "--trials",
    "3000",
    "--seed",
    "7",
    "--p2p-time",
    "0.05",
];

type Row = HashMap<String, String>;

/// The rows of a CSV written to stdout by `gcsim COMMAND JOB ARGS --format csv`.
fn csv(command: &str, args: &[&str]) -> Vec<Row> {
    let out = gcsim()
        .arg(command)
        .args(JOB)
        .args(args)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| header.iter().cloned().zip(l.split(',').map(String::from)).collect())
        .collect()
}

fn num(row: &Row, column: &str) -> f64 {
    row[column].parse().unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

/// Every row is `gcsim run` of its configuration on the same seed, to the
/// bit (the draws do not depend on which schemes a study holds); a load
/// that makes a fractional number of microbatches is skipped (mds k=5:
/// 1.2 × 2), a whole one kept (mds k=4: 1.5 × 2 = 3); rows are ranked by
/// their mean.
#[test]
fn each_row_is_the_run_of_its_configuration() {
    let rows = csv("plan", &["--scheme", "frc,crc,mds", "--linear", "--max-load", "3"]);
    let configs: Vec<(String, usize)> = rows
        .iter()
        .map(|r| (r["scheme"].clone(), num(r, "s") as usize))
        .collect();
    assert!(configs.contains(&("mds".into(), 2)), "{configs:?}");
    assert!(!configs.contains(&("mds".into(), 1)), "{configs:?}");
    assert!(
        configs.contains(&("crc".into(), 2)) && !configs.contains(&("crc".into(), 3)),
        "{configs:?}"
    );
    let means: Vec<f64> = rows.iter().map(|r| num(r, "mean")).collect();
    assert!(means.windows(2).all(|w| w[0] <= w[1]), "ranked by mean: {means:?}");
    for r in &rows {
        assert_eq!(r["n"], "6", "n counts the replicas");
        let run = &csv("run", &["--scheme", &r["scheme"], "--s", &r["s"]])[0];
        for column in ["mean", "p99", "speedup", "load"] {
            assert_eq!(r[column], run[column], "{column} of {} s={}", r["scheme"], r["s"]);
        }
    }
}

/// Ranked by p99, and in GPU-hours: each row's GPU-hours are its run's
/// hours times all 36 ranks, and the cost objective ranks by them.
#[test]
fn p99_and_cost_count_every_rank() {
    let rows = csv("plan", &["--scheme", "ignore,frc", "--objective", "p99"]);
    for r in &rows {
        assert_eq!(r["objective"], r["p99"]);
    }
    let p99: Vec<f64> = rows.iter().map(|r| num(r, "p99")).collect();
    assert!(p99.windows(2).all(|w| w[0] <= w[1]), "{p99:?}");
    let cost = [
        "--scheme",
        "frc,crc",
        "--objective",
        "cost",
        "--time-unit",
        "s",
        "--iterations-per-run",
        "1000",
    ];
    let rows = csv("plan", &cost);
    assert!(rows.len() >= 3);
    for r in &rows {
        let (hours, gpu_hours) = (num(r, "run_hours"), num(r, "gpu_hours"));
        assert!((gpu_hours / hours - 36.0).abs() < 1e-9, "{r:?}");
        assert!((num(r, "objective") / gpu_hours - 1.0).abs() < 1e-9, "{r:?}");
        assert!((hours - num(r, "mean") * 1000.0 / 3600.0).abs() < 1e-9 * hours, "{r:?}");
    }
}

/// `--buckets 1,4` compares both bucket counts for every configuration;
/// each row is the run with its own `--buckets`.
#[test]
fn bucket_counts_are_compared() {
    let ring = [
        "--aggregation",
        "ring",
        "--bandwidth",
        "1GB/s",
        "--gradient-size",
        "2GB",
        "--time-unit",
        "s",
    ];
    let rows = csv(
        "plan",
        &[&ring[..], &["--scheme", "uncoded,frc", "--buckets", "1,4"]].concat(),
    );
    let mut seen: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r["scheme"].clone(), r["s"].clone(), r["buckets"].clone()))
        .collect();
    seen.sort();
    let expected: Vec<(String, String, String)> = [("frc", "1"), ("frc", "2"), ("uncoded", "0")]
        .iter()
        .flat_map(|(k, s)| ["1", "4"].map(|b| (k.to_string(), s.to_string(), b.to_string())))
        .collect();
    assert_eq!(seen, expected);
    for r in &rows {
        assert_eq!(r["aggregation"], "ring");
        let run = &csv(
            "run",
            &[
                &ring[..],
                &["--scheme", &r["scheme"], "--s", &r["s"], "--buckets", &r["buckets"]],
            ]
            .concat(),
        )[0];
        assert_eq!(
            r["mean"], run["mean"],
            "{} s={} buckets={}",
            r["scheme"], r["s"], r["buckets"]
        );
    }
    // Four buckets overlap the last backward: never slower on the same draws.
    let mean = |scheme: &str, buckets: &str| {
        let r = rows
            .iter()
            .find(|r| r["scheme"] == scheme && r["buckets"] == buckets)
            .unwrap();
        num(r, "mean")
    };
    assert!(mean("uncoded", "4") < mean("uncoded", "1"));
}

/// A `[[plan]]` in a file with a layout writes what `gcsim plan --parallel`
/// writes.
#[test]
fn a_scenario_plan_with_a_layout_is_the_command_s() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.toml");
    let text = "name = \"job\"\ndist = \"exp:rate=1,p_slow=0.1,slowdown=4\"\ntrials = 3000\nseed = 7\nparallel = \"dp=6,pp=3,tp=2\"\nmicrobatches = 2\np2p_time = 0.05\n[[plan]]\nlabel = \"pick\"\nschemes = [\"frc\", \"crc\"]\n";
    std::fs::write(&file, text).unwrap();
    let out = gcsim()
        .arg("scenario")
        .arg(&file)
        .arg("--out-dir")
        .arg(dir.path())
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(dir.path().join("job/pick.csv")).unwrap();
    let command = gcsim()
        .arg("plan")
        .args(JOB)
        .args(["--scheme", "frc,crc", "--format", "csv"])
        .output()
        .unwrap();
    assert_eq!(written, String::from_utf8(command.stdout).unwrap());
}

#[test]
fn what_a_layout_plan_refuses() {
    let job = "--parallel dp=4,pp=2 --dist exp:rate=1";
    for (args, says) in [
        (format!("plan {job} --n 16"), "--n 16 but --parallel dp=4,pp=2,tp=1 has 8 ranks"),
        (format!("plan {job} --n 8,16"), "--n 8,16: a --parallel plan searches one layout"),
        (format!("plan {job} --ref-n 4"), "--ref-n rescales a flat cluster's share"),
        (format!("plan {job} --load-model scaled"), "--load-model"),
        (format!("plan {job} --scheme speculative"), "speculative does not code across"),
        (format!("plan {job} --scheme k-async"), "k-async"),
        (
            "run --n 8 --scheme uncoded --aggregation ring --bandwidth 1GB/s --gradient-size 1GB --time-unit s --buckets 1,4"
                .to_string(),
            "--buckets 1,4 takes one K here; plan compares several",
        ),
    ] {
        let args: Vec<&str> = args.split(' ').collect();
        assert_usage_error(&args, None, &[says]);
    }
}
