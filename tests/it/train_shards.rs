//! `train --shard I/K`: each shard trains a contiguous share of the
//! repeats, and `gcsim merge` of the parts writes what `train` writes, byte
//! for byte; what a training shard cannot do is refused by flag.

use std::path::PathBuf;

use super::shard::{gcsim, merge_refused, merged, output, shard};
use predicates::prelude::*;

const TRAIN: [&str; 16] = [
    "train",
    "--n",
    "8",
    "--scheme",
    "crc,ignore,k-async",
    "--s",
    "1",
    "--k",
    "4",
    "--repeats",
    "5",
    "--iterations",
    "40",
    "--dist",
    "exp:rate=1,p_slow=0.1,slowdown=4",
    "-q",
];

#[test]
fn merged_training_shards_are_the_single_study() {
    let dir = tempfile::tempdir().unwrap();
    let single_json = output(&[&TRAIN[..], &["--format", "json"]].concat());
    let single_csv = output(&[&TRAIN[..], &["--format", "csv"]].concat());
    for k in [1, 2, 5] {
        let mut files: Vec<PathBuf> = (1..=k).map(|i| shard(dir.path(), &TRAIN, i, k)).collect();
        files.reverse();
        assert_eq!(merged(&files, "json"), single_json, "{k} shards");
        assert_eq!(merged(&files, "csv"), single_csv, "{k} shards");
    }
}

#[test]
fn training_shards_are_refused_by_flag_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let refused = |extra: &[&str], expected: &str| {
        gcsim()
            .args(TRAIN)
            .args(extra)
            .current_dir(d)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    };
    refused(
        &["--shard", "1/6", "--out", "a.json"],
        "5 repeats split into at most 5 shards",
    );
    refused(
        &["--shard", "1/2"],
        "--shard 1/2 writes a partial result file: give --out FILE.json",
    );
    refused(
        &["--shard", "1/2", "--out", "a.csv"],
        "give --out a .json file (not a.csv)",
    );
    refused(
        &["--shard", "1/2", "--out", "a.json", "--curves", "c.csv"],
        "drop --curves",
    );
    refused(
        &["--shard", "1/2", "--out", "a.json", "--columns", "strategy"],
        "give --columns to gcsim merge",
    );
    assert!(!d.join("a.json").exists());
    let parts: Vec<PathBuf> = (1..=2).map(|i| shard(d, &TRAIN, i, 2)).collect();
    merge_refused(&[&parts[0]], "shard 2/2 is missing");
    merge_refused(&[&parts[0], &parts[0], &parts[1]], "are both shard 1/2");
    let other = d.join("other.json");
    gcsim()
        .args(TRAIN)
        .args(["--seed", "3", "--shard", "2/2", "--out"])
        .arg(&other)
        .assert()
        .success();
    merge_refused(&[&parts[0], &other], "are parts of different training studies");
    let text = std::fs::read_to_string(&parts[1]).unwrap();
    let edited = d.join("edited.json");
    std::fs::write(&edited, text.replacen("\"first\":2", "\"first\":1", 1)).unwrap();
    merge_refused(&[&parts[0], &edited], "the checksum does not match");
}
