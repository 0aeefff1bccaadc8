//! Where output goes: `--out` writes atomically (a failed or killed run
//! leaves the previous file and no temporary file), and a closed pipe is
//! quiet success.

use predicates::prelude::*;

use super::gcsim;

#[test]
fn out_writes_the_file_in_the_extension_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    gcsim()
        .args([
            "run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "100", "--out",
        ])
        .arg(&path)
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote 1 row to"));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["rows"][0]["k"], 7);
    // No temporary file is left behind, and the file is not private: it has
    // the mode of any new file (temporary files are created private).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let elsewhere = tempfile::tempdir().unwrap();
        let reference = elsewhere.path().join("reference");
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        std::fs::File::create(&reference).unwrap();
        assert_eq!(mode(&path), mode(&reference));
    }
}

#[test]
fn a_failed_run_leaves_the_previous_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    std::fs::write(&path, "previous").unwrap();
    gcsim()
        .args(["run", "--n", "8", "--scheme", "frc", "--s", "2", "--out"])
        .arg(&path)
        .assert()
        .code(2);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
}

#[test]
fn broken_pipe_is_quiet_success() {
    use std::io::Read;
    use std::process::{Command as Std, Stdio};
    let bin = assert_cmd::cargo::cargo_bin("gcsim");
    let mut child = Std::new(bin)
        .args([
            "sweep",
            "--n",
            "10",
            "--s",
            "0..9",
            "--scheme",
            "ignore,crc,mds",
            "--trials",
            "2000",
            "--format",
            "csv",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close our end before the output is complete.
    let mut stdout = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    stdout.read_exact(&mut byte).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(!err.contains("Error"), "{err}");
}

/// A run killed before it finishes leaves the previous output as it was and
/// no temporary file behind: the result is written, to a temporary file
/// renamed into place, only once complete.
#[test]
fn a_killed_run_leaves_the_previous_file_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    std::fs::write(&path, "previous").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("gcsim");
    let mut child = std::process::Command::new(bin)
        .args([
            "sweep",
            "--n",
            "100",
            "--s",
            "0..50",
            "--trials",
            "500000000",
            "--quiet",
            "--out",
        ])
        .arg(&path)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(child.try_wait().unwrap().is_none(), "still running when killed");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("r.csv")]);
}

/// A result that cannot be written once the work is done is a failure, not a
/// usage error: exit 1, the file named, nothing left behind. `/dev/full`
/// passes every check made before the work (a writable device) and fails
/// only when written, for root too. A name longer than the file system
/// allows is found by those checks: exit 2, naming the flag.
#[test]
fn a_failed_write_exits_1_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("{}.csv", "a".repeat(300));
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/data/trace-llm-8w.csv");
    let commands: [&[&str]; 4] = [
        &["plan", "--n", "10", "--trials", "1000", "--quiet"],
        &["sweep", "--n", "10", "--s", "0..2", "--trials", "1000", "--quiet"],
        &["codes", "--scheme", "crc", "--n", "6", "--s", "1"],
        &["fit", trace],
    ];
    for args in commands {
        let out = gcsim()
            .current_dir(dir.path())
            .args(args)
            .args(["--out", &name])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let error = format!("Error: --out {name}: ");
        assert!(stderr.lines().any(|l| l.starts_with(&error)), "{args:?}: {stderr}");
        if cfg!(target_os = "linux") {
            let out = gcsim()
                .current_dir(dir.path())
                .args(args)
                .args(["--format", "csv", "--out", "/dev/full"])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(
                stderr.lines().any(|l| l.starts_with("Error: cannot write /dev/full: ")),
                "{args:?}: {stderr}"
            );
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing left behind");
}

/// A scenario of two studies, each with a figure, run with 1000 trials.
const TWO_STUDIES: &str = r#"
name = "two"
description = "two studies"
n = 8
trials = 1000
[[study]]
label = "a"
schemes = ["crc"]
s = "0..2"
figures = [{ file = "a.svg" }]
[[study]]
label = "b"
schemes = ["ignore"]
s = "0..2"
figures = [{ file = "b.svg" }]
"#;

/// Runs `args` with a stdout whose reader has gone before anything is
/// printed, as `| head -1` is once it has its line; returns the status and
/// stderr.
fn with_closed_stdout(args: &[&str], dir: &std::path::Path) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::process::{Command as Std, Stdio};
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("gcsim"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (child.wait().unwrap(), err)
}

/// `gcsim scenario FILE | head -1`: a closed stdout stops the printing, not
/// the files; every study's CSV, JSON and figure is written, and the run
/// succeeds.
#[test]
fn a_closed_stdout_stops_the_printing_not_the_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.toml"), TWO_STUDIES).unwrap();
    let (status, err) = with_closed_stdout(&["scenario", "two.toml", "--quiet", "--out-dir", "out"], dir.path());
    assert!(status.success(), "{status:?}: {err}");
    assert!(!err.contains("Error"), "{err}");
    for name in ["a.csv", "a.json", "a.svg", "b.csv", "b.json", "b.svg"] {
        let path = dir.path().join("out/two").join(name);
        assert!(path.exists(), "{} missing; stderr: {err}", path.display());
    }
    // Likewise the figure of a sweep printed to stdout.
    let (status, err) = with_closed_stdout(
        &[
            "sweep", "--n", "8", "--s", "0..2", "--trials", "1000", "--quiet", "--plot", "s.svg",
        ],
        dir.path(),
    );
    assert!(status.success(), "{status:?}: {err}");
    assert!(dir.path().join("s.svg").exists(), "stderr: {err}");
}
