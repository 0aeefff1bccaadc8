//! Every simulation path splits into shards, down to one trial a shard, and
//! the merged output is the single run's, byte for byte: a run whose values
//! fit is split by trials (its shards keep their values), a longer one by
//! chunks of 8192 trials, whose ends may fall inside a block of 2^20.

use std::path::PathBuf;

use super::shard::{merged, output, shard};

/// One path of the engine: its arguments (trials included).
struct Path {
    name: &'static str,
    args: Vec<String>,
}

fn path(name: &'static str, args: &str) -> Path {
    let trace = format!("{}/data/trace-llm-64w.csv", env!("CARGO_MANIFEST_DIR"));
    Path {
        name,
        args: args.replace("TRACE", &trace).split(' ').map(String::from).collect(),
    }
}

fn paths() -> Vec<Path> {
    vec![
        path("headline", "sweep --n 30 --s 0..5 --trials 3001"),
        path("rank", "sweep --n 20 --scheme crc --s 0..3 --decoder rank --trials 301"),
        path(
            "transfers",
            "sweep --n 30 --s 0..3 --comm-dist exp:rate=2 --trials 2000",
        ),
        path(
            "shared",
            "sweep --n 30 --s 0..3 --comm-time 0.3 --link shared --trials 2000",
        ),
        path(
            "classes",
            "sweep --n 20 --s 0..3 --workers 10:exp:rate=1 --workers 10:exp:rate=0.5 --trials 2000",
        ),
        path(
            "replay",
            "sweep --n 64 --scheme crc --s 0..3 --dist replay:path=TRACE --trace-bootstrap 0 --trials 2000",
        ),
        path(
            "bootstrap",
            "sweep --n 30 --s 0..3 --dist trace:path=TRACE --trials 2000",
        ),
        path("timeout", "run --n 30 --scheme timeout --timeout 1.5 --trials 2000"),
        path("speculative", "run --n 30 --scheme speculative --trials 2000"),
        path("k-async", "run --n 30 --scheme k-async --k 10 --trials 1000"),
        path("additive", "sweep --n 20 --s 0..3 --load-model additive --trials 1000"),
        path(
            "iterations",
            "run --n 20 --scheme crc --s 2 --dist exp:rate=1,p_slow=0.1,slowdown=5,persist=0.5 --iterations 20 --trials 500",
        ),
        path("frc at large n", "sweep --n 20000 --scheme frc --s 0,9 --trials 300"),
        path(
            "ring",
            "sweep --n 24 --scheme uncoded,ignore,frc --s 1,3 --aggregation ring --bandwidth 1GB/s --gradient-size 100MB --time-unit s --trials 2000",
        ),
        path(
            "buckets",
            "sweep --n 24 --scheme ignore,crc --s 2 --aggregation hierarchical:gpus-per-node=8,intra-bandwidth=10GB/s --bandwidth 1GB/s --gradient-size 1GB --buckets 8 --time-unit s --trials 2000",
        ),
        path(
            "pipelines",
            "sweep --parallel dp=4,pp=3,tp=2 --microbatches 2 --schedule gpipe --stage-work 1,1,1.5 --microbatch-work lognormal:mu=0,sigma=0.3 --scheme ignore,frc --s 0,1 --aggregation ring --bandwidth 1GB/s --gradient-size 100MB --time-unit s --dist exp:rate=1,p_slow=0.1,slowdown=3 --trials 2000",
        ),
        path(
            "interleaved pipelines",
            "sweep --parallel dp=4,pp=2,tp=2 --microbatches 2 --schedule interleaved:3 --p2p-time 0.05 --scheme ignore,frc --s 0,1 --aggregation ring --bandwidth 1GB/s --gradient-size 100MB --buckets 2 --time-unit s --dist exp:rate=1,p_slow=0.1,slowdown=3 --trials 2000",
        ),
    ]
}

/// Each path in 2, 3 and 7 shards, files in any order.
#[test]
fn every_path_splits_and_merges_to_the_single_run() {
    let dir = tempfile::tempdir().unwrap();
    for p in paths() {
        let args: Vec<&str> = p.args.iter().map(String::as_str).chain(["-q"]).collect();
        let single = output(&[&args[..], &["--format", "csv"]].concat());
        for k in [2, 3, 7] {
            let mut files: Vec<PathBuf> = (1..=k).map(|i| shard(dir.path(), &args, i, k)).collect();
            files.rotate_left(1);
            assert_eq!(
                String::from_utf8_lossy(&merged(&files, "csv")),
                String::from_utf8_lossy(&single),
                "{}, {k} shards",
                p.name
            );
        }
    }
}

/// As many shards as trials: each runs one trial.
#[test]
fn a_shard_can_run_one_trial() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["run", "--n", "8", "--scheme", "crc", "--s", "2", "--trials", "7", "-q"];
    let single = output(&[&args[..], &["--format", "json"]].concat());
    let files: Vec<PathBuf> = (1..=7).map(|i| shard(dir.path(), &args, i, 7)).collect();
    assert_eq!(merged(&files, "json"), single);
}

/// The example: a rank-decoder sweep of 20 000 trials (three chunks)
/// in four shards; and a run too long to keep its values (split by chunks)
/// whose shards end inside blocks.
#[test]
fn small_costly_runs_and_long_runs_split() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "sweep",
        "--n",
        "50",
        "--s",
        "0..10",
        "--scheme",
        "crc",
        "--decoder",
        "rank",
        "--trials",
        "20000",
        "-q",
    ];
    let single = output(&[&args[..], &["--format", "csv"]].concat());
    let files: Vec<PathBuf> = (1..=4).map(|i| shard(dir.path(), &args, i, 4)).collect();
    assert_eq!(merged(&files, "csv"), single);
    let long = [
        "sweep", "--n", "20", "--s", "0..10", "--trials", "1500000", "--seed", "4", "-q",
    ];
    let single = output(&[&long[..], &["--format", "json"]].concat());
    let files: Vec<PathBuf> = (1..=5).map(|i| shard(dir.path(), &long, i, 5)).collect();
    let text = std::fs::read_to_string(&files[1]).unwrap();
    assert!(
        text.contains("\"chunks\"") && !text.contains("\"values\":[{"),
        "{}",
        &text[..300]
    );
    assert_eq!(merged(&files, "json"), single);
}
