//! [[train]] tables of scenario files: a training comparison rerun from one
//! file, its four outputs, and its errors placed on the key at fault.

use std::path::Path;

use assert_cmd::Command;

use super::errors::assert_usage_error;

fn gcsim() -> Command {
    Command::cargo_bin("gcsim").unwrap()
}

/// A study and a small training comparison on synthetic data.
const MIXED: &str = r#"name = "mixed"
n = 4
dist = "exp:rate=1,p_slow=0.1,slowdown=4"
trials = 2000
seed = 5

[[study]]
label = "sweep"
schemes = ["uncoded", "crc"]
s = 1

[[train]]
label = "tta"
schemes = ["uncoded", "crc", "k-async"]
s = 1
data = "synthetic:rows=200,features=3"
iterations = 30
repeats = 3
target_metric = 0.8
plot = "tta.png"
"#;

/// The header of a training result's CSV.
const HEADER: &str = "strategy,exact,repeats,reached,time_to_target,time_to_target_ci_low,time_to_target_ci_high,iterations_to_target,time_per_iteration,final_loss,final_metric,final_time,diverged,stalled";

/// Runs the scenario `text` written to `dir/<file>` from `cwd`, into `dir/out`.
fn run(dir: &Path, file: &str, text: &str, cwd: &Path, extra: &[&str]) -> String {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let out = gcsim()
        .current_dir(cwd)
        .arg("scenario")
        .arg(&path)
        .arg("--out-dir")
        .arg(dir.join("out"))
        .arg("--quiet")
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_train_table_writes_its_results_curves_and_figure() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = run(dir.path(), "mixed.toml", MIXED, dir.path(), &[]);
    assert!(stdout.contains("# gcsim train: logistic on synthetic"), "{stdout}");
    assert!(stdout.contains("first to target"), "{stdout}");
    let out = dir.path().join("out/mixed");
    // The study ran as before.
    let sweep = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert!(sweep.starts_with("scheme,n,s,m,k,load"), "{sweep}");
    let csv = std::fs::read_to_string(out.join("tta.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], HEADER);
    assert_eq!(lines.len(), 1 + 3, "{csv}");
    assert!(lines[1].starts_with("uncoded,true,3,"), "{csv}");
    assert!(lines[3].starts_with("k-async K=3,false,3,"), "{csv}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tta.json")).unwrap()).unwrap();
    assert_eq!(json["config"]["command"], "scenario");
    assert_eq!(json["config"]["study"], "mixed/tta");
    assert_eq!(json["config"]["repeats"], 3);
    assert_eq!(json["config"]["iterations"], 30);
    assert_eq!(json["config"]["seed"], 5);
    assert_eq!(json["config"]["dist"], "exp:rate=1,p_slow=0.1,slowdown=4");
    assert_eq!(json["config"]["targets"]["metric"], 0.8);
    assert_eq!(json["rows"].as_array().unwrap().len(), 3);
    assert!(json.get("verdict").is_some(), "{json}");
    let curves = std::fs::read_to_string(out.join("tta-curves.csv")).unwrap();
    let mut curve_lines = curves.lines();
    assert_eq!(
        curve_lines.next().unwrap(),
        "strategy,repeat,iteration,time,loss,test_accuracy"
    );
    // Each configuration's repeats, each from iteration 0 to 30.
    assert_eq!(curve_lines.count(), 3 * 3 * 31);
    let png = std::fs::read(out.join("tta.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    // The same as `gcsim train` with the same flags, row for row.
    let cli = gcsim()
        .args(["train", "--n", "4", "--dist", "exp:rate=1,p_slow=0.1,slowdown=4"])
        .args(["--scheme", "uncoded,crc,k-async", "--s", "1"])
        .args(["--data", "synthetic:rows=200,features=3", "--iterations", "30"])
        .args(["--repeats", "3", "--target-metric", "0.8", "--seed", "5"])
        .args(["--format", "csv", "--quiet"])
        .output()
        .unwrap();
    assert!(cli.status.success());
    assert_eq!(String::from_utf8(cli.stdout).unwrap(), csv);
}

#[test]
fn a_scenario_of_trains_only_runs_and_trials_leave_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"name = "only"
n = 4
iterations = 7   # the studies' iterations: not a train's

[[train]]
label = "ls"
schemes = ["crc"]
s = 1
problem = "least-squares"
data = "synthetic:rows=100,features=2"
iterations = 10
repeats = 2
step = 0.1
schedule = "inv-sqrt"
l2 = 0.01
test_fraction = 0.25
"#;
    let stdout = run(dir.path(), "only.toml", text, dir.path(), &["--trials", "50"]);
    assert!(stdout.contains("least-squares"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/only/ls.json")).unwrap()).unwrap();
    let config = &json["config"];
    assert_eq!(config["repeats"], 2, "--trials is for studies");
    assert_eq!(config["iterations"], 10);
    assert_eq!(config["step_source"], "step");
    assert_eq!(config["schedule"], "inv-sqrt");
    assert_eq!(config["l2"], 0.01);
    assert_eq!(config["test_rows"], 25);
    assert_eq!(config["metric"], "test_mse");
    for file in ["ls.csv", "ls-curves.csv"] {
        assert!(dir.path().join("out/only").join(file).exists(), "{file}");
    }
}

/// A data path is relative to the scenario file, as a trace path is, so
/// the scenario runs from any working directory.
#[test]
fn train_data_is_found_from_the_scenario_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::read_to_string(format!("{}/data/breast-cancer.csv", env!("CARGO_MANIFEST_DIR"))).unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/bc.csv"), data).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let text = r#"name = "rel"
n = 4
[[train]]
label = "bc"
schemes = ["uncoded"]
data = "../data/bc.csv"
iterations = 5
repeats = 1
"#;
    run(dir.path(), "scenarios/rel.toml", text, elsewhere.path(), &[]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/rel/bc.json")).unwrap()).unwrap();
    assert_eq!(json["config"]["features"], 30);
    // Relative to the scenario, not to the working directory.
    let moved = text.replace("../data/bc.csv", "data/bc.csv");
    std::fs::write(dir.path().join("scenarios/rel.toml"), moved).unwrap();
    assert_usage_error(
        &["scenario", "scenarios/rel.toml", "--out-dir", "out"],
        Some(dir.path()),
        &[
            "scenarios/rel.toml:6: train `bc`:",
            "scenarios/data/bc.csv: cannot read the data",
        ],
    );
}

#[test]
fn train_table_errors_name_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    // Line 13 is `label = "tta"`, 16 `data`, 17 `iterations`, 18 `repeats`.
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            MIXED.replace("repeats = 3", "repeats = 3\ncolour = 1"),
            vec!["bad.toml:19:", "unknown field `colour`"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 3\nl2 = -1"),
            vec!["bad.toml:19: train `tta`: l2 -1 is out of range; accepted: a finite number >= 0"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 3\ntest_fraction = 1"),
            vec!["bad.toml:19:", "test_fraction 1 is out of range"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 3\nstep = 0"),
            vec!["bad.toml:19:", "step 0 is out of range"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 3\nschedule = \"fast\""),
            vec!["bad.toml:19: key `schedule`: unknown schedule `fast`"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 3\nproblem = \"svm\""),
            vec!["bad.toml:19: key `problem`: unknown problem `svm`"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 3\ntarget = \"y\""),
            vec!["bad.toml:19:", "target names a column of a CSV file"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 3\ntarget_loss = nan"),
            vec!["bad.toml:19:", "target_loss NaN is out of range"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 0"),
            vec!["bad.toml:18: key `repeats`: 0 is out of range"],
        ),
        (
            MIXED.replace("iterations = 30", "iterations = 0"),
            vec!["bad.toml:17: key `iterations`: 0 is out of range"],
        ),
        (
            MIXED.replace("synthetic:rows=200,features=3", "nope.csv"),
            vec!["bad.toml:16: train `tta`:", "nope.csv: cannot read the data"],
        ),
        (
            MIXED.replace("synthetic:rows=200,features=3", "synthetic:rows=0"),
            vec!["bad.toml:16: key `data`:", "rows"],
        ),
        (
            MIXED.replace("schemes = [\"uncoded\", \"crc\", \"k-async\"]\n", ""),
            vec!["bad.toml:", "missing field `schemes`"],
        ),
        (
            MIXED.replace("label = \"tta\"", "label = \"sweep\""),
            vec!["bad.toml:13: key `label`: `sweep` is used by a study and a train"],
        ),
        (
            MIXED.replace("label = \"tta\"", "label = \"../x\""),
            vec!["bad.toml:13: key `label`:"],
        ),
        (
            MIXED.replace("plot = \"tta.png\"", "plot = \"tta.jpg\""),
            vec!["bad.toml:20: key `plot`: `tta.jpg` must be a plain .png, .svg or .pdf file name"],
        ),
        // A study's file of the same name as a train's curves.
        (
            MIXED.replace("label = \"sweep\"", "label = \"tta-curves\""),
            vec!["bad.toml:13: key `label`: `tta-curves.csv` of train `tta` is also written by study `tta-curves`"],
        ),
        (
            MIXED.replace("[[study]]", "[[study]]\nfigures = [{ file = \"tta.png\" }]"),
            vec!["bad.toml:21: key `plot`: `tta.png` of train `tta` is also written by study `sweep`"],
        ),
        (
            MIXED.replace("s = 1\ndata", "s = 9\ndata"),
            vec!["bad.toml:15: train `tta`:", "s 9 is out of range"],
        ),
        (
            MIXED.replace("repeats = 3", "repeats = 3\nload_model = \"quadratic\""),
            vec!["bad.toml:19: key `load_model`: unknown load model `quadratic`"],
        ),
        (
            MIXED
                .replace("iterations = 30", "iterations = 1000000")
                .replace("repeats = 3", "repeats = 100"),
            vec!["bad.toml:17: train `tta`:", "iterations 1000000"],
        ),
    ];
    for (text, expected) in cases {
        std::fs::write(dir.path().join("bad.toml"), text).unwrap();
        assert_usage_error(
            &["scenario", "bad.toml", "--out-dir", "out"],
            Some(dir.path()),
            &expected,
        );
    }
    assert!(!dir.path().join("out/mixed").join("sweep.csv").exists(), "nothing ran");
}

/// The shipped scenario's tables: labels, figures, repeats and targets as
/// the README describes them (it runs in `every_shipped_scenario_runs`).
#[test]
fn the_shipped_time_to_accuracy_scenario_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/time-to-accuracy.toml");
    let scenario = gcsim_figures::scenario::Scenario::from_file(&path, None).unwrap();
    assert!(scenario.studies.is_empty());
    let labels: Vec<&str> = scenario.trains.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["scaled", "fixed"]);
    for t in &scenario.trains {
        assert_eq!(t.study.n(), 20);
        assert_eq!(t.study.trials(), 20);
        assert_eq!(t.study.schemes().len(), 6);
        assert_eq!(t.setup.train.rows() + t.setup.test.rows(), 569);
        assert_eq!(t.targets.metric, Some(0.95));
        assert!(t.targets.loss.is_some());
        assert_eq!(t.config.load_model, t.label);
        assert_eq!(t.plot.as_deref(), Some(format!("{}-loss.png", t.label).as_str()));
    }
}

/// A [[train]] table's `plot` takes the figure keys of a [[study]] figure:
/// `size` (inches), `font_size`, `title`, `log_y` and, for a PNG, `dpi`.
#[test]
fn a_train_plot_takes_the_figure_style_keys() {
    let dir = tempfile::tempdir().unwrap();
    let styled = MIXED.replace(
        "plot = \"tta.png\"",
        "plot = \"tta.svg\"\nsize = \"5x3\"\nfont_size = 8\ntitle = false",
    );
    run(dir.path(), "s.toml", &styled, dir.path(), &[]);
    let svg = std::fs::read_to_string(dir.path().join("out/mixed/tta.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let root = doc.root_element();
    assert_eq!(
        (root.attribute("width"), root.attribute("height")),
        (Some("5in"), Some("3in"))
    );
    let plain = MIXED.replace("plot = \"tta.png\"", "plot = \"tta.svg\"");
    run(dir.path(), "p.toml", &plain, dir.path(), &[]);
    let plain = std::fs::read_to_string(dir.path().join("out/mixed/tta.svg")).unwrap();
    // The heading is drawn only without `title = false`.
    assert!(
        plain.contains("Training loss") && !svg.contains("Training loss"),
        "heading"
    );
    for (text, message) in [
        (
            MIXED.replace("plot = \"tta.png\"", "plot = \"tta.svg\"\ndpi = 300"),
            "key `dpi`: sets the pixels of a PNG; `tta.svg` is a vector figure",
        ),
        (
            MIXED.replace("plot = \"tta.png\"", "size = \"5x3\""),
            "key `size` styles the figure `plot`, which this table does not draw",
        ),
        (
            MIXED.replace("plot = \"tta.png\"", "plot = \"tta.png\"\nsize = \"5\""),
            "key `size`: `5` is not WxH",
        ),
    ] {
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, text).unwrap();
        let out = gcsim()
            .arg("scenario")
            .arg(&path)
            .arg("--out-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(message), "{message}: {stderr}");
    }
}
