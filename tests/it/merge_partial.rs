//! `gcsim merge --partial`: the union of some shards is a file that later
//! merges take in place of those shards. However the shards are grouped,
//! the final merge is the single run's bytes; shards covered twice, left
//! out, or of another study are refused, naming the file.

use std::path::{Path, PathBuf};

use predicates::prelude::*;

use super::shard::{edited, gcsim, merge_refused, merged, output, shard};

/// Five shards of 5.3 million trials (six blocks of 2^20: shard 5 holds two).
const ARGS: [&str; 12] = [
    "sweep", "--n", "12", "--s", "0..3", "--trials", "5300000", "--seed", "3", "--scheme", "crc,frc", "-q",
];

fn five(dir: &Path) -> Vec<PathBuf> {
    (1..=5).map(|i| shard(dir, &ARGS, i, 5)).collect()
}

/// `gcsim merge --partial FILES --out DIR/NAME`.
fn partial(dir: &Path, name: &str, files: &[&PathBuf]) -> PathBuf {
    let out = dir.join(name);
    gcsim()
        .args(["merge", "--partial", "-q"])
        .args(files)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    out
}

#[test]
fn partial_merges_in_any_grouping_give_the_single_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let single_csv = output(&[&ARGS[..], &["--format", "csv"]].concat());
    let single_json = output(&[&ARGS[..], &["--format", "json"]].concat());
    let s = five(d);
    // Two contiguous groups and a shard.
    let a = partial(d, "a.json", &[&s[0], &s[1]]);
    let b = partial(d, "b.json", &[&s[4], &s[3]]);
    let text = std::fs::read_to_string(&a).unwrap();
    assert!(
        text.contains("\"version\":9") && text.contains("\"shard\":{\"indices\":[[1,2]],\"count\":5}"),
        "{}",
        &text[..200]
    );
    assert_eq!(merged(&[a.clone(), s[2].clone(), b.clone()], "csv"), single_csv);
    assert_eq!(merged(&[b.clone(), a.clone(), s[2].clone()], "json"), single_json);
    // Gaps inside a partial (shards 1, 3, 5), a partial of partials.
    let odd = partial(d, "odd.json", &[&s[4], &s[0], &s[2]]);
    assert!(
        std::fs::read_to_string(&odd)
            .unwrap()
            .contains("\"indices\":[[1,1],[3,3],[5,5]]")
    );
    let even = partial(d, "even.json", &[&s[3], &s[1]]);
    let all = partial(d, "all.json", &[&even, &odd]);
    assert!(std::fs::read_to_string(&all).unwrap().contains("\"indices\":[[1,5]]"));
    assert_eq!(merged(std::slice::from_ref(&all), "csv"), single_csv);
    assert_eq!(merged(&[odd.clone(), even.clone()], "json"), single_json);
    // Extended in place, one shard at a time, last shard first.
    let acc = d.join("acc.json");
    std::fs::copy(&s[4], &acc).unwrap();
    for i in [3, 0, 2] {
        partial(d, "acc.json", &[&acc, &s[i]]);
    }
    assert_eq!(merged(&[acc.clone(), s[1].clone()], "csv"), single_csv);
    // Refused, naming the file: overlapping coverage, missing shards.
    merge_refused(
        &[&a, &s[1], &s[2], &b],
        &format!("{}: shard 2/5 is given twice (also in {})", s[1].display(), a.display()),
    );
    let middle = partial(d, "middle.json", &[&s[1], &s[2], &s[3]]);
    merge_refused(
        &[&odd, &middle],
        &format!(
            "{}: shard 3/5 is given twice (also in {})",
            middle.display(),
            odd.display()
        ),
    );
    merge_refused(
        &[&a, &middle, &s[4]],
        &format!(
            "{}: shard 2/5 is given twice (also in {})",
            middle.display(),
            a.display()
        ),
    );
    merge_refused(
        &[&all, &a, &b],
        &format!(
            "{}: shards 1-2 of 5 are given twice (also in {})",
            a.display(),
            all.display()
        ),
    );
    merge_refused(
        &[&a, &a],
        "shards 1-2 of 5 are given twice (the same file is given twice)",
    );
    merge_refused(&[&a, &b], "shard 3/5 is missing (give all 5 shard files)");
    merge_refused(&[&odd], "shards 2 and 4 of 5 are missing");
    // A partial merge may leave shards out; it says which.
    gcsim()
        .args(["merge", "--partial"])
        .args([&a, &b])
        .arg("--out")
        .arg(d.join("ab.json"))
        .assert()
        .success()
        .stderr(
            predicate::str::contains("wrote the partial merge of shards 1-2 and 4-5 of 5")
                .and(predicate::str::contains("(shard 3/5 still to merge)")),
        );
}

