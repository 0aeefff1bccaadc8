//! The keys of a hybrid-parallel job in scenario files: a `[[study]]`
//! with a layout writes the bytes of `gcsim sweep --parallel ...`, from the
//! file's keys and from its own.

use assert_cmd::Command;

use super::errors::assert_usage_error;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// The CSV of `gcsim sweep` with `args`.
fn sweep_csv(args: &[&str]) -> Vec<u8> {
    let out = gcsim()
        .arg("sweep")
        .args(args)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Three studies: `file` takes every pipeline key from the top of the
/// file; `own` sets its own layout (its n is its ranks, not the file's 16)
/// and overrides some keys, the stage work written as a string; `chunks`
/// runs the interleaved schedule.
const PIPELINES: &str = r#"name = "pipes"
n = 16
dist = "lognormal:mu=0,sigma=0.3,p_slow=0.05,slowdown=2"
trials = 3000
seed = 7
parallel = "dp=4,pp=2,tp=2"
microbatches = 4
schedule = "gpipe"
backward_ratio = 1.5
p2p_time = 5e-2
stage_work = [1, 1.25]
microbatch_work = "lognormal:mu=0,sigma=0.2"
optimizer_time = 0.2

[[study]]
label = "file"
schemes = ["ignore", "frc"]
s = [0, 1]

[[study]]
label = "own"
schemes = ["uncoded", "crc"]
s = 1
parallel = "dp=2,pp=3"
n = 6
schedule = "1f1b"
stage_work = "1,1,1.5"

[[study]]
label = "chunks"
schemes = ["uncoded", "frc"]
s = 1
parallel = "dp=2,pp=2"
n = 4
schedule = "interleaved:2"
stage_work = [1, 1.25]
"#;

/// Each study's CSV is the bytes of the sweep with the same flags.
#[test]
fn a_study_with_a_layout_writes_the_sweep_s_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pipes.toml");
    std::fs::write(&file, PIPELINES).unwrap();
    let out = gcsim()
        .arg("scenario")
        .arg(&file)
        .arg("--out-dir")
        .arg(dir.path())
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let common = [
        "--dist",
        "lognormal:mu=0,sigma=0.3,p_slow=0.05,slowdown=2",
        "--trials",
        "3000",
        "--seed",
        "7",
        "--microbatches",
        "4",
        "--backward-ratio",
        "1.5",
        "--p2p-time",
        "0.05",
        "--microbatch-work",
        "lognormal:mu=0,sigma=0.2",
        "--optimizer-time",
        "0.2",
    ];
    let from_file = [
        "--parallel",
        "dp=4,pp=2,tp=2",
        "--schedule",
        "gpipe",
        "--stage-work",
        "1,1.25",
        "--scheme",
        "ignore,frc",
        "--s",
        "0,1",
    ];
    let own = [
        "--parallel",
        "dp=2,pp=3",
        "--schedule",
        "1f1b",
        "--stage-work",
        "1,1,1.5",
        "--scheme",
        "uncoded,crc",
        "--s",
        "1",
    ];
    let chunks = [
        "--parallel",
        "dp=2,pp=2",
        "--schedule",
        "interleaved:2",
        "--stage-work",
        "1,1.25",
        "--scheme",
        "uncoded,frc",
        "--s",
        "1",
    ];
    for (label, flags) in [("file", from_file), ("own", own), ("chunks", chunks)] {
        let scenario = std::fs::read(dir.path().join(format!("pipes/{label}.csv"))).unwrap();
        let sweep = sweep_csv(&[&common[..], &flags[..]].concat());
        assert!(
            String::from_utf8_lossy(&sweep).contains("bubble_fraction"),
            "a pipeline's columns"
        );
        assert_eq!(
            String::from_utf8_lossy(&scenario),
            String::from_utf8_lossy(&sweep),
            "study `{label}`"
        );
    }
}

/// From the binary: an n that disagrees with the layout, as the command
/// line says it, in the file's spelling, before anything runs.
#[test]
fn n_must_be_the_layout_s_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("n.toml");
    let text = PIPELINES.replace("n = 6", "n = 7");
    std::fs::write(&file, text).unwrap();
    let out_dir = dir.path().to_str().unwrap();
    assert_usage_error(
        &["scenario", file.to_str().unwrap(), "--out-dir", out_dir],
        None,
        &[&format!(
            "{}:25: key `n` 7 but key `parallel` dp=2,pp=3,tp=1 has 6 ranks; drop `n` or make them agree",
            file.display()
        )],
    );
    assert!(!dir.path().join("pipes/file.csv").exists(), "nothing ran");
}
