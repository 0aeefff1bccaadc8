//! Top-level `[[figure]]` tables: one metric of several studies on one
//! axis, each series labelled by its study, redrawable from its data file.

use std::collections::BTreeMap;
use std::path::Path;

use super::{gcsim, scenario_error};

const TWO_STUDIES: &str = r#"
name = "overlay"
n = 20
dist = "shifted-exp:shift=1,rate=1"
trials = 2000

[[study]]
label = "scaled"
schemes = ["crc", "frc"]
s = "0..4"
load_model = "scaled"

[[study]]
label = "fixed"
schemes = ["crc", "frc"]
s = "0..4"
load_model = "fixed"
"#;

const OVERLAY: &str = r#"
[[figure]]
file = "both.svg"
metric = "mean"
studies = ["fixed", "scaled"]
"#;

fn records(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            header
                .iter()
                .map(String::from)
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

#[test]
fn an_overlay_draws_each_study_on_one_axis() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(&file, format!("{TWO_STUDIES}{OVERLAY}")).unwrap();
    gcsim()
        .arg("scenario")
        .arg(&file)
        .args(["-q", "--report", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    let out = dir.path().join("overlay");
    let plotted = records(&out.join("both.svg.csv"));
    let simulated: Vec<&BTreeMap<String, String>> = plotted.iter().filter(|p| p["kind"] == "simulated").collect();
    // Every simulated point is its study's mean at that s, in the order given.
    let mut series: Vec<&str> = Vec::new();
    for p in &simulated {
        if !series.contains(&p["series"].as_str()) {
            series.push(&p["series"]);
        }
    }
    assert_eq!(series, ["fixed: crc", "fixed: frc", "scaled: crc", "scaled: frc"]);
    for study in ["fixed", "scaled"] {
        let rows = records(&out.join(format!("{study}.csv")));
        for row in &rows {
            let point = simulated
                .iter()
                .find(|p| {
                    p["series"] == format!("{study}: {}", row["scheme"])
                        && p["x"].parse::<f64>().unwrap() == row["s"].parse::<f64>().unwrap()
                })
                .unwrap_or_else(|| panic!("{study} {} s={} not drawn", row["scheme"], row["s"]));
            assert_eq!(point["y"].parse::<f64>().unwrap(), row["mean"].parse::<f64>().unwrap());
            assert_eq!(
                point["y_lo"].parse::<f64>().unwrap(),
                row["ci95_low"].parse::<f64>().unwrap()
            );
        }
        assert_eq!(rows.len(), 5 + 4, "crc at s = 0..4 and frc at 0, 1, 3, 4");
    }
    // A scheme keeps its colour in both studies; the marker tells them apart.
    let look = |series: &str| {
        let p = simulated.iter().find(|p| p["series"] == series).unwrap();
        (p["color"].clone(), p["marker"].clone())
    };
    let (fixed, scaled) = (look("fixed: crc"), look("scaled: crc"));
    assert_eq!(fixed.0, scaled.0);
    assert_ne!(fixed.1, scaled.1);
    // The caption names what sets the studies apart.
    let svg = std::fs::read_to_string(out.join("both.svg")).unwrap();
    assert!(
        svg.contains("fixed: load model=fixed; scaled: load model=scaled"),
        "caption"
    );
    let page = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(page.contains("![both.svg](both.svg)"), "{page}");
}

#[test]
fn overlay_errors_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            OVERLAY.replace("\"fixed\", \"scaled\"", "\"fixed\", \"shared\""),
            "key `studies`: no [[study]] is labelled `shared`; accepted: scaled, fixed",
        ),
        (
            OVERLAY.replace("\"fixed\", \"scaled\"", "\"fixed\""),
            "key `studies`: an overlay draws at least two studies",
        ),
        (
            OVERLAY.replace("\"fixed\", \"scaled\"", "\"fixed\", \"fixed\""),
            "key `studies`: `fixed` is listed twice",
        ),
        (
            OVERLAY.replace("studies = [\"fixed\", \"scaled\"]\n", ""),
            "[[figure]]: missing key `studies`",
        ),
        (OVERLAY.replace("both.svg", "scaled.csv"), "key `file`"),
        (
            format!("{OVERLAY}\n[[study]]\nlabel = \"split\"\nschemes = [\"comm-efficient\"]\ns = 2\nm = \"1..3\"\n")
                .replace("\"fixed\", \"scaled\"", "\"fixed\", \"split\""),
            "an overlay has one x axis: study `fixed` is drawn against s, study `split` against m",
        ),
    ];
    for (overlay, message) in cases {
        let stderr = scenario_error(dir.path(), &format!("{TWO_STUDIES}{overlay}"));
        assert!(stderr.contains(message), "{message}: {stderr}");
    }
    let study_figure = TWO_STUDIES.replace(
        "load_model = \"fixed\"\n",
        "load_model = \"fixed\"\nfigures = [{ file = \"f.png\", studies = [\"scaled\"] }]\n",
    );
    let stderr = scenario_error(dir.path(), &study_figure);
    assert!(
        stderr.contains("key `studies`: a study's figure draws that study"),
        "{stderr}"
    );
}
