//! Shards by configuration: `plan --shard I/K` (whole cluster sizes) and
//! `scenario --shard I/K` (whole studies, trains and plans) merge to the
//! single process's bytes, for K below, at and above the number of units;
//! missing, duplicated, foreign and edited parts are refused by name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

fn ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The stderr of a command that must fail with a usage error, on one line.
fn refused(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{cmd:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    stderr
}

/// Four cluster sizes simulated on their own common random numbers, with
/// ties broken across sizes (uncoded and crc s=0 are one row) and a
/// deadline objective that round-trips through the part.
const PLAN: [&str; 14] = [
    "plan",
    "--n",
    "8,12,16,24",
    "--ref-n",
    "12",
    "--dist",
    "exp:rate=1,p_slow=0.05,slowdown=8",
    "--scheme",
    "uncoded,frc,crc,ignore",
    "--simulate",
    "--trials",
    "3000",
    "--seed",
    "5",
];

fn plan_parts(dir: &Path, args: &[&str], k: u64) -> PathBuf {
    let parts = dir.join(format!("k{k}"));
    std::fs::create_dir_all(&parts).unwrap();
    for i in 1..=k {
        let out = parts.join(format!("part-{i}.json"));
        ok(gcsim()
            .args(args)
            .args(["-q", "--shard", &format!("{i}/{k}"), "--out"])
            .arg(&out));
    }
    parts
}

fn merged(parts: &Path, format: &str) -> Vec<u8> {
    ok(gcsim().arg("merge").arg(parts).args(["--format", format]))
}

#[test]
fn a_sharded_plan_merges_to_the_single_plan_for_any_k() {
    let dir = tempfile::tempdir().unwrap();
    for objective in ["mean", "deadline:2.5"] {
        let args = [&PLAN[..], &["--objective", objective, "--top", "7"]].concat();
        let single = |format| ok(gcsim().args(&args).args(["--format", format]));
        let (csv, json, table) = (single("csv"), single("json"), single("table"));
        assert!(String::from_utf8_lossy(&csv).lines().count() > 20);
        // 1, 2 and 3 shards of four sizes, and 6: two shards with none.
        for k in [1, 2, 3, 6] {
            let parts = plan_parts(&dir.path().join(objective.replace(':', "-")), &args, k);
            assert_eq!(merged(&parts, "csv"), csv, "{objective} K={k} csv");
            assert_eq!(merged(&parts, "json"), json, "{objective} K={k} json");
            assert_eq!(merged(&parts, "table"), table, "{objective} K={k} table");
        }
    }
    // Exact values where every candidate has one: nothing simulated.
    let exact = ["plan", "--n", "10..14", "--dist", "exp:rate=1", "--objective", "p99"];
    let single = ok(gcsim().args(exact).args(["--format", "json"]));
    let parts = plan_parts(&dir.path().join("exact"), &exact, 2);
    assert_eq!(merged(&parts, "json"), single);
}

/// `--shard slurm`: the task's shard of the array, for plan and scenario.
#[test]
fn slurm_array_tasks_shard_a_plan_and_a_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let single = ok(gcsim().args(PLAN).args(["--format", "csv"]));
    for task in 10..=12 {
        ok(gcsim()
            .args(PLAN)
            .args(["-q", "--shard", "slurm", "--out"])
            .arg(dir.path().join(format!("p{task}.json")))
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .env("SLURM_ARRAY_TASK_MIN", "10")
            .env("SLURM_ARRAY_TASK_MAX", "12")
            .env("SLURM_ARRAY_TASK_COUNT", "3"));
    }
    assert_eq!(merged(dir.path(), "csv"), single);
    let (one, many) = (dir.path().join("one"), dir.path().join("many"));
    for cwd in [&one, &many] {
        std::fs::create_dir_all(cwd).unwrap();
        scenario(cwd);
    }
    let stdout = ok(&mut scenario_in(&one, &[]));
    for task in 0..=1 {
        ok(scenario_in(&many, &["--shard", "slurm"])
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .env("SLURM_ARRAY_TASK_MIN", "0")
            .env("SLURM_ARRAY_TASK_MAX", "1")
            .env("SLURM_ARRAY_TASK_COUNT", "2"));
    }
    assert_eq!(ok(&mut scenario_in(&many, &["--merge"])), stdout);
    assert_eq!(files_under(&many.join("out/mix")), files_under(&one.join("out/mix")));
}

