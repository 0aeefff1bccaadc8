//! Figures and scenario files end to end.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// Width and height of a PNG, from a full decode of its header and frames.
fn png_size(path: &Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder
        .read_info()
        .unwrap_or_else(|e| panic!("{}: not a PNG: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    // Not a blank image: more than one colour in the pixels.
    let first = &buf[..3];
    assert!(
        buf.chunks(frame.line_size / frame.width as usize)
            .any(|p| &p[..3] != first),
        "blank image"
    );
    (frame.width, frame.height)
}

#[test]
fn every_shipped_scenario_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios: Vec<_> = std::fs::read_dir("scenarios")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(scenarios.len() >= 3);
    for file in scenarios.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
        let text = std::fs::read_to_string(file).unwrap();
        let scenario = gcsim_figures::scenario::Scenario::from_str(file, &text, Some(3000)).unwrap();
        gcsim()
            .args(["scenario", "--trials", "3000", "--quiet", "--out-dir"])
            .arg(dir.path())
            .arg(file)
            .assert()
            .success()
            .stdout(predicate::str::contains("# wrote"));
        let out = dir.path().join(&scenario.name);
        for st in &scenario.studies {
            let csv = std::fs::read_to_string(out.join(format!("{}.csv", st.label))).unwrap();
            assert!(csv.starts_with("scheme,n,s,m,k,load"), "{csv}");
            assert_eq!(csv.lines().count(), st.study.schemes().len() + 1);
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join(format!("{}.json", st.label))).unwrap())
                    .unwrap();
            assert_eq!(json["config"]["study"], format!("{}/{}", scenario.name, st.label));
            assert_eq!(json["config"]["trials"], 3000);
            for f in &st.figures {
                let path = out.join(&f.file);
                // The plotted series beside each figure.
                let data =
                    std::fs::read_to_string(out.join(gcsim_figures::scenario::figure_data_file(&f.file))).unwrap();
                assert!(data.starts_with("figure,series,scheme,kind,segment,x,y,"), "{data}");
                if f.file.ends_with(".png") {
                    assert_eq!(png_size(&path), gcsim_figures::plot::SIZE, "{}", path.display());
                }
            }
        }
        // Training studies keep their repeats whatever --trials says.
        for tr in &scenario.trains {
            let csv = std::fs::read_to_string(out.join(format!("{}.csv", tr.label))).unwrap();
            assert!(csv.starts_with("strategy,exact,repeats,"), "{csv}");
            assert_eq!(csv.lines().count(), tr.study.schemes().len() + 1);
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join(format!("{}.json", tr.label))).unwrap())
                    .unwrap();
            assert_eq!(json["config"]["study"], format!("{}/{}", scenario.name, tr.label));
            assert_eq!(json["config"]["repeats"], tr.study.trials());
            assert!(out.join(tr.curves_file()).exists());
            if let Some(file) = &tr.plot {
                assert!(
                    out.join(gcsim_figures::scenario::figure_data_file(file)).exists(),
                    "{file}"
                );
            }
            for file in tr.plot.iter().filter(|f| f.ends_with(".png")) {
                assert_eq!(png_size(&out.join(file)), gcsim_figures::plot::SIZE, "{file}");
            }
        }
    }
}

#[test]
fn svg_figures_carry_their_labels() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("s.svg");
    gcsim()
        .args([
            "sweep",
            "--n",
            "20",
            "--s",
            "0..4",
            "--scheme",
            "uncoded,crc",
            "--trials",
            "2000",
            "--format",
            "csv",
            "--plot",
        ])
        .arg(&svg)
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote figure"));
    let text = std::fs::read_to_string(&svg).unwrap();
    for label in [
        "straggler tolerance s",
        "speedup of the mean over uncoded",
        "n=20",
        "crc",
        "uncoded",
        "2000 trials",
    ] {
        assert!(text.contains(label), "missing `{label}`");
    }
    let mean = dir.path().join("m.svg");
    gcsim()
        .args([
            "sweep",
            "--n",
            "20",
            "--s",
            "2",
            "--m",
            "1..4",
            "--scheme",
            "comm-efficient",
            "--trials",
            "2000",
        ])
        .args(["--format", "csv", "--plot-metric", "mean", "--plot"])
        .arg(&mean)
        .assert()
        .success();
    let text = std::fs::read_to_string(&mean).unwrap();
    assert!(text.contains("message split m") && text.contains("mean iteration time (unit of --dist)"));
}

