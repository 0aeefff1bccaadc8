//! `--shard I/K` and `gcsim merge`: merged output equals the single run's,
//! byte for byte, for any K; bad shard sets are refused.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

/// `gcsim merge FILES` exits 2 with `expected` on stderr.
pub(super) fn merge_refused(files: &[&PathBuf], expected: &str) {
    gcsim()
        .arg("merge")
        .args(files)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(expected));
}

pub(super) fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

pub(super) fn output(args: &[&str]) -> Vec<u8> {
    let out = gcsim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub(super) fn shard(dir: &Path, args: &[&str], i: u64, k: u64) -> PathBuf {
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

pub(super) fn merged(files: &[PathBuf], format: &str) -> Vec<u8> {
    let out = gcsim()
        .arg("merge")
        .args(files)
        .args(["--format", format])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// 2.2 million trials: three blocks of 2^20, so shards cut between blocks
/// or own several (K is at most the number of blocks).
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
    for k in [1, 2, 3] {
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
    let files: Vec<PathBuf> = (1..=2).map(|i| shard(dir.path(), &args, i, 2)).collect();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        text.contains("\"bin_range\"") && text.contains("\"version\":8"),
        "{}",
        &text[..200]
    );
    assert_eq!(merged(&files, "csv"), single);
}

/// A run no longer than the pilot: its one shard keeps every value, and
/// the merge simulates nothing.
#[test]
fn short_runs_merge_too() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "5000", "-q",
    ];
    let single = output(&[&args[..], &["--format", "csv"]].concat());
    let files = [shard(dir.path(), &args, 1, 1)];
    assert_eq!(merged(&files, "csv"), single);
}

#[test]
fn bad_shard_sets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["sweep", "--n", "10", "--s", "0..2", "--trials", "2200000", "-q"];
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
    let csv = dir.path().join("code.csv");
    std::fs::write(&csv, "1,0\n0,1\n").unwrap();
    let array = dir.path().join("array.json");
    std::fs::write(&array, "[1, 2]").unwrap();
    let old = dir.path().join("old.json");
    std::fs::write(&old, r#"{"format": "gcsim-shard", "version": "3"}"#).unwrap();
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
        (vec![&not_json], "x.json: not a gcsim shard file: not JSON (EOF"),
        // What it is, not serde's view of it ("expected struct Head").
        (
            vec![&csv],
            "code.csv: not a gcsim shard file: not JSON (trailing characters",
        ),
        (
            vec![&array],
            "array.json: not a gcsim shard file: no \"format\": \"gcsim-shard\" (shard files are written by run or sweep --shard I/K --out FILE.json)",
        ),
        (
            vec![&old],
            "old.json: shard format version \"3\"; this gcsim reads version 8",
        ),
    ];
    for (files, expected) in cases {
        merge_refused(&files, expected);
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

/// Rewrites a shard file's JSON through `edit` and, if `reseal`, recomputes
/// its checksum as the format defines it: CRC-32 of the compact JSON with
/// the checksum empty and keys sorted (as `serde_json::Value` writes them).
pub(super) fn edited(path: &Path, reseal: bool, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    if reseal {
        v["checksum"] = "".into();
        let bare = serde_json::to_vec(&v).unwrap();
        v["checksum"] = format!("{:08x}", crc32fast::hash(&bare)).into();
    }
    let out = path.with_extension("edited.json");
    std::fs::write(&out, serde_json::to_vec(&v).unwrap()).unwrap();
    out
}

/// Files whose numbers were edited are refused by name: a checksum catches
/// any edit, and where the checksum was recomputed the merge still checks
/// that each block counts its trials and each shard holds its own blocks,
/// blaming the shard at fault (it blamed shard 1). 4.4 million trials keep
/// too many values (70 MB) to split by trial: the shards hold power sums.
#[test]
fn edited_shards_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "4400000", "-q",
    ];
    let (a, b) = (shard(dir.path(), &args, 1, 2), shard(dir.path(), &args, 2, 2));
    let refused = merge_refused;
    // Unedited (and resealed without an edit) they merge.
    let same = edited(&b, true, |_| {});
    assert_eq!(
        merged(&[a.clone(), same], "csv"),
        merged(&[a.clone(), b.clone()], "csv")
    );
    let count = |v: &mut serde_json::Value| {
        let c = &mut v["blocks"][0]["sums"][0][0];
        *c = (c.as_u64().unwrap() + 1).into();
    };
    let bad = edited(&b, false, count);
    refused(&[&a, &bad], "the checksum does not match the contents");
    refused(&[&a, &bad], &bad.display().to_string());
    let bad = edited(&b, true, count);
    refused(
        &[&a, &bad],
        "shard 2/2 does not fit the study: block 2's counts are not its",
    );
    let bad = edited(&b, true, |v| v["blocks"][0]["index"] = 0.into());
    refused(
        &[&a, &bad],
        "shard 2/2 does not fit the study: its blocks are not the ones its --shard runs",
    );
    // Six shards of five blocks: each ends inside a block, and holds the
    // chunks it ran of it.
    let c = shard(dir.path(), &args, 2, 6);
    let bad = edited(&c, true, |v| v["chunks"][0]["index"] = 300.into());
    refused(
        &[&bad],
        "shard 2/6 does not fit the study: its blocks are not the ones its --shard runs",
    );
    let bad = edited(&c, true, |v| v["chunks"][0]["sums"][0][0] = 8191.into());
    refused(
        &[&bad],
        "shard 2/6 does not fit the study: chunk 89's counts are not its 8192 trials",
    );
    let bad = edited(&b, true, |v| v["tallies"][0]["below"] = 5_000_000.into());
    refused(
        &[&a, &bad],
        "shard 2/2 does not fit the study: a window counts more values",
    );
    let bad = edited(&b, true, |v| v["gcsim"] = "0.0.1".into());
    refused(&[&a, &bad], "written by gcsim 0.0.1; this is gcsim");
    // K beyond the chunks of 8192 trials: refused before any work.
    gcsim()
        .args(args)
        .args(["--shard", "1/538", "--out", "x.json"])
        .current_dir(dir.path())
        .assert()
        .success();
    gcsim()
        .args(args)
        .args(["--shard", "1/539", "--out", "y.json"])
        .current_dir(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "split into chunks of 8192 trials: at most 538 shards: give K <= 538",
        ));
    assert!(!dir.path().join("y.json").exists());
    gcsim()
        .args(args)
        .args(["--shard", "1/18446744073709551615", "--out", "x.json"])
        .current_dir(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "4400000 trials split into at most 4400000 shards",
        ));
}

