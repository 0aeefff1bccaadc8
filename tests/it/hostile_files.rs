//! Hostile file combinations, each refused (or failed) with one line that
//! names the flags at fault, every file that was there left byte for byte,
//! and no temporary file left behind: two outputs of one command naming one
//! file (by the same text, another spelling, a symbolic or a hard link); an
//! output that is one of the command's inputs; an output with the wrong
//! extension; a read-only target; a `man --out-dir` with a directory in a
//! page's place; a scenario directory another run holds; and a command
//! whose last write fails, which must leave its earlier files unreplaced.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// One hostile command: its arguments (run in the fixture directory), the
/// exit status it must end with, and what its one line of stderr must hold.
struct Case {
    args: &'static [&'static str],
    status: i32,
    names: &'static [&'static str],
}

const fn case(args: &'static [&'static str], status: i32, names: &'static [&'static str]) -> Case {
    Case { args, status, names }
}

const RUN: [&str; 9] = ["run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "200"];

/// Two outputs of one command that are one file.
#[rustfmt::skip]
const SAME_OUTPUT: &[Case] = &[
    case(&["run", "--n", "8", "--scheme", "crc", "--s", "1", "--out", "s.svg", "--format", "csv", "--plot", "s.svg"], 2, &["--out", "--plot"]),
    case(&["sweep", "--n", "8", "--s", "0..2", "--out", "s.svg", "--format", "csv", "--plot", "s.svg"], 2, &["--out", "--plot"]),
    case(&["trace", "t.csv", "--out", "s.svg", "--format", "csv", "--plot", "s.svg"], 2, &["--out", "--plot"]),
    case(&["run", "--n", "8", "--scheme", "crc", "--s", "1", "--out", "r.csv", "--plot", "f.svg", "--plot-data", "./r.csv"], 2, &["--out", "--plot-data"]),
    case(&["run", "--n", "8", "--scheme", "crc", "--s", "1", "--out", "link.csv", "--plot", "f.svg", "--plot-data", "r.csv"], 2, &["--out", "--plot-data"]),
    case(&["run", "--n", "8", "--scheme", "crc", "--s", "1", "--out", "hard.csv", "--plot", "f.svg", "--plot-data", "r.csv"], 2, &["--out", "--plot-data"]),
    case(&["sweep", "--n", "8", "--s", "0..2", "--out", "sub/../r.csv", "--plot", "f.svg", "--plot-data", "r.csv"], 2, &["--out", "--plot-data"]),
    case(&["train", "--n", "4", "--scheme", "crc", "--s", "1", "--out", "o.csv", "--curves", "./o.csv"], 2, &["--out", "--curves"]),
    case(&["train", "--n", "4", "--scheme", "crc", "--s", "1", "--curves", "r.csv", "--plot", "f.svg", "--plot-data", "link.csv"], 2, &["--curves", "--plot-data"]),
    case(&["trace", "t.csv", "--out", "o.csv", "--plot", "f.svg", "--plot-data", "sub/../o.csv"], 2, &["--out", "--plot-data"]),
];

/// An output that is one of the command's inputs.
#[rustfmt::skip]
const INPUT_AS_OUTPUT: &[Case] = &[
    case(&["fit", "t.csv", "--out", "t.csv"], 2, &["FILE", "--out"]),
    case(&["fit", "t.csv", "--out", "./sub/../t.csv"], 2, &["FILE", "--out"]),
    case(&["fit", "t.csv", "--out", "link-t.csv"], 2, &["FILE", "--out"]),
    case(&["fit", "--nccl-tests", "t.csv", "--out", "t.csv"], 2, &["--nccl-tests", "--out"]),
    case(&["fit", "--nccl-tests", "t.csv", "--out", "sub/../t.csv", "--format", "csv"], 2, &["--nccl-tests", "--out"]),
    case(&["run", "--code", "c.csv", "--out", "c.csv"], 2, &["--code", "--out"]),
    case(&["run", "--code", "c.csv", "--plot", "f.svg", "--plot-data", "c.csv"], 2, &["--code", "--plot-data"]),
    case(&["sweep", "--code", "c.csv", "--out", "./c.csv"], 2, &["--code", "--out"]),
    case(&["codes", "--code", "c.csv", "--out", "c.csv"], 2, &["--code", "--out"]),
    case(&["train", "--n", "4", "--scheme", "crc", "--s", "1", "--data", "d.csv", "--curves", "d.csv"], 2, &["--data", "--curves"]),
    case(&["train", "--n", "4", "--scheme", "crc", "--s", "1", "--data", "d.csv", "--out", "d.csv"], 2, &["--data", "--out"]),
    case(&["train", "--n", "4", "--scheme", "crc", "--s", "1", "--data", "d.csv", "--plot", "f.svg", "--plot-data", "d.csv"], 2, &["--data", "--plot-data"]),
    case(&["trace", "t.csv", "--out", "t.csv"], 2, &["FILE", "--out"]),
    case(&["trace", "t.csv", "--plot", "f.svg", "--plot-data", "t.csv"], 2, &["FILE", "--plot-data"]),
    case(&["trace", "import", "--from", "csv", "t.csv", "--out", "t.csv"], 2, &["FILES", "--out"]),
    case(&["run", "--n", "8", "--scheme", "crc", "--s", "1", "--dist", "trace:path=t.csv", "--out", "t.csv"], 2, &["--dist", "--out"]),
    case(&["merge", "r.csv", "--out", "r.csv"], 2, &["FILES", "--out"]),
];

/// An output whose extension is not what is written into it.
#[rustfmt::skip]
const WRONG_EXTENSION: &[Case] = &[
    case(&["trace", "import", "--from", "csv", "t.csv", "--out", "x.png"], 2, &["--out", ".csv"]),
    case(&["trace", "import", "--from", "csv", "t.csv", "--out", "x.json"], 2, &["--out", ".csv"]),
    case(&["trace", "import", "--from", "csv", "t.csv", "--out", "x"], 2, &["--out", ".csv"]),
    case(&["train", "--n", "4", "--scheme", "crc", "--s", "1", "--curves", "x.png"], 2, &["--curves", ".csv"]),
    case(&["train", "--n", "4", "--scheme", "crc", "--s", "1", "--curves", "x.svg"], 2, &["--curves", ".csv"]),
    case(&["run", "--n", "8", "--scheme", "crc", "--s", "1", "--out", "x.png", "--format", "csv"], 2, &["--out x.png", "a figure's extension", ".csv"]),
    case(&["sweep", "--n", "8", "--s", "0..1", "--out", "x.SVG", "--format", "json"], 2, &["--out x.SVG", ".json"]),
    case(&["trace", "t.csv", "--out", "x.pdf", "--format", "table"], 2, &["--out x.pdf", ".txt"]),
];

/// A command whose last file cannot be written (`full.csv` is /dev/full).
#[rustfmt::skip]
const LAST_WRITE_FAILS: &[Case] = &[
    case(&["run", "--n", "8", "--scheme", "crc", "--s", "1", "--trials", "200", "--out", "o.csv", "--plot", "f.svg", "--plot-data", "full.csv"], 1, &["/dev/full"]),
    case(&["sweep", "--n", "8", "--s", "0..2", "--trials", "200", "--out", "o.csv", "--plot", "f.svg", "--plot-data", "full.csv"], 1, &["/dev/full"]),
    case(&["train", "--n", "4", "--scheme", "crc", "--s", "1", "--iterations", "20", "--repeats", "2", "--out", "o.csv", "--curves", "r.csv", "--plot", "f.svg", "--plot-data", "full.csv"], 1, &["/dev/full"]),
    case(&["trace", "t.csv", "--out", "o.csv", "--plot", "f.svg", "--plot-data", "full.csv"], 1, &["/dev/full"]),
    case(&["fit", "t.csv", "--out", "full.csv"], 1, &["/dev/full"]),
];

/// The fixture: files with known bytes, links, /dev/full as `full.csv`.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    fs::copy(data.join("trace-llm-8w.csv"), p("t.csv")).unwrap();
    fs::copy(data.join("breast-cancer.csv"), p("d.csv")).unwrap();
    fs::write(p("c.csv"), "1,1,0\n0,1,1\n1,0,1\n").unwrap();
    for name in ["r.csv", "o.csv", "f.svg", "s.svg"] {
        fs::write(p(name), format!("previous {name}\n")).unwrap();
    }
    fs::create_dir(p("sub")).unwrap();
    fs::hard_link(p("r.csv"), p("hard.csv")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink("r.csv", p("link.csv")).unwrap();
        symlink("t.csv", p("link-t.csv")).unwrap();
        symlink("f.svg", p("link-f.svg")).unwrap();
        symlink("/dev/full", p("full.csv")).unwrap();
    }
    dir
}

