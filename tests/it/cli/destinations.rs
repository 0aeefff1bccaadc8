//! Every output is checked before the work starts: an unwritable `--plot`
//! fails at once, like `--out`, and two outputs of a scenario with one file
//! name are refused, naming both.

use std::time::{Duration, Instant};

use super::gcsim;

/// The error line of a run expected to be refused quickly, with exit 2.
fn refused(args: &[&str], dir: &std::path::Path) -> String {
    let start = Instant::now();
    let out = gcsim()
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{args:?} took {:?}",
        start.elapsed()
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    lines[0].to_string()
}

/// `--plot` where no file can be written is refused before a simulation of
/// about half a minute: a path that is a directory, and (on Linux, for root
/// too) a directory that takes no new files.
#[test]
fn an_unwritable_plot_is_refused_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("taken.png")).unwrap();
    let mut plots = vec!["taken.png"];
    if cfg!(target_os = "linux") {
        plots.push("/proc/gcsim-figure.png");
    }
    let long = ["--n", "100", "--s", "5", "--trials", "100000000", "--quiet", "--plot"];
    for plot in plots {
        for command in ["run", "sweep"] {
            let mut args = vec![command];
            if command == "run" {
                args.extend(["--scheme", "crc"]);
            }
            args.extend(long);
            args.push(plot);
            let line = refused(&args, dir.path());
            assert!(line.starts_with(&format!("Error: --plot {plot}")), "{line}");
        }
    }
}

/// Two figures of one file name in a scenario: the second would overwrite
/// the first. Refused before anything runs, naming the file, the line and
/// both studies; nothing is written.
#[test]
fn a_file_name_used_twice_in_a_scenario_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"name = "clash"
n = 8
trials = 100000000
[[study]]
label = "a"
schemes = ["crc"]
s = "0..2"
figures = [{ file = "speedup.png" }]
[[study]]
label = "b"
schemes = ["ignore"]
s = "0..2"
figures = [{ file = "speedup.png", metric = "mean" }]
"#;
    std::fs::write(dir.path().join("clash.toml"), text).unwrap();
    let line = refused(&["scenario", "clash.toml", "--quiet", "--out-dir", "out"], dir.path());
    assert!(
        line.contains("clash.toml:13: key `file`: `speedup.png` of study `b` is also written by study `a`"),
        "{line}"
    );
    assert!(!dir.path().join("out/clash/a.csv").exists());
    // Within one study too.
    let one = text.replace(
        "figures = [{ file = \"speedup.png\" }]",
        "figures = [{ file = \"x.svg\" }, { file = \"x.svg\", metric = \"p99\" }]",
    );
    std::fs::write(dir.path().join("clash.toml"), one).unwrap();
    let line = refused(&["scenario", "clash.toml", "--quiet", "--out-dir", "out"], dir.path());
    assert!(
        line.contains("`x.svg` of study `a` is also written by study `a`"),
        "{line}"
    );
}
