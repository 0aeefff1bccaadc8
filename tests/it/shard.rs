//! `--shard I/K` and `gcsim merge`: merged output equals the single run's,
//! byte for byte, for any K; bad shard sets are refused.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn output(args: &[&str]) -> Vec<u8> {
    let out = gcsim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn shard(dir: &Path, args: &[&str], i: u64, k: u64) -> PathBuf {
    let path = dir.join(format!("part-{i}-of-{k}.json"));
    let spec = format!("{i}/{k}");
    gcsim()
        .args(args)
        .args(["--shard", &spec, "--out"])
        .arg(&path)
        .assert()
        .success();
    path
}

fn merged(files: &[PathBuf], format: &str) -> Vec<u8> {
    let out = gcsim()
        .arg("merge")
        .args(files)
        .args(["--format", format])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// 2.2 million trials: three blocks of 2^20, so shards cut between blocks,
/// own several, or own none (K = 5).
#[test]
fn merged_shards_equal_a_single_run_for_any_k() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "sweep",
        "--n",
        "24",
        "--s",
        "0..5",
        "--scheme",
        "crc,frc,mds",
        "--trials",
        "2200000",
        "--seed",
        "11",
        "-q",
    ];
    let single_csv = output(&[&args[..], &["--format", "csv"]].concat());
    let single_json = output(&[&args[..], &["--format", "json"]].concat());
    for k in [1, 2, 3, 5] {
        let files: Vec<PathBuf> = (1..=k).map(|i| shard(dir.path(), &args, i, k)).collect();
        assert_eq!(merged(&files, "csv"), single_csv, "K = {k}");
        assert_eq!(merged(&files, "json"), single_json, "K = {k}");
        let mut reversed = files.clone();
        reversed.reverse();
        assert_eq!(merged(&reversed, "csv"), single_csv, "K = {k}, files in another order");
    }
}

/// Trace workers: the first-pass tallies carry each bin's value range (so
/// that a percentile on a repeated value is read exactly), and the merged
/// shards still give the single run's bytes.
#[test]
fn trace_shards_carry_bin_ranges_and_merge_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let trace = format!("trace:path={}/data/trace-llm-64w.csv", env!("CARGO_MANIFEST_DIR"));
    let args = [
        "sweep", "--n", "64", "--s", "0..7", "--dist", &trace, "--trials", "1200000", "--seed", "5", "-q",
    ];
    let single = output(&[&args[..], &["--format", "csv"]].concat());
    let files: Vec<PathBuf> = (1..=3).map(|i| shard(dir.path(), &args, i, 3)).collect();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        text.contains("\"bin_range\"") && text.contains("\"version\":3"),
        "{}",
        &text[..200]
    );
    assert_eq!(merged(&files, "csv"), single);
}

/// A run no longer than the pilot: every shard computes it, merge reports the exact path.
#[test]
fn short_runs_merge_too() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "5000", "-q",
    ];
    let single = output(&[&args[..], &["--format", "csv"]].concat());
    let files: Vec<PathBuf> = (1..=2).map(|i| shard(dir.path(), &args, i, 2)).collect();
    assert_eq!(merged(&files, "csv"), single);
}

#[test]
fn bad_shard_sets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["sweep", "--n", "10", "--s", "0..2", "--trials", "1200000", "-q"];
    let three: Vec<PathBuf> = (1..=3).map(|i| shard(dir.path(), &args, i, 3)).collect();
    let two_of_two = shard(dir.path(), &args, 2, 2);
    let other_seed = dir.path().join("other.json");
    gcsim()
        .args(args)
        .args(["--seed", "9", "--shard", "2/3", "--out"])
        .arg(&other_seed)
        .assert()
        .success();
    let not_json = dir.path().join("x.json");
    std::fs::write(&not_json, "{").unwrap();
    let cases: Vec<(Vec<&PathBuf>, &str)> = vec![
        (vec![&three[0], &three[1]], "shard 3/3 is missing"),
        (
            vec![&three[0], &three[0], &three[1], &three[2]],
            "shard 1/3 is given twice",
        ),
        (vec![&three[0], &two_of_two], "different splits"),
        (
            vec![&three[0], &other_seed, &three[2]],
            "different configurations or seeds",
        ),
        (vec![&not_json], "not a gcsim shard file"),
    ];
    for (files, expected) in cases {
        gcsim()
            .arg("merge")
            .args(files)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
    gcsim()
        .args(args)
        .args(["--shard", "1/2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("give --out FILE"));
    gcsim()
        .args(args)
        .args(["--shard", "0/2", "--out", "x.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("1 <= I <= K"));
}