/// Every entry of `dir` (recursively) with its bytes (a link: its target).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        let bytes = if kind.is_symlink() {
            fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes()
        } else if kind.is_dir() {
            out.extend(snapshot(&path));
            b"<dir>".to_vec()
        } else {
            fs::read(&path).unwrap()
        };
        out.insert(path, bytes);
    }
    out
}

/// Runs `case` in a fresh fixture and checks its status, its one line of
/// error naming every flag of `case.names` (beside any warnings about the
/// data), and that every file is as it was.
fn check(case: &Case) -> Result<(), String> {
    let dir = fixture();
    let before = snapshot(dir.path());
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .current_dir(dir.path())
        .args(case.args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cmd = case.args.join(" ");
    if out.status.code() != Some(case.status) {
        return Err(format!(
            "{cmd}: status {:?}, not {}: {stderr}",
            out.status.code(),
            case.status
        ));
    }
    if case.status == 0 {
        return Ok(());
    }
    // Warnings about the data (a short trace) may come before the error.
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("warning: ")).collect();
    if lines.len() != 1 || !lines[0].starts_with("Error: ") {
        return Err(format!("{cmd}: not one error line: {stderr}"));
    }
    if let Some(flag) = case.names.iter().find(|f| !lines[0].contains(*f)) {
        return Err(format!("{cmd}: the line does not name {flag}: {stderr}"));
    }
    let after = snapshot(dir.path());
    if after != before {
        let changed: Vec<_> = after
            .iter()
            .filter(|(p, b)| before.get(*p) != Some(b))
            .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let gone: Vec<_> = before.keys().filter(|p| !after.contains_key(*p)).collect();
        return Err(format!("{cmd}: files changed {changed:?}, gone {gone:?}"));
    }
    Ok(())
}

