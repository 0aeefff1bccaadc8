//! `--parallel` from the command line: the timeline of one iteration, the
//! figure's caption, the cost view's GPUs and the inputs refused.

use assert_cmd::Command;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gcsim-pipelines-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const JOB: [&str; 16] = [
    "--parallel",
    "dp=4,pp=3,tp=2",
    "--microbatches",
    "3",
    "--p2p-time",
    "0.1",
    "--optimizer-time",
    "0.25",
    "--dist",
    "exp:rate=1,p_slow=0.2,slowdown=4",
    "--aggregation",
    "ring",
    "--bandwidth",
    "1GB/s",
    "--gradient-size",
    "2GB",
];

/// A complete event of the trace: (name, category, replica, thread, start, end, args).
type Span = (String, String, u64, u64, f64, f64, serde_json::Value);

fn spans(trace: &serde_json::Value) -> Vec<Span> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap() / 1e6;
            (
                e["name"].as_str().unwrap().to_string(),
                e["cat"].as_str().unwrap().to_string(),
                e["pid"].as_u64().unwrap(),
                e["tid"].as_u64().unwrap(),
                ts,
                ts + e["dur"].as_f64().unwrap() / 1e6,
                e["args"].clone(),
            )
        })
        .collect()
}

/// The timeline of trial 0 is the iteration whose time a one-trial run
/// reports: it ends there, each rank runs one op at a time, each op takes
/// the slowest of its tensor ranks, forwards follow the previous stage's
/// by the p2p time, and the stages' sums follow the scheme's replicas.
#[test]
fn the_timeline_is_the_iteration_a_run_of_one_trial_reports() {
    let dir = scratch("timeline");
    let file = dir.join("it.json");
    for scheme in [&["--scheme", "uncoded"][..], &["--scheme", "ignore", "--s", "1"][..]] {
        let out = gcsim()
            .args(["run", "--trials", "1", "--time-unit", "s", "-q", "--format", "json"])
            .args(JOB)
            .args(scheme)
            .args(["--timeline", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let row: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mean = row["rows"][0]["mean"].as_f64().unwrap();
        let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let all = spans(&trace);
        // The optimizer step ends the iteration (a dropped replica may
        // still be computing).
        let end = all
            .iter()
            .filter(|s| s.1 == "optimizer")
            .map(|s| s.5)
            .fold(0.0, f64::max);
        assert!(
            (end - mean).abs() < 1e-9 * mean,
            "{scheme:?}: the iteration ends at {end}, the run reports {mean}"
        );
        let ops: Vec<&Span> = all.iter().filter(|s| s.1 == "forward" || s.1 == "backward").collect();
        // 4 replicas × 3 stages × 2 tensor ranks × 3 microbatches × 2 passes.
        assert_eq!(ops.len(), 144);
        for op in &ops {
            let own = op.6["own_compute"].as_f64().unwrap() / 1e6;
            assert!(own <= op.5 - op.4 + 1e-9, "{op:?}: a rank computes longer than its op");
        }
        // Each op lasts as long as the slowest tensor rank's own compute.
        for pair in ops.chunks(2) {
            let slowest = pair
                .iter()
                .map(|o| o.6["own_compute"].as_f64().unwrap() / 1e6)
                .fold(0.0, f64::max);
            assert!((pair[0].5 - pair[0].4 - slowest).abs() < 1e-9, "{pair:?}");
        }
        // One op at a time on every rank.
        let mut by_rank: std::collections::BTreeMap<(u64, u64), Vec<(f64, f64)>> = Default::default();
        for op in &ops {
            by_rank.entry((op.2, op.3)).or_default().push((op.4, op.5));
        }
        for spans in by_rank.values_mut() {
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            assert!(spans.windows(2).all(|w| w[1].0 >= w[0].1 - 1e-9), "{spans:?}");
        }
        // F(i, j) after F(i−1, j) + τ, on the same replica.
        let forward = |d: u64, i: u64, j: &str| {
            ops.iter()
                .find(|o| o.2 == d && o.3 == 2 * i && o.0 == format!("F{j}"))
                .unwrap()
        };
        for d in 0..4 {
            for i in 1..3 {
                for j in ["0", "1", "2"] {
                    assert!(forward(d, i, j).4 >= forward(d, i - 1, j).5 + 0.1 - 1e-9);
                }
            }
        }
        let sums = all.iter().filter(|s| s.1 == "collective").count();
        let participants = if scheme.len() == 2 { 4 } else { 3 };
        assert_eq!(sums, 3 * 2 * participants, "{scheme:?}");
        assert_eq!(all.iter().filter(|s| s.1 == "optimizer").count(), 24);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn figures_name_the_layout_and_costs_count_every_gpu() {
    let dir = scratch("figure");
    let svg = dir.join("f.svg");
    let out = gcsim()
        .args(["sweep", "--scheme", "ignore", "--s", "0..2", "--trials", "2000", "-q"])
        .args(JOB)
        .args(["--time-unit", "s", "--iterations-per-run", "3600", "--format", "json"])
        .args(["--plot", svg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("pipelines dp=4,pp=3,tp=2 microbatches=3 schedule=1f1b"),
        "caption"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for row in v["rows"].as_array().unwrap() {
        // 3600 iterations of `mean` seconds on 24 GPUs.
        let (mean, hours) = (row["mean"].as_f64().unwrap(), row["gpu_hours"].as_f64().unwrap());
        assert!((hours - 24.0 * mean).abs() < 1e-9 * hours, "{row}");
        assert_eq!(row["n"], 4, "a row's n counts replicas");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_does_not_go_with_a_layout_is_refused_in_one_line() {
    for (args, says) in [
        (
            "run --parallel dp=4,pp=2 --scheme k-async --k 2",
            "k-async does not code across the replicas of --parallel",
        ),
        (
            "run --parallel dp=4,pp=2 --scheme multi-message --s 1",
            "multi-message does not code across",
        ),
        (
            "run --parallel dp=4,pp=2 --scheme mds --k 3 --microbatches 2",
            "which is not a whole number",
        ),
        (
            "run --parallel dp=4,pp=2 --comm-time 1",
            "--comm-time acts on a master's messages",
        ),
        (
            "run --parallel dp=4,pp=2 --decoder rank --scheme crc --s 1",
            "--decoder acts on a master's messages",
        ),
        ("run --parallel dp=4,pp=2 --load-model additive", "drop --load-model"),
        (
            "run --parallel dp=4,pp=2 --n 7",
            "--n 7 but --parallel dp=4,pp=2,tp=1 has 8 ranks",
        ),
        (
            "run --parallel dp=4,pp=2 --stage-work 1,2,3",
            "--stage-work 3 values for 2 stages",
        ),
        (
            "run --parallel dp=4,pp=2 --backward-ratio 0",
            "--backward-ratio 0 is out of range",
        ),
        (
            "run --parallel dp=4,pp=2 --microbatches 0",
            "--microbatches 0 is out of range",
        ),
        (
            "run --parallel dp=4,pp=2 --analytic",
            "no exact law for uncoded on the pipelines of --parallel",
        ),
        (
            "run --microbatches 4 --n 4 --scheme uncoded",
            "--microbatches describes a pipeline job",
        ),
        (
            "sweep --parallel dp=4,pp=2 --n 8,16 --scheme ignore --s 0..1",
            "--parallel fixes n",
        ),
        (
            "run --n 4 --scheme uncoded --timeline t.json",
            "--timeline draws a pipeline job's ops",
        ),
        ("run --parallel dp=4,pp=2 --timeline t.csv", "give a .json file"),
        (
            "run --parallel dp=4,pp=2 --timeline t.json --shard 1/2 --out p.json",
            "drop --shard and --analytic",
        ),
        ("run --parallel dp=4,pp=2,tp=0", "tp=`0` is not a whole number >= 1"),
        ("run --parallel dp=4,cp=2", "unknown key `cp`; accepted: dp, pp, tp"),
        (
            "run --parallel dp=4 --schedule interleaved",
            "accepted: gpipe, 1f1b, interleaved:V",
        ),
        (
            "run --parallel dp=4,pp=2 --schedule interleaved:0",
            "interleaved:`0` is not a whole number of model chunks per stage from 1 to 64",
        ),
        (
            "run --parallel dp=4,pp=2 --schedule interleaved:x",
            "interleaved:`x` is not a whole number of model chunks per stage",
        ),
        (
            "run --parallel dp=4,pp=4 --microbatches 6 --schedule interleaved:2",
            "--microbatches 6 is not a multiple of pp=4; interleaved:2 runs the microbatches in groups of P: accepted: 4, 8, 12, ...",
        ),
        (
            "run --parallel dp=4,pp=1 --microbatches 4 --schedule interleaved:2",
            "--schedule interleaved:2 needs pp >= 2",
        ),
        (
            "run --parallel dp=3,pp=2 --microbatches 2 --schedule interleaved:2 --scheme mds --k 2",
            "--microbatches 2: mds",
        ),
    ] {
        let out = gcsim().args(args.split(' ')).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {err}");
        assert!(err.lines().filter(|l| l.contains(says)).count() == 1, "{args}: {err}");
        assert!(err.contains(says), "{args}: {err}");
        assert!(!err.contains("panicked"), "{args}: {err}");
    }
}

/// Under `--schedule interleaved:2` the timeline names each op's chunk
/// (`F1 chunk 1`, with a `chunk` argument), has V times the ops, each a
/// V-th of its pass, and sends activations from the last stage back to
/// the first between chunks after τ; without chunks no op names one.
#[test]
fn the_interleaved_timeline_names_each_op_s_chunk() {
    let dir = scratch("interleaved");
    let file = dir.join("it.json");
    let run = |schedule: &str| {
        let out = gcsim()
            .args(["run", "--trials", "1", "--time-unit", "s", "-q", "--format", "json"])
            .args([
                "--parallel",
                "dp=2,pp=2,tp=2",
                "--microbatches",
                "4",
                "--p2p-time",
                "0.1",
            ])
            .args(["--dist", "exp:rate=1", "--schedule", schedule])
            .args(["--timeline", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        spans(&trace)
            .into_iter()
            .filter(|s| s.1 == "forward" || s.1 == "backward")
            .collect::<Vec<Span>>()
    };
    let ops = run("interleaved:2");
    // 2 replicas × 2 stages × 2 tensor ranks × 4 microbatches × 2 chunks × 2 passes.
    assert_eq!(ops.len(), 128);
    for op in &ops {
        let (j, c) = (op.6["microbatch"].as_u64().unwrap(), op.6["chunk"].as_u64().unwrap());
        let pass = if op.1 == "forward" { 'F' } else { 'B' };
        assert_eq!(op.0, format!("{pass}{j} chunk {c}"), "{op:?}");
    }
    let find = |d: u64, i: u64, name: &str| ops.iter().find(|o| o.2 == d && o.3 == 2 * i && o.0 == name).unwrap();
    for d in 0..2 {
        for j in 0..4 {
            // Stage 1's chunk 0 feeds stage 0's chunk 1.
            let (from, to) = (
                find(d, 1, &format!("F{j} chunk 0")),
                find(d, 0, &format!("F{j} chunk 1")),
            );
            assert!(to.4 >= from.5 + 0.1 - 1e-9, "{from:?} then {to:?}");
            // A microbatch's backward on a stage is R = 2 times its forward, per chunk.
            for c in 0..2 {
                let f = find(d, 0, &format!("F{j} chunk {c}"));
                let b = find(d, 0, &format!("B{j} chunk {c}"));
                assert!(((b.5 - b.4) - 2.0 * (f.5 - f.4)).abs() < 1e-9, "{f:?} {b:?}");
            }
        }
    }
    assert!(
        run("1f1b")
            .iter()
            .all(|o| !o.0.contains("chunk") && o.6.get("chunk").is_none())
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `sweep --microbatches 1,2,4`: each M's rows are `gcsim run
/// --microbatches M`'s, to the bit, with an `microbatches` column; the
/// header names the list; `--plot` draws the metric against M.
#[test]
fn a_sweep_over_microbatches_is_the_runs_at_each_m() {
    let job = [
        "--parallel",
        "dp=4,pp=3",
        "--dist",
        "exp:rate=1,p_slow=0.1,slowdown=4",
        "--trials",
        "2000",
        "--seed",
        "5",
        "--p2p-time",
        "0.1",
    ];
    let dir = scratch("microbatches");
    let data = dir.join("m.csv");
    let out = gcsim()
        .arg("sweep")
        .args(job)
        .args(["--microbatches", "1,2,4", "--scheme", "uncoded,frc", "--s", "1"])
        .args(["--format", "csv", "--plot-metric", "mean", "--plot"])
        .arg(dir.join("m.svg"))
        .arg("--plot-data")
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 6, "{text}");
    for m in ["1", "2", "4"] {
        let at: Vec<&Vec<&str>> = rows.iter().filter(|r| r[col("microbatches")] == m).collect();
        assert_eq!(at.len(), 2, "M={m}: {text}");
        for r in at {
            let scheme = r[col("scheme")];
            let run = gcsim()
                .arg("run")
                .args(job)
                .args([
                    "--microbatches",
                    m,
                    "--scheme",
                    scheme,
                    "--s",
                    r[col("s")],
                    "--format",
                    "csv",
                ])
                .output()
                .unwrap();
            let run = String::from_utf8(run.stdout).unwrap();
            let run_header: Vec<&str> = run.lines().next().unwrap().split(',').collect();
            let values: Vec<&str> = run.lines().nth(1).unwrap().split(',').collect();
            for column in ["mean", "p99", "speedup", "bubble_fraction"] {
                let i = run_header.iter().position(|c| *c == column).unwrap();
                assert_eq!(r[col(column)], values[i], "{scheme} at M={m}: {column}");
            }
        }
    }
    // The figure's x values are the microbatch counts, one series per scheme.
    let plotted = std::fs::read_to_string(&data).unwrap();
    let mut points: Vec<(String, String)> = plotted
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|f| (f[1].to_string(), f[5].to_string()))
        .collect();
    points.sort();
    let expected: Vec<(String, String)> = ["frc", "uncoded"]
        .iter()
        .flat_map(|s| ["1.0", "2.0", "4.0"].map(|x| (s.to_string(), x.to_string())))
        .collect();
    assert_eq!(points, expected, "{plotted}");
    let meta = gcsim()
        .arg("sweep")
        .args(job)
        .args(["--microbatches", "1,2", "--scheme", "uncoded", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&meta.stdout).unwrap();
    assert_eq!(json["config"]["microbatches"], "1,2");
    for (args, says) in [
        (
            "run --parallel dp=4,pp=2 --microbatches 1,2",
            "--microbatches 1,2 takes one M in run",
        ),
        (
            "plan --parallel dp=4,pp=2 --microbatches 1,2",
            "--microbatches 1,2 takes one M in plan",
        ),
        (
            "sweep --parallel dp=4,pp=2 --microbatches 1,2 --shard 1/2 --out p.json",
            "--shard runs one job: give one --microbatches per sharded run",
        ),
    ] {
        let out = gcsim().args(args.split(' ')).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {err}");
        assert!(err.contains(says), "{args}: {err}");
    }
}

/// The transfer between stages from an activation size: --latency + size /
/// bandwidth, in the time unit, is the run with that --p2p-time; the
/// bandwidth is --p2p-bandwidth's, or the collective's without it.
#[test]
fn activation_size_sets_the_transfer_between_stages() {
    let run = |extra: &[&str]| {
        let out = gcsim()
            .args(["run", "--parallel", "dp=2,pp=4,tp=1", "--microbatches", "4"])
            .args(["--dist", "exp:rate=1", "--trials", "3000", "--format", "csv"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    // 50 MB at 1 GB/s is 50 ms, plus the default latency of 5 µs.
    let by_size = run(&[
        "--time-unit",
        "s",
        "--activation-size",
        "50MB",
        "--p2p-bandwidth",
        "1GB/s",
    ]);
    assert_eq!(by_size, run(&["--time-unit", "s", "--p2p-time", "0.050005"]));
    assert_ne!(by_size, run(&["--time-unit", "s", "--p2p-time", "0.05"]));
    // In milliseconds, with the collective's bandwidth and latency (0 here,
    // so that the sum is exactly 50).
    let ring = [
        "--aggregation",
        "ring",
        "--gradient-size",
        "1GB",
        "--bandwidth",
        "1GB/s",
        "--latency",
        "0",
    ];
    let by_size = run(&[&["--time-unit", "ms", "--activation-size", "50MB"][..], &ring].concat());
    assert_eq!(
        by_size,
        run(&[&["--time-unit", "ms", "--p2p-time", "50"][..], &ring].concat())
    );
    assert_ne!(
        by_size,
        run(&[&["--time-unit", "ms", "--p2p-time", "0.05"][..], &ring].concat())
    );
    for (flags, says) in [
        (
            vec!["--activation-size", "50MB", "--p2p-bandwidth", "1GB/s"],
            "needs the time unit",
        ),
        (
            vec!["--time-unit", "s", "--activation-size", "50MB"],
            "give --p2p-bandwidth",
        ),
        (
            vec!["--time-unit", "s", "--p2p-bandwidth", "1GB/s"],
            "give --activation-size BYTES too",
        ),
        (
            vec![
                "--time-unit",
                "s",
                "--activation-size",
                "5MB",
                "--p2p-bandwidth",
                "1GB/s",
                "--p2p-time",
                "1",
            ],
            "both set the transfer between stages",
        ),
        (
            vec![
                "--time-unit",
                "s",
                "--activation-size",
                "-5MB",
                "--p2p-bandwidth",
                "1GB/s",
            ],
            "--activation-size",
        ),
        (
            vec![
                "--time-unit",
                "s",
                "--activation-size",
                "5MB",
                "--p2p-bandwidth",
                "1e-300B/s",
            ],
            "accepted: at most 1e100",
        ),
    ] {
        let out = gcsim()
            .args(["run", "--parallel", "dp=2,pp=4,tp=1", "--dist", "exp:rate=1"])
            .args(&flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(says), "{flags:?}: {stderr}");
    }
}