/// A run that keeps its values splits by trial: edited values are refused
/// by name (trials another shard runs, values that are not whole doubles or
/// not base64), and K up to the number of trials is accepted.
#[test]
fn edited_values_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "500", "-q",
    ];
    let (a, b) = (shard(dir.path(), &args, 1, 2), shard(dir.path(), &args, 2, 2));
    let run = |v: &mut serde_json::Value| v["values"][0].clone();
    let first = edited(&b, true, |v| v["values"][0]["first"] = 249.into());
    merge_refused(
        &[&a, &first],
        "shard 2/2 does not fit the study: its trials' values are not those its --shard runs",
    );
    let short = edited(&b, true, |v| {
        let mut r = run(v);
        let text = r["values"].as_str().unwrap().to_string();
        r["values"] = text[..text.len() - 4].into();
        v["values"][0] = r;
    });
    merge_refused(
        &[&a, &short],
        "shard 2/2 does not fit the study: the values of trials from 250",
    );
    let garbled = edited(&b, true, |v| v["values"][0]["values"] = "!!!!".into());
    merge_refused(&[&a, &garbled], "are not base64");
    let single = output(&[&args[..], &["--format", "csv"]].concat());
    assert_eq!(merged(&[b.clone(), a.clone()], "csv"), single);
    gcsim()
        .args(args)
        .args(["--shard", "1/501", "--out", "x.json"])
        .current_dir(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("500 trials split into at most 500 shards"));
}

/// Inputs the fuzzer found (`fuzz/run.sh`), kept as regressions: merging
/// each is a one-line error with exit 2, never a panic. `shard-n-zero.json`
/// (a study record with n = 0) panicked while its schemes were built;
/// `shard-newline-in-load-model.json` (a load model name with newlines)
/// gave an error of several lines.
#[test]
fn fuzz_regressions_are_refused_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let out = gcsim().arg("merge").arg(&file).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", file.display());
        assert!(
            !stderr.contains("panicked") && stderr.trim().lines().count() == 1,
            "{stderr}"
        );
        // The library's error is one line too, before the CLI renders it.
        let text = std::fs::read_to_string(&file).unwrap();
        let err = gcsim::shard::ShardFile::parse("f.json", &text).unwrap_err().to_string();
        assert!(!err.contains('\n'), "{err}");
    }
    let out = gcsim()
        .arg("merge")
        .arg(dir.join("shard-n-zero.json"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("n 0 is out of range; accepted: a whole number >= 1"));
}