/// Runs a table of cases; fails with every case that failed.
fn table(cases: &[Case]) -> usize {
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

#[test]
fn two_outputs_of_one_command_may_not_be_one_file() {
    table(SAME_OUTPUT);
}

#[test]
fn an_output_may_not_be_an_input() {
    table(INPUT_AS_OUTPUT);
}

#[test]
fn outputs_written_as_csv_need_a_csv_name() {
    table(WRONG_EXTENSION);
}

/// The last file fails: the earlier ones, complete, are not moved into place.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_last_write_leaves_every_earlier_file() {
    table(LAST_WRITE_FAILS);
}

/// A read-only `--out` (`--curves`, `--plot`) is refused, as `>` refuses it,
/// for a user who may not write it; root may, as with `>`.
#[cfg(target_os = "linux")]
#[test]
fn a_read_only_target_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let root = fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    let targets: [(&[&str], &str); 4] = [
        (&RUN, "--out"),
        (&["fit", "../t.csv"], "--out"),
        (
            &["train", "--n", "4", "--scheme", "crc", "--s", "1", "--iterations", "10"],
            "--curves",
        ),
        (&RUN, "--plot"),
    ];
    for (args, flag) in targets {
        let dir = tempfile::tempdir().unwrap();
        fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("data/trace-llm-8w.csv"),
            dir.path().join("t.csv"),
        )
        .unwrap();
        let work = dir.path().join("w");
        fs::create_dir(&work).unwrap();
        fs::set_permissions(&work, fs::Permissions::from_mode(0o777)).unwrap();
        let name = if flag == "--plot" { "ro.svg" } else { "ro.csv" };
        let target = work.join(name);
        fs::write(&target, "read-only\n").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o444)).unwrap();
        let mut cmd = if root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"]);
            c.arg(assert_cmd::cargo::cargo_bin("gcsim"));
            c
        } else {
            Command::cargo_bin("gcsim").unwrap()
        };
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let out = match cmd.current_dir(&work).args(args).args([flag, name, "--quiet"]).output() {
            Ok(out) => out,
            Err(_) if root => return, // no setpriv: nothing to run as another user
            Err(e) => panic!("{e}"),
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {flag}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains("Permission denied"),
            "{stderr}"
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "read-only\n");
        assert_eq!(fs::read_dir(&work).unwrap().count(), 1, "only the target");
    }
}

/// A directory where a page goes is refused before any page is written.
#[test]
fn man_checks_every_page_before_writing_one() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("gcsim-run.1")).unwrap();
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--out-dir") && stderr.contains("gcsim-run.1 is a directory where gcsim writes the file"),
        "{stderr}"
    );
    assert!(stderr.contains("remove it or give another --out-dir"), "{stderr}");
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, vec!["gcsim-run.1"]);
}

/// A scenario's directory that another run holds is refused at once.
#[test]
fn a_scenario_directory_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    fs::write(
        &file,
        "name = \"locked\"\nn = 8\ntrials = 200\n\n[[study]]\nlabel = \"a\"\nschemes = [\"crc\"]\ns = \"0..1\"\n",
    )
    .unwrap();
    let held = dir.path().join("out/locked");
    fs::create_dir_all(&held).unwrap();
    let lock = fs::File::open(&held).unwrap();
    lock.lock().unwrap();
    let run = || {
        Command::cargo_bin("gcsim")
            .unwrap()
            .args(["scenario"])
            .arg(&file)
            .arg("--out-dir")
            .arg(dir.path().join("out"))
            .arg("--quiet")
            .output()
            .unwrap()
    };
    let out = run();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--out-dir") && stderr.contains("another gcsim run"),
        "{stderr}"
    );
    assert_eq!(fs::read_dir(&held).unwrap().count(), 0);
    drop(lock);
    assert!(run().status.success());
}

/// How many hostile cases the tables hold, as the report counts them.
#[test]
fn the_tables_hold_every_case() {
    let count = SAME_OUTPUT.len() + INPUT_AS_OUTPUT.len() + WRONG_EXTENSION.len() + LAST_WRITE_FAILS.len();
    assert_eq!(count, 40);
}