#[test]
fn plan_parts_that_do_not_make_one_plan_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let parts = plan_parts(dir.path(), &PLAN, 3);
    let part = |i: u64| parts.join(format!("part-{i}.json"));
    let merge = |files: &[PathBuf]| refused(gcsim().arg("merge").args(files));
    let e = merge(&[part(1), part(3)]);
    assert!(e.contains("shard 2/3 is missing (give all 3 shard files)"), "{e}");
    let e = merge(&[part(1)]);
    assert!(e.contains("shards 2-3 of 3 are missing"), "{e}");
    let copy = dir.path().join("copy.json");
    std::fs::copy(part(2), &copy).unwrap();
    let e = merge(&[part(1), part(2), copy.clone(), part(3)]);
    assert!(
        e.contains(&format!(
            "{} and {} are both shard 2/3",
            part(2).display(),
            copy.display()
        )),
        "{e}"
    );
    // A part of the same plan at another seed.
    let other = dir.path().join("other.json");
    ok(gcsim()
        .args(&PLAN[..PLAN.len() - 2])
        .args(["--seed", "6", "-q", "--shard", "2/3", "--out"])
        .arg(&other));
    let e = merge(&[part(1), other.clone(), part(3)]);
    assert!(
        e.contains(&format!(
            "{} and {} are parts of different plans",
            part(1).display(),
            other.display()
        )),
        "{e}"
    );
    // Another split of the same plan.
    let half = dir.path().join("half.json");
    ok(gcsim().args(PLAN).args(["-q", "--shard", "2/2", "--out"]).arg(&half));
    let e = merge(&[part(1), half.clone()]);
    assert!(e.contains("are parts of different splits"), "{e}");
    // An edited number.
    let text = std::fs::read_to_string(part(3)).unwrap();
    let edited = dir.path().join("edited.json");
    let at = text.find("\"mean\":").unwrap() + 7;
    let digit = if &text[at..at + 1] == "1" { "2" } else { "1" };
    std::fs::write(&edited, format!("{}{digit}{}", &text[..at], &text[at + 1..])).unwrap();
    let e = merge(&[part(1), part(2), edited.clone()]);
    assert!(
        e.contains(&format!("{}: the checksum does not match", edited.display())),
        "{e}"
    );
    // A run shard among plan parts.
    let run = dir.path().join("run.json");
    ok(gcsim()
        .args([
            "run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "1000", "-q", "--shard", "1/1", "--out",
        ])
        .arg(&run));
    let e = merge(&[part(1), part(2), part(3), run.clone()]);
    assert!(
        e.contains(&format!("{}: not a gcsim plan shard file", run.display())),
        "{e}"
    );
    let e = refused(gcsim().arg("merge").arg(&parts).args(["--plot", "x.png"]));
    assert!(e.contains("a plan has no figure"), "{e}");
    let e = refused(gcsim().args(["merge", "--partial", "--out", "p.json"]).arg(&parts));
    assert!(e.contains("--partial merges the trial shards of run and sweep"), "{e}");
}

/// Three studies (two drawn together by an overlay), a train and a plan:
/// four units.
fn scenario(dir: &Path) -> PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/breast-cancer.csv");
    let text = format!(
        r#"name = "mix"
description = "every kind of table"
n = 12
dist = "exp:rate=1,p_slow=0.05,slowdown=8"
trials = 3000
seed = 3

[[study]]
label = "a"
load_model = "scaled"
schemes = ["uncoded", "frc", "crc"]
s = "0..3"
figures = [{{ file = "a.svg", metric = "speedup" }}]

[[study]]
label = "b"
load_model = "fixed"
schemes = ["crc"]
s = "0..3"

[[study]]
label = "c"
load_model = "fixed"
schemes = ["ignore"]
s = "1..2"
figures = [{{ file = "c.png", metric = "p99" }}]

[[figure]]
file = "ab.svg"
metric = "mean"
studies = ["b", "a"]

[[train]]
label = "t"
load_model = "scaled"
schemes = ["uncoded", "crc"]
s = 2
problem = "logistic"
data = "{}"
iterations = 30
repeats = 2
target_loss = 0.3
plot = "t.svg"

[[plan]]
label = "pick"
schemes = ["uncoded", "frc", "crc"]
n = "6,12"
objective = "p99"
simulate = true
"#,
        data.display()
    );
    let file = dir.join("s.toml");
    std::fs::write(&file, text).unwrap();
    file
}