/// A custom code's matrix in a shard file is checked before it is used:
/// an empty first row and rows of unequal length are refused with one line
/// (a ragged matrix was indexed out of bounds).
#[test]
fn a_shards_custom_matrix_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let code = dir.path().join("code.csv");
    std::fs::write(&code, "1,0,0\n0,1,0\n0,0,1\n").unwrap();
    let args = ["run", "--code", code.to_str().unwrap(), "--trials", "1000", "-q"];
    let file = shard(dir.path(), &args, 1, 1);
    let expected = "custom: a matrix of finite numbers with rows of equal length";
    let rows = |rows: serde_json::Value| move |v: &mut serde_json::Value| v["study"]["custom"][1] = rows;
    merge_refused(&[&edited(&file, true, rows(serde_json::json!([[]])))], expected);
    let ragged = serde_json::json!([[1.0, 0.0, 0.0], [0.0, 1.0], [0.0, 0.0, 1.0]]);
    merge_refused(&[&edited(&file, true, rows(ragged))], expected);
}

/// `--shard slurm` in the three tasks of a job array `--array=0-2` (as
/// sbatch sets the variables), merged from their directory: the single
/// run's bytes. Outside an array, or in one with a step, it is refused;
/// shards missing from a merge are all named.
#[test]
fn slurm_array_tasks_are_the_shards() {
    let dir = tempfile::tempdir().unwrap();
    let parts = dir.path().join("parts");
    std::fs::create_dir(&parts).unwrap();
    let args = [
        "sweep", "--n", "16", "--s", "0..3", "--trials", "2200000", "--seed", "5", "-q",
    ];
    for id in 0..3 {
        gcsim()
            .args(args)
            .args(["--shard", "slurm", "--out"])
            .arg(parts.join(format!("part-{id}.json")))
            .env("SLURM_ARRAY_TASK_ID", id.to_string())
            .env("SLURM_ARRAY_TASK_MIN", "0")
            .env("SLURM_ARRAY_TASK_MAX", "2")
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .assert()
            .success();
    }
    let single = output(&[&args[..], &["--format", "csv"]].concat());
    assert_eq!(merged(std::slice::from_ref(&parts), "csv"), single);
    // Task 1 of 0-2 is shard 2/3: alone, shards 1 and 3 are missing.
    merge_refused(
        &[&parts.join("part-1.json")],
        "shards 1 and 3 of 3 are missing (give all 3 shard files)",
    );
    let run = |vars: &[(&str, &str)]| {
        let mut cmd = gcsim();
        cmd.args(args)
            .args(["--shard", "slurm", "--out"])
            .arg(dir.path().join("x.json"));
        for var in [
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_MIN",
            "SLURM_ARRAY_TASK_MAX",
            "SLURM_ARRAY_TASK_COUNT",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.assert().code(2)
    };
    run(&[]).stderr(predicate::str::contains(
        "`slurm` takes the shard from SLURM_ARRAY_TASK_ID, which is not set",
    ));
    // --array=1-5:2 runs tasks 1, 3, 5: not one task per shard.
    let stepped = [
        ("SLURM_ARRAY_TASK_ID", "3"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
        ("SLURM_ARRAY_TASK_MAX", "5"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
    ];
    run(&stepped).stderr(predicate::str::contains(
        "the job array has 3 tasks with indices 1 to 5; give it consecutive indices (e.g. --array=1-3)",
    ));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    gcsim()
        .arg("merge")
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "a directory given to merge must hold the shards' .json files",
        ));
}

/// A trace bootstrap's percentiles that fall in a bin of two of its repeated
/// times are read exactly from the first pass, in the single run and in
/// the merge of its shard, whose file carries each bin's two ends and how
/// often each came: neither runs a refinement pass (with the ends alone,
/// four of this study's percentiles took one), and the bytes agree.
#[test]
fn bins_of_two_repeated_times_need_no_refinement_in_a_merge() {
    let dir = tempfile::tempdir().unwrap();
    let trace = format!("trace:path={}/data/trace-llm-64w.csv", env!("CARGO_MANIFEST_DIR"));
    let args = [
        "sweep",
        "--n",
        "100",
        "--s",
        "0..50",
        "--dist",
        &trace,
        "--trace-bootstrap",
        "0",
        "--trials",
        "1000000",
        "--seed",
        "2",
    ];
    let single = gcsim().args(args).args(["--format", "csv"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&single.stderr);
    assert!(single.status.success() && !stderr.contains("passes"), "{stderr}");
    let part = shard(dir.path(), &[&args[..], &["-q"]].concat(), 1, 1);
    let merged = gcsim()
        .arg("merge")
        .arg(&part)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert!(merged.status.success() && !stderr.contains("passes"), "{stderr}");
    assert_eq!(merged.stdout, single.stdout);
}