/// A partial merge's file is checked as a shard's is: of the same study,
/// unedited (its checksum), its blocks those of the shards it names; the
/// flags that make a result are refused with --partial.
#[test]
fn bad_partial_merges_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = five(d);
    let a = partial(d, "a.json", &[&s[0], &s[1]]);
    let other_seed = d.join("other.json");
    let mut args = ARGS;
    args[8] = "4";
    gcsim()
        .args(args)
        .args(["--shard", "3/5", "--out"])
        .arg(&other_seed)
        .assert()
        .success();
    let other = partial(d, "other-partial.json", &[&other_seed]);
    merge_refused(
        &[&a, &other],
        &format!(
            "{} and {} are shards of different configurations or seeds",
            a.display(),
            other.display()
        ),
    );
    // Another split.
    let halves = partial(d, "half.json", &[&shard(d, &ARGS, 1, 2)]);
    merge_refused(&[&a, &halves], "are shards of different splits (into 5 and 2 shards)");
    // An edit, and an edit resealed: one shard dropped from its coverage.
    let bad = edited(&a, false, |v| v["shard"]["indices"] = serde_json::json!([[1, 1]]));
    merge_refused(&[&bad], &format!("{}: the checksum does not match", bad.display()));
    let bad = edited(&a, true, |v| v["shard"]["indices"] = serde_json::json!([[1, 1]]));
    merge_refused(
        &[&bad],
        &format!(
            "{}: shard 1/5 does not fit the study: its blocks are not the ones its --shard runs",
            bad.display()
        ),
    );
    let bad = edited(&a, true, |v| {
        v["shard"]["indices"] = serde_json::json!([[2, 2], [1, 1]])
    });
    merge_refused(&[&bad], "\"shard\": shard 1 of 5: runs must ascend and not overlap");
    let bad = edited(&a, true, |v| v["shard"] = serde_json::json!({"index": 1, "count": 5}));
    merge_refused(
        &[&bad],
        "a partial merge's file (version 9) has \"indices\" and no \"index\"",
    );
    let bad = edited(&a, true, |v| v["tallies"][0]["below"] = 3_000_000.into());
    merge_refused(
        &[&bad],
        "shards 1-2 of 5 do not fit the study: a window counts more values than the shards have trials",
    );
    // A shard emptied: its blocks would be left out of the sums.
    let hollow = edited(&s[2], true, |v| {
        for key in ["blocks", "range", "tallies"] {
            v[key] = serde_json::json!([]);
        }
    });
    merge_refused(
        &[&a, &hollow, &s[3], &s[4]],
        &format!(
            "{}: shard 3/5 does not fit the study: its blocks are not the ones its --shard runs",
            hollow.display()
        ),
    );
    let old = d.join("old.json");
    std::fs::write(&old, r#"{"format": "gcsim-shard", "version": 6}"#).unwrap();
    merge_refused(
        &[&old],
        "old.json: shard format version 6; this gcsim reads version 8 (a shard) and 9 (a partial merge)",
    );
    for (flags, expected) in [
        (
            &["--partial"][..],
            "--partial writes a partial merge: give --out FILE.json",
        ),
        (
            &["--partial", "--out", "x.csv"],
            "--partial writes its partial merge as JSON: give --out a .json file (not x.csv)",
        ),
        (
            &["--partial", "--out", "x.json", "--plot", "x.png"],
            "--partial writes a partial merge, not a result",
        ),
        (
            &["--partial", "--out", "x.json", "--format", "csv"],
            "--partial writes its partial merge as JSON: drop --format csv",
        ),
    ] {
        gcsim()
            .arg("merge")
            .arg(&a)
            .args(flags)
            .current_dir(d)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
    assert!(!d.join("x.json").exists());
}
