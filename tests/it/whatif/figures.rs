//! `gcsim whatif --plot` (the dp rank × stage heatmap of min(S_dp, S_stage)
//! and its data) and `--timeline` (one step's replayed and ideal runs as a
//! Chrome trace), on the artifact's ST job.

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use super::data;

/// `gcsim whatif trace-ST.parquet --meta meta-ST.yaml` with `args`, the
/// JSON report in `dir`: the report, or stderr on failure.
fn whatif(dir: &Path, args: &[&str]) -> Result<Value, String> {
    let report = dir.join("report.json");
    let out = Command::cargo_bin("gcsim")
        .unwrap()
        .arg("whatif")
        .arg(data("trace-ST.parquet"))
        .arg("--meta")
        .arg(data("meta-ST.yaml"))
        .arg("--out")
        .arg(&report)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(stderr);
    }
    Ok(serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap())
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

#[test]
fn the_heatmap_is_drawn_and_its_cells_are_the_worker_scores() {
    let dir = tempfile::tempdir().unwrap();
    let (png, csv) = (path(dir.path(), "h.png"), path(dir.path(), "h.csv"));
    let got = whatif(dir.path(), &["--plot", &png, "--plot-data", &csv]).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let info = decoder.read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), gcsim_figures::plot::SIZE);
    let scores: Vec<Vec<f64>> = serde_json::from_value(got["worker_scores"].clone()).unwrap();
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let rows: Vec<BTreeMap<String, String>> = reader.deserialize().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2 * 4);
    for row in &rows {
        let stage: usize = row["series"].strip_prefix("stage ").unwrap().parse().unwrap();
        let dp: usize = row["x"].parse::<f64>().unwrap() as usize;
        let y: f64 = row["y"].parse().unwrap();
        assert_eq!(y, scores[dp][stage], "{row:?}");
        assert_eq!((row["kind"].as_str(), row["figure"].as_str()), ("cell", "h.png"));
    }
    let cells: std::collections::BTreeSet<_> = rows.iter().map(|r| (&r["series"], &r["x"])).collect();
    assert_eq!(cells.len(), 8, "one row per cell");
}

#[test]
fn the_svg_heatmap_names_its_axes_and_writes_each_value() {
    let dir = tempfile::tempdir().unwrap();
    let svg = path(dir.path(), "h.svg");
    let got = whatif(dir.path(), &["--plot", &svg, "--font-size", "9"]).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "not an SVG");
    for label in ["dp rank", "stage", "min(S_dp, S_stage)", "trace-ST.parquet"] {
        assert!(text.contains(label), "no {label} in the SVG");
    }
    let scores: Vec<Vec<f64>> = serde_json::from_value(got["worker_scores"].clone()).unwrap();
    for v in scores.iter().flatten() {
        assert!(text.contains(&format!(">\n{v:.2}\n</text>")), "no annotation {v:.2}");
    }
}

/// The complete events of a Chrome trace, by process.
fn spans(path: &str) -> BTreeMap<u64, Vec<Value>> {
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut by_pid: BTreeMap<u64, Vec<Value>> = BTreeMap::new();
    for e in trace["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X" {
            by_pid.entry(e["pid"].as_u64().unwrap()).or_default().push(e.clone());
        }
    }
    by_pid
}

/// The last end of a run's events, in seconds.
fn last_end(events: &[Value]) -> f64 {
    events
        .iter()
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(f64::NEG_INFINITY, f64::max)
        / 1e6
}

/// The timelines of `step` (by default the step with the largest S) end at
/// its replayed and ideal step times, one event per op and run.
fn check_timelines(got: &Value, file: &str, step: Option<i64>) {
    let steps: Vec<i64> = serde_json::from_value(got["steps"].clone()).unwrap();
    let by_step = got["by_step"].as_object().unwrap();
    let worst = steps
        .iter()
        .copied()
        .max_by(|a, b| {
            by_step[&a.to_string()]
                .as_f64()
                .partial_cmp(&by_step[&b.to_string()].as_f64())
                .unwrap()
        })
        .unwrap();
    let step = step.unwrap_or(worst);
    let s = steps.iter().position(|&x| x == step).unwrap();
    let by_pid = spans(file);
    let per_run = got["ops_per_lane"].as_u64().unwrap() as usize * 2;
    assert_eq!(by_pid.len(), 2);
    for (pid, want) in [(0, &got["step_replay"][s]), (1, &got["step_ideal"][s])] {
        let events = &by_pid[&pid];
        assert_eq!(events.len(), per_run, "run {pid}: one event per op of each dp rank");
        let want = want.as_f64().unwrap();
        assert!(
            (last_end(events) - want).abs() < 1e-9 * want.max(1.0),
            "run {pid}: {} against {want}",
            last_end(events)
        );
        for e in events {
            assert_eq!(e["args"]["step"], step);
            let name = e["name"].as_str().unwrap();
            let (optype, seq, stage) = (&e["args"]["optype"], &e["args"]["seq"], &e["args"]["stage"]);
            assert_eq!(name, format!("{}_{seq}_{stage}", optype.as_str().unwrap()));
            assert!(e["args"]["dp_rank"].as_u64().unwrap() < 2);
        }
        // No event overlaps another on its thread.
        let mut by_tid: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
        for e in events {
            let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
            by_tid
                .entry(e["tid"].as_u64().unwrap())
                .or_default()
                .push((ts, ts + dur));
        }
        for spans in by_tid.values_mut() {
            spans.sort_by(|a, b| a.partial_cmp(b).unwrap());
            assert!(spans.windows(2).all(|w| w[1].0 >= w[0].1 - 1e-6), "{spans:?}");
        }
    }
}

#[test]
fn the_timeline_is_the_replayed_and_the_ideal_step() {
    let dir = tempfile::tempdir().unwrap();
    let json = path(dir.path(), "t.json");
    let got = whatif(dir.path(), &["--timeline", &json]).unwrap();
    check_timelines(&got, &json, None);
    let steps = got["steps"].as_array().unwrap();
    let last = steps[steps.len() - 1].as_i64().unwrap();
    let got = whatif(dir.path(), &["--timeline", &json, "--step", &last.to_string()]).unwrap();
    check_timelines(&got, &json, Some(last));
}

#[test]
fn bad_figure_and_timeline_flags_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--timeline".into(), path(d, "t.json"), "--step".into(), "999".into()],
            "--step 999: the trace has no step 999; its steps are ",
        ),
        (
            vec!["--step".into(), "3".into()],
            "--step picks the step that --timeline writes",
        ),
        (vec!["--timeline".into(), path(d, "t.txt")], "--timeline"),
        (vec!["--plot".into(), path(d, "h.jpg")], "--plot"),
        (
            vec!["--plot-data".into(), path(d, "h.csv")],
            "--plot-data shapes a figure",
        ),
        (vec!["--timeline".into(), path(d, "report.json")], "both name"),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = whatif(d, &args).unwrap_err();
        let lines: Vec<&str> = err.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(lines[0].contains(want), "{args:?}: {err}");
    }
    assert!(!d.join("t.json").exists() && !d.join("report.json").exists());
}
