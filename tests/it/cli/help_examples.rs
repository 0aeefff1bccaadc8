//! Every example in every subcommand's `--help`, tried as a new user tries
//! it: in a fresh directory holding the repository's `data/` and
//! `scenarios/` and the what-if traces the examples name. An example must
//! either exit with the status its comment states (0, or 1 where it says
//! `exits 1`) or still be running after a second and a half, its flags accepted
//! (a bad flag, value or file is refused at once). Examples that need a
//! file of the user's own (a code matrix, a scenario, shards to merge, a
//! profiler trace) or a pipe are skipped, and counted.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Files only a user has: an example naming one is not run.
const USERS_FILES: [&str; 13] = [
    "my-code.csv",
    "part1.json",
    "part*.json",
    "parts/",
    "done.json",
    "p*.json",
    "plan-*.json",
    "s.toml",
    "all_reduce_perf.txt",
    "rank*.pt.trace.json",
    "job.csv",
    "| ",
    "> ",
];

/// The examples of `gcsim SUB --help`: lines that start `gcsim`, joined
/// across `\` continuations, each with its comment.
fn examples(help: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = help.lines();
    while let Some(line) = lines.next() {
        let Some(start) = line.trim_start().strip_prefix("gcsim ") else {
            continue;
        };
        let mut text = start.to_string();
        while text.trim_end().ends_with('\\') {
            let cut = text.trim_end().len() - 1;
            text.truncate(cut);
            text.push(' ');
            text.push_str(lines.next().unwrap_or("").trim());
        }
        let (args, comment) = text.split_once('#').unwrap_or((&text, ""));
        out.push((args.trim().to_string(), comment.to_string()));
    }
    out
}

fn link(from: &Path, to: &Path) {
    std::os::unix::fs::symlink(from, to).unwrap();
}

#[test]
fn every_help_example_runs_or_is_accepted() {
    let bin = assert_cmd::cargo::cargo_bin("gcsim");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    link(&repo.join("data"), &dir.path().join("data"));
    link(&repo.join("scenarios"), &dir.path().join("scenarios"));
    for name in ["trace-ST.parquet", "meta-ST.yaml", "trace-SE.parquet", "meta-SE.yaml"] {
        link(&repo.join("data/whatif").join(name), &dir.path().join(name));
    }
    let top = Command::new(&bin).arg("--help").output().unwrap();
    let top = String::from_utf8(top.stdout).unwrap();
    let subcommands: Vec<&str> = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        // A name is indented two spaces; its description's wrapped lines more.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&s| s != "help")
        .collect();
    assert!(subcommands.len() >= 12, "{top}");
    let (mut ran, mut skipped) = (0, 0);
    for sub in subcommands {
        let help = Command::new(&bin).args([sub, "--help"]).output().unwrap();
        for (args, comment) in examples(&String::from_utf8(help.stdout).unwrap()) {
            if USERS_FILES.iter().any(|f| args.contains(f)) || args.contains('<') {
                skipped += 1;
                continue;
            }
            let mut child = Command::new(&bin)
                .args(args.split_whitespace())
                .current_dir(dir.path())
                .env("GCSIM_PROGRESS_DELAY_MS", "60000")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let started = Instant::now();
            let status = loop {
                if let Some(status) = child.try_wait().unwrap() {
                    break Some(status);
                }
                if started.elapsed() > Duration::from_millis(1500) {
                    child.kill().unwrap();
                    child.wait().unwrap();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            if let Some(status) = status {
                let mut stderr = String::new();
                std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
                let want = if comment.contains("exits 1") { 1 } else { 0 };
                assert_eq!(status.code(), Some(want), "gcsim {args}: {stderr}");
            }
            ran += 1;
        }
    }
    assert!(ran >= 65 && skipped <= 22, "{ran} run, {skipped} skipped");
}
