//! `[[plan]]` tables: `gcsim plan` rerun from a scenario file, with the
//! command line's own flags, and its recommendation on the report page.

use super::{gcsim, scenario_error, stdout_of};

const SCENARIO: &str = r#"name = "planned"
n = 20
dist = "exp:rate=1,p_slow=0.05,slowdown=8"
load_model = "scaled"
trials = 3000
seed = 4

[[study]]
label = "sweep"
schemes = ["uncoded", "crc"]
s = "0..2"

[[plan]]
label = "pick"
schemes = ["uncoded", "frc", "crc"]
objective = "p99"
max_load = 5
simulate = true
"#;

/// The same search from the command line: the file's keys become flags.
const FLAGS: [&str; 20] = [
    "plan",
    "--n",
    "20",
    "--dist",
    "exp:rate=1,p_slow=0.05,slowdown=8",
    "--load-model",
    "scaled",
    "--trials",
    "3000",
    "--seed",
    "4",
    "--scheme",
    "uncoded,frc,crc",
    "--objective",
    "p99",
    "--max-load",
    "5",
    "--simulate",
    "--format",
    "csv",
];

#[test]
fn a_plan_table_is_the_plan_command() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    gcsim()
        .arg("scenario")
        .arg(&file)
        .args(["-q", "--report", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    let out = dir.path().join("planned");
    let csv = std::fs::read_to_string(out.join("pick.csv")).unwrap();
    assert_eq!(csv, stdout_of(&FLAGS));
    let mut json = FLAGS.to_vec();
    *json.last_mut().unwrap() = "json";
    let cli: serde_json::Value = serde_json::from_str(&stdout_of(&json)).unwrap();
    let ours: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("pick.json")).unwrap()).unwrap();
    assert_eq!(ours["rows"], cli["rows"]);
    let recommendation = cli["recommendation"].as_str().unwrap();
    assert!(recommendation.starts_with("recommend: n=20 "), "{recommendation}");
    let page = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(page.contains(&format!("## pick\n\n**{recommendation}**")), "{page}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<h2>pick</h2>\n<p><strong>recommend: n=20 "), "{html}");
    // --trials overrides the file's, as for studies.
    gcsim()
        .arg("scenario")
        .arg(&file)
        .args(["-q", "--trials", "2000", "--out-dir"])
        .arg(dir.path())
        .assert()
        .success();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("pick.json")).unwrap()).unwrap();
    assert_eq!(json["config"]["trials"], 2000);
}

#[test]
fn plan_table_errors_name_the_file_line_and_flag() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            SCENARIO.replace("objective = \"p99\"", "objective = \"fast\""),
            "s.toml:13: plan `pick` (its keys are `gcsim plan`'s flags): invalid value 'fast' for '--objective",
        ),
        (
            SCENARIO.replace("max_load = 5", "colour = 5"),
            "s.toml:13: plan `pick` (its keys are `gcsim plan`'s flags): unexpected argument '--colour'",
        ),
        (
            SCENARIO.replace("max_load = 5", "format = \"json\""),
            "s.toml:13: plan `pick`: key `format`: a [[plan]] writes pick.csv and pick.json",
        ),
        (
            SCENARIO.replace("label = \"pick\"", "label = \"sweep\""),
            "key `label`: `sweep` is used by a study and a plan",
        ),
        (
            SCENARIO.replace("label = \"pick\"\n", ""),
            "s.toml:13: [[plan]]: missing field `label`",
        ),
        (
            SCENARIO.replace("max_load = 5", "max_load = { a = 1 }"),
            "key `max_load`: accepted: a string, a number",
        ),
    ];
    for (text, message) in cases {
        let stderr = scenario_error(dir.path(), &text);
        assert!(stderr.contains(message), "{message}: {stderr}");
        // Nothing ran: no study wrote its results.
        assert!(!dir.path().join("planned/sweep.csv").exists());
    }
}