/// Every file under `dir`, by its path relative to it.
fn files_under(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = PathBuf::from(path.file_name().unwrap());
        if path.is_dir() {
            out.extend(files_under(&path).into_iter().map(|(p, b)| (name.join(p), b)));
        } else {
            out.insert(name, std::fs::read(&path).unwrap());
        }
    }
    out
}

/// `gcsim scenario s.toml --out-dir out ARGS` in `cwd`.
fn scenario_in(cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = gcsim();
    cmd.current_dir(cwd)
        .args(["scenario", "s.toml", "--out-dir", "out", "-q"])
        .args(args);
    cmd
}

#[test]
fn a_sharded_scenario_merges_to_the_single_run_s_files_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    std::fs::create_dir_all(&single).unwrap();
    scenario(&single);
    let stdout = ok(&mut scenario_in(&single, &["--report"]));
    let expected = files_under(&single.join("out/mix"));
    assert_eq!(expected.len(), 21, "{:?}", expected.keys());
    for k in [2, 3, 6] {
        let cwd = dir.path().join(format!("k{k}"));
        std::fs::create_dir_all(&cwd).unwrap();
        scenario(&cwd);
        for i in 1..=k {
            ok(&mut scenario_in(&cwd, &["--shard", &format!("{i}/{k}")]));
        }
        let merged = ok(&mut scenario_in(&cwd, &["--merge", "--report"]));
        assert_eq!(
            String::from_utf8(merged).unwrap(),
            String::from_utf8(stdout.clone()).unwrap(),
            "K={k}"
        );
        let got = files_under(&cwd.join("out/mix"));
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "K={k}"
        );
        for (name, bytes) in &expected {
            assert!(got[name] == *bytes, "K={k}: {} differs", name.display());
        }
        let parts = std::fs::read_dir(cwd.join("out/mix-shards")).unwrap().count();
        assert_eq!(parts, k as usize);
    }
}

#[test]
fn scenario_parts_that_do_not_make_one_run_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    scenario(cwd);
    let e = refused(&mut scenario_in(cwd, &["--merge"]));
    assert!(e.contains("--merge: cannot list out/mix-shards"), "{e}");
    for i in 1..=3 {
        ok(&mut scenario_in(cwd, &["--shard", &format!("{i}/3")]));
    }
    let parts = cwd.join("out/mix-shards");
    let part = |i: u64| parts.join(format!("part-{i}-of-3.json"));
    let e = refused(&mut scenario_in(cwd, &["--merge", "--trials", "2000"]));
    assert!(
        e.contains("a shard of another scenario file or --trials than this one"),
        "{e}"
    );
    let e = refused(&mut scenario_in(cwd, &["--shard", "1/2", "--report"]));
    assert!(e.contains("--report is written by the merge of the shards"), "{e}");
    let e = refused(gcsim().arg("merge").arg(&parts));
    assert!(e.contains("merge them with gcsim scenario FILE --merge"), "{e}");
    // A duplicate, then a missing part.
    let copy = parts.join("part-2-of-3-copy.json");
    std::fs::copy(part(2), &copy).unwrap();
    let e = refused(&mut scenario_in(cwd, &["--merge"]));
    assert!(e.contains("are both shard 2/3"), "{e}");
    std::fs::remove_file(&copy).unwrap();
    let held = std::fs::read(part(2)).unwrap();
    std::fs::remove_file(part(2)).unwrap();
    let e = refused(&mut scenario_in(cwd, &["--merge"]));
    assert!(e.contains("shard 2/3 is missing (give all 3 shard files)"), "{e}");
    // A part of another split.
    ok(&mut scenario_in(cwd, &["--shard", "2/2"]));
    std::fs::write(part(2), held).unwrap();
    let e = refused(&mut scenario_in(cwd, &["--merge"]));
    assert!(e.contains("are parts of different splits"), "{e}");
    std::fs::remove_file(parts.join("part-2-of-2.json")).unwrap();
    // A file its shard wrote, gone.
    std::fs::remove_file(cwd.join("out/mix/pick.csv")).unwrap();
    let e = refused(&mut scenario_in(cwd, &["--merge"]));
    assert!(e.contains("out/mix/pick.csv is missing, though its shard ran"), "{e}");
}