#[test]
fn run_plot_draws_the_survival_function() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("r.png");
    gcsim()
        .args([
            "run", "--n", "30", "--scheme", "frc", "--s", "4", "--trials", "5000", "--format", "csv", "--plot",
        ])
        .arg(&png)
        .assert()
        .success();
    assert_eq!(png_size(&png), gcsim_figures::plot::SIZE);
    let svg = dir.path().join("r.svg");
    gcsim()
        .args([
            "run", "--n", "30", "--scheme", "frc", "--s", "4", "--trials", "5000", "--format", "csv", "--plot",
        ])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("P(T &gt; t)") || text.contains("P(T > t)"), "y label");
    assert!(text.contains("iteration time t (unit of --dist)"));
}

#[test]
fn plot_and_output_directory_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--plot".into(), "x.jpg".into()],
            "must be a .png, .svg or .pdf file",
        ),
        (
            vec!["--plot".into(), "/nonexistent-dir/x.png".into()],
            "the directory /nonexistent-dir does not exist",
        ),
    ];
    for (extra, expected) in cases {
        gcsim()
            .args(["sweep", "--n", "10", "--s", "0..2"])
            .args(&extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
    // A missing output directory is created, nested.
    let nested = dir.path().join("a/b");
    gcsim()
        .args([
            "scenario",
            "scenarios/seed-literature.toml",
            "--trials",
            "500",
            "-q",
            "--out-dir",
        ])
        .arg(&nested)
        .assert()
        .success();
    assert!(nested.join("seed-literature/crc.csv").exists());
    // One that cannot be created: its parent is a file.
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    gcsim()
        .args([
            "scenario",
            "scenarios/seed-literature.toml",
            "--trials",
            "500",
            "--out-dir",
        ])
        .arg(file.join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--out-dir: cannot create"));
}

#[test]
fn scenario_file_errors_name_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\nn = 10\ncolour = \"red\"\n[[study]]\nlabel = \"a\"\nschemes = [\"crc\"]\ns = 1\n",
    )
    .unwrap();
    gcsim()
        .arg("scenario")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.toml:3: unknown field `colour`"));
    let cases: [(&[u8], &str); 3] = [
        (b"", "the scenario is empty"),
        (b"name = \"\xff\"", "not UTF-8"),
        (b"name = [", "bad.toml:1:"),
    ];
    for (bytes, expected) in cases {
        std::fs::write(&bad, bytes).unwrap();
        gcsim()
            .arg("scenario")
            .arg(&bad)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
    gcsim()
        .args(["scenario", "/nonexistent.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent.toml: cannot read the scenario"));
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    let out = gcsim()
        .args([
            "sweep", "--n", "100", "--s", "0..50", "--trials", "600000", "--format", "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("trials ("), "{stderr}");
}

/// What `gcsim ARGS` writes to its terminal (a pseudo-terminal from
/// util-linux `script`), stdout sent to /dev/null.
fn on_a_terminal(args: &str) -> String {
    if std::process::Command::new("script").arg("--version").output().is_err() {
        panic!("util-linux `script` is needed to give the binary a terminal");
    }
    let bin = assert_cmd::cargo::cargo_bin("gcsim");
    // The bar from the first trials, so the test does not depend on how
    // fast this machine runs them.
    let cmd = format!("GCSIM_PROGRESS_DELAY_MS=0 {} {args} > /dev/null", bin.display());
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{args}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// On a terminal, a run past the bar's delay shows the bar with its rate
/// and ETA; `--quiet` hides it.
#[test]
fn progress_bar_on_a_terminal() {
    let args = "sweep --n 100 --s 0..50 --dist lognormal:mu=0,sigma=1 --trials 300000 --format csv";
    let shown = on_a_terminal(args);
    assert!(
        shown.contains("simulating") && shown.contains("trials (") && shown.contains("ETA"),
        "{shown}"
    );
    assert!(!on_a_terminal(&format!("{args} --quiet")).contains("simulating"));
}

/// `gcsim codes` counts its decodings (one SVD each, seconds apiece at the
/// largest n), so a long check shows that it is working; `--quiet` hides it.
#[test]
fn codes_shows_its_decodings_on_a_terminal() {
    let args = "codes --scheme mds --n 500 --k 499 --limit 30 --format csv";
    let shown = on_a_terminal(args);
    // 30 random patterns and the 16 end-to-end sets.
    assert!(
        shown.contains("decoding") && shown.contains("/46 straggler sets (") && shown.contains("ETA"),
        "{shown}"
    );
    assert!(!on_a_terminal(&format!("{args} --quiet")).contains("decoding"));
}
