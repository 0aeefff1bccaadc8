//! `codes --shard I/K`: each shard decodes a contiguous share of the
//! straggler patterns (or worker sets), and `gcsim merge` of the parts
//! writes what `codes` writes, byte for byte, in every format and with its
//! exit status; parts that do not make one run are refused by name.

use std::path::{Path, PathBuf};

use super::shard::{gcsim, merge_refused, shard};
use predicates::prelude::*;

/// Every pattern of size <= 3 of 12 workers (299), decoded exhaustively.
const EXHAUSTIVE: [&str; 8] = ["codes", "--scheme", "crc", "--n", "12", "--s", "3", "-q"];
/// 300 random patterns of 6196.
const RANDOM: [&str; 12] = [
    "codes", "--scheme", "frc", "--n", "20", "--s", "4", "--limit", "300", "--seed", "3", "-q",
];
/// 500 random sets of k = 6 of 14 workers, and 500 of k - 1.
const MATMUL: [&str; 14] = [
    "codes",
    "--scheme",
    "polynomial",
    "--n",
    "14",
    "--p",
    "2",
    "--q",
    "3",
    "--limit",
    "500",
    "--seed",
    "2",
    "-q",
];

const FORMATS: [&str; 5] = ["json", "csv", "table", "markdown", "latex"];

/// The exit status, stdout and stderr of gcsim with `args`.
fn outcome(args: &[&str], files: &[PathBuf]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let out = gcsim().args(args).args(files).output().unwrap();
    (out.status.code(), out.stdout, out.stderr)
}

fn check_merges(dir: &Path, args: &[&str], counts: &[u64]) {
    for k in counts {
        let mut files: Vec<PathBuf> = (1..=*k).map(|i| shard(dir, args, i, *k)).collect();
        files.rotate_left(*k as usize / 2);
        for format in FORMATS {
            let single = outcome(&[args, &["--format", format]].concat(), &[]);
            let merged = outcome(&["merge", "--format", format], &files);
            assert_eq!(merged, single, "{args:?} in {k} shards, {format}");
        }
    }
}

#[test]
fn merged_codes_shards_are_the_single_run() {
    let dir = tempfile::tempdir().unwrap();
    check_merges(dir.path(), &EXHAUSTIVE, &[1, 2, 7]);
    check_merges(dir.path(), &RANDOM, &[1, 2, 5]);
    check_merges(dir.path(), &MATMUL, &[1, 3, 8]);
    // The identity does not tolerate a straggler: a code that fails its
    // checks, exit status 1 with its verdict on stderr.
    let identity = dir.path().join("identity.csv");
    let rows: Vec<String> = (0..6)
        .map(|i| {
            (0..6)
                .map(|j| if i == j { "1" } else { "0" })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    std::fs::write(&identity, rows.join("\n") + "\n").unwrap();
    let failing = ["codes", "--code", identity.to_str().unwrap(), "--s", "1", "-q"];
    assert_eq!(outcome(&failing, &[]).0, Some(1));
    check_merges(dir.path(), &failing, &[1, 4]);
}

#[test]
fn merged_codes_shards_write_the_single_runs_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files: Vec<PathBuf> = (1..=3).map(|i| shard(d, &RANDOM, i, 3)).collect();
    gcsim()
        .args(RANDOM)
        .args(["--out"])
        .arg(d.join("single.csv"))
        .assert()
        .success();
    gcsim()
        .arg("merge")
        .args(&files)
        .args(["--out"])
        .arg(d.join("merged.csv"))
        .assert()
        .success();
    assert_eq!(
        std::fs::read(d.join("merged.csv")).unwrap(),
        std::fs::read(d.join("single.csv")).unwrap()
    );
}

#[test]
fn codes_shards_are_refused_by_flag_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let refused = |args: &[&str], expected: &str| {
        gcsim()
            .args(args)
            .current_dir(d)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    };
    refused(
        &[&EXHAUSTIVE[..], &["--shard", "1/300", "--out", "a.json"]].concat(),
        "--shard 1/300: crc s=3 decodes 299 sets of workers, split into at most 299 shards",
    );
    refused(
        &[&EXHAUSTIVE[..], &["--shard", "1/2"]].concat(),
        "--shard 1/2 writes a partial result file: give --out FILE.json",
    );
    refused(
        &[&EXHAUSTIVE[..], &["--shard", "1/2", "--out", "a.csv"]].concat(),
        "give --out a .json file (not a.csv)",
    );
    assert!(!d.join("a.json").exists());
    let parts: Vec<PathBuf> = (1..=3).map(|i| shard(d, &RANDOM, i, 3)).collect();
    merge_refused(&[&parts[0], &parts[2]], "shard 2/3 is missing");
    merge_refused(&[&parts[0], &parts[1], &parts[1], &parts[2]], "are both shard 2/3");
    let other_seed = d.join("other-seed.json");
    gcsim()
        .args(&RANDOM[..RANDOM.len() - 3])
        .args(["--seed", "4", "--shard", "2/3", "--out"])
        .arg(&other_seed)
        .assert()
        .success();
    merge_refused(
        &[&parts[0], &other_seed, &parts[2]],
        "are parts of different codes checks",
    );
    let halves = shard(d, &EXHAUSTIVE, 2, 2);
    merge_refused(&[&parts[0], &halves], "are parts of different codes checks");
    let text = std::fs::read_to_string(&parts[1]).unwrap();
    let edited = d.join("edited.json");
    std::fs::write(&edited, text.replacen("\"first\":100", "\"first\":99", 1)).unwrap();
    merge_refused(
        &[&parts[0], &edited, &parts[2]],
        "edited.json: the checksum does not match",
    );
    let renamed = d.join("renamed.json");
    std::fs::write(&renamed, text.replacen("gcsim-codes-shard", "gcsim-train-shard", 1)).unwrap();
    merge_refused(
        &[&parts[0], &renamed, &parts[2]],
        "renamed.json: not a gcsim codes shard file",
    );
    gcsim()
        .arg("merge")
        .args(&parts)
        .args(["--columns", "n"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--columns: gcsim codes writes every column"));
}
