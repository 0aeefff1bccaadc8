//! The scenario reader: files read, errors placed, keys carried into the study.
use super::*;
use gcsim::comm::{Comm, Link};
use gcsim::dist::Dist;
use gcsim::load::LoadModel;

mod parallel;

const GOOD: &str = r#"
name = "t"
n = 12
dist = "exp:rate=2"
trials = 1000

[[study]]
label = "a"
schemes = ["crc", "frc"]
s = "0..5"
figures = [{ file = "a.png" }, { file = "a.svg", metric = "p99" }]

[[study]]
label = "b"
schemes = ["mds"]
k = [3, 6, 12]
load_model = "scaled"
"#;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_str(Path::new("x.toml"), text, None)
}

#[test]
fn reads_a_scenario() {
    let s = parse(GOOD).unwrap();
    assert_eq!(s.name, "t");
    assert_eq!(s.studies.len(), 2);
    let a = &s.studies[0];
    assert_eq!(a.study.schemes().len(), 6 + 5);
    assert_eq!(a.skipped, vec!["frc at s=4 (s+1 must divide n, n=12)".to_string()]);
    assert_eq!(a.figures[1].metric, Metric::P99);
    assert_eq!(a.study.trials(), 1000);
    let b = &s.studies[1];
    assert_eq!(*b.study.load_model(), LoadModel::Scaled);
    assert_eq!(b.study.schemes().len(), 3);
    let overridden = Scenario::from_str(Path::new("x.toml"), GOOD, Some(50)).unwrap();
    assert_eq!(overridden.studies[0].study.trials(), 50);
}

#[test]
fn errors_name_file_line_and_key() {
    assert_errors([
        (
            GOOD.replace("trials = 1000", "trials = 1000\ncolour = 3"),
            "x.toml:6:",
            "unknown field `colour`",
        ),
        (GOOD.replace("s = \"0..5\"", "s = \"5..0\""), "x.toml:10:", "key `s`"),
        (
            GOOD.replace("exp:rate=2", "exp:rate=-2"),
            "x.toml:4:",
            "key `dist`: `rate=-2` is out of range",
        ),
        (
            GOOD.replace("[\"mds\"]", "[\"lrc\"]"),
            "x.toml:15:",
            "unknown scheme `lrc`",
        ),
        (
            GOOD.replace("\"scaled\"", "\"quadratic\""),
            "x.toml:17:",
            "unknown load model `quadratic`",
        ),
        (
            GOOD.replace("metric = \"p99\"", "metric = \"p42\""),
            "x.toml:11:",
            "key `metric`",
        ),
        (GOOD.replace("a.png", "../a.png"), "x.toml:11:", "key `file`"),
        (
            GOOD.replace("name = \"t\"", "name = \"../t\""),
            "x.toml:2:",
            "key `name`",
        ),
        (GOOD.replace("n = 12", ""), "x.toml", "missing field `n`"),
        (
            GOOD.replace("k = [3, 6, 12]", "k = [3, 6, 13]"),
            "x.toml:16:",
            "study `b`: k 13 is out of range for mds with n=12",
        ),
        (
            GOOD.replace("label = \"b\"", "label = \"a\""),
            "x.toml:14:",
            "used by two studies",
        ),
        (
            "name = \"t\"\nn = 3\nstudy = []".to_string(),
            "x.toml:3:",
            "at least one [[study]]",
        ),
        ("name = [".to_string(), "x.toml:1:", ""),
    ]);
}

/// Errors in the cluster's keys, toml's own errors, and values every
/// scheme skips name the file, the line and the key, on one line.
#[test]
fn cluster_and_toml_errors_name_file_line_and_key() {
    assert_errors([
        (
            GOOD.replace("trials = 1000", "trials = 1000\nworkers = [\"12:exp:rate=1\"]"),
            "x.toml:6:",
            "keys `workers` and `dist` do not go together",
        ),
        (
            GOOD.replace("dist = \"exp:rate=2\"", "workers = [\"6:exp:rate=1\", \"x\"]"),
            "x.toml:4:",
            "`x` is not COUNT:DIST",
        ),
        (
            GOOD.replace("trials = 1000", "trials = 1000\nshuffle_placement = true"),
            "x.toml:6:",
            "key `shuffle_placement`: it places `workers` classes",
        ),
        (
            GOOD.replace("exp:rate=2", "replay:path=nope.csv"),
            "x.toml:4:",
            "key `dist`: nope.csv: cannot read the trace",
        ),
        // toml's own errors name the key too: a wrong type, a duplicate.
        (
            GOOD.replace("n = 12", "n = \"twelve\""),
            "x.toml:3:",
            "key `n`: invalid value: string \"twelve\", expected a whole number >= 0 (e.g. 20, 1e6 or \"1e6\")",
        ),
        (
            GOOD.replace("n = 12", "n = 12\nn = 13"),
            "x.toml:4:",
            "key `n`: duplicate key",
        ),
        (
            GOOD.replace("metric = \"p99\"", "metric = 99"),
            "x.toml:11:",
            "key `metric`: invalid type: integer `99`",
        ),
        (
            GOOD.replace("name = \"t\"", "name = \".\""),
            "x.toml:2:",
            "key `name`: `.` must be letters, digits, '-', '_' or '.', and not start with '.'",
        ),
        // Every value skipped: the error points at the values and says why.
        (
            GOOD.replace("[\"crc\", \"frc\"]", "[\"frc\"]")
                .replace("\"0..5\"", "[4, 6]"),
            "x.toml:10:",
            "study `a`: no configuration to simulate: every value was skipped: frc at s=4; s=6 (s+1 must divide n, n=12)",
        ),
        // Not serde's "did not match any variant of untagged enum ListValue".
        (
            GOOD.replace("s = \"0..5\"", "s = 2.5"),
            "x.toml:10:",
            "key `s`: accepted: a whole number >= 0 (e.g. 5 or 1e3), a range or list as a string (e.g. \"0..50\" or \"1,2,4\"), or an array of whole numbers (e.g. [0, 5, 10])",
        ),
        // approx-regular beyond a dense matrix's n: an error naming the key
        // (the run panicked).
        (
            GOOD.replace("n = 12", "n = 100000")
                .replace("[\"crc\", \"frc\"]", "[\"approx-regular\"]")
                .replace("s = \"0..5\"", "s = 2\nd = 3"),
            "x.toml:",
            "study `a`: approx-regular s=2 d=3 (its approximation error is simulated with its matrix): n 100000 is too large to build a dense encoding matrix; accepted: 1..2000",
        ),
    ]);
}

/// Each case's text fails to parse with one line that starts with its
/// place and contains its words.
fn assert_errors<const N: usize>(cases: [(String, &str, &str); N]) {
    for (text, place, what) in cases {
        let e = parse(&text).unwrap_err().to_string();
        assert!(
            e.starts_with(place) && e.contains(what),
            "expected `{place}` … `{what}`, got: {e}"
        );
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

/// The communication keys reach the study, at file and study level, and
/// change its exact values: the shipped comm-tradeoff scenario's
/// dedicated study has the computation-only mean plus τ·message.
#[test]
fn communication_keys_reach_the_study() {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("scenarios/comm-tradeoff.toml");
    let scenario = Scenario::from_file(&path, Some(1000)).unwrap();
    let [dedicated, shared] = &scenario.studies[..] else {
        panic!("two studies")
    };
    assert_eq!(
        *dedicated.study.comm(),
        Comm::new(Some(2.0), None, Link::Dedicated, 0.0).unwrap()
    );
    assert_eq!(
        *shared.study.comm(),
        Comm::new(Some(2.0), None, Link::Shared, 0.0).unwrap()
    );
    let first = dedicated.study.schemes()[0];
    let bare = dedicated.study.clone().with_comm(Comm::default());
    let with = dedicated.study.exact_law(&first).unwrap().mean();
    let without = bare.exact_law(&first).unwrap().mean();
    assert!(
        (with - (without + 2.0 * first.message())).abs() < 1e-12,
        "{with} vs {without}"
    );
    let text = GOOD.replace(
        "load_model = \"scaled\"",
        "load_model = \"scaled\"\ncomm_dist = \"exp:rate=3\"\nlink = \"shared\"\ndecode_time = 0.5",
    );
    let b = &parse(&text).unwrap().studies[1];
    assert_eq!(
        *b.study.comm(),
        Comm::new(None, Some(Dist::exp(3.0).unwrap()), Link::Shared, 0.5).unwrap()
    );
}

/// Names and labels become file names: letters, digits, `-`, `_` and `.`,
/// not starting with a dot; anything else is refused.
#[test]
fn safe_names() {
    for ok in ["a", "run-1_b.v2", "A9"] {
        assert!(safe_name(ok), "{ok}");
    }
    for bad in ["", ".hidden", "..", "a/b", "a b", "é", "a\\b"] {
        assert!(!safe_name(bad), "{bad}");
    }
}

/// The key `d` is approx-regular's list of degrees, and refused elsewhere.
#[test]
fn key_d_lists_approx_regular_degrees() {
    let text =
        "name = \"t\"\nn = 12\n[[study]]\nlabel = \"a\"\nschemes = [\"approx-regular\"]\ns = [1, 2]\nd = \"2..4\"\n";
    let s = parse(text).unwrap();
    let degrees: Vec<Option<usize>> = s.studies[0].study.schemes().iter().map(|x| x.d()).collect();
    assert_eq!(degrees, [2, 3, 4, 2, 3, 4].map(Some));
    let err = parse(&text.replace("approx-regular", "crc")).unwrap_err().to_string();
    assert!(err.contains("d applies only to schemes approx-regular"), "{err}");
}

/// A bad communication value is placed on its own key's line: decode_time
/// on line 7 (not comm_time's, line 6).
#[test]
fn comm_errors_point_at_their_key() {
    let text = "name = \"t\"\nn = 4\n[[study]]\nlabel = \"a\"\nschemes = [\"crc\"]\ncomm_time = 1.0\ndecode_time = -1.0\ns = 1\n";
    let err = parse(text).unwrap_err().to_string();
    assert!(err.starts_with("x.toml:7:"), "{err}");
    assert!(err.contains("decode_time"), "{err}");
    let err = parse(
        &text
            .replace("comm_time = 1.0", "comm_time = -1.0")
            .replace("decode_time = -1.0", "decode_time = 0.0"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("x.toml:6:"), "{err}");
}

/// The collective's keys reach the study, a table's over the file's, and
/// each bad one is placed on its own line.
#[test]
fn collective_keys_reach_the_study() {
    let text = "name = \"t\"\nn = 16\naggregation = \"ring\"\nbandwidth = \"25GB/s\"\ngradient_size = 1e9\ntime_unit = \"ms\"\n[[study]]\nlabel = \"a\"\nschemes = [\"ignore\"]\ns = 2\n[[study]]\nlabel = \"b\"\nschemes = [\"crc\"]\ns = 2\naggregation = \"tree\"\nbuckets = 4\nlatency = 1e-5\n";
    let s = parse(text).unwrap();
    let a = s.studies[0].study.aggregation().collective().copied().unwrap();
    assert_eq!(
        (a.algorithm.name(), a.bandwidth, a.gradient_bytes, a.buckets),
        ("ring", 25e9, 1e9, 1)
    );
    assert_eq!(a.units_per_second, 1e3);
    assert_eq!(s.studies[0].time_unit, Some(gcsim::units::TimeUnit::Milliseconds));
    let b = s.studies[1].study.aggregation().collective().copied().unwrap();
    assert_eq!((b.algorithm.name(), b.latency, b.buckets), ("tree", 1e-5, 4));
    // A [[plan]] inherits the file's keys as `gcsim plan` flags.
    let with_plan = format!("{text}[[plan]]\nlabel = \"p\"\n");
    let args = &parse(&with_plan).unwrap().plans[0].args;
    for pair in [
        ["--aggregation", "ring"],
        ["--bandwidth", "25GB/s"],
        ["--time-unit", "ms"],
    ] {
        assert!(args.windows(2).any(|w| w == pair), "{pair:?} in {args:?}");
    }
    assert_errors([
        (
            text.replace("buckets = 4", "buckets = 0"),
            "x.toml:16:",
            "key `buckets` 0 is out of range",
        ),
        (
            text.replace("\"25GB/s\"", "\"25GB\""),
            "x.toml:4:",
            "key `bandwidth`: `25GB`: unknown unit",
        ),
        (
            text.replace("time_unit = \"ms\"\n", ""),
            "x.toml:3:",
            "give key `time_unit`",
        ),
        (
            text.replace("aggregation = \"tree\"", "aggregation = \"star\""),
            "x.toml:15:",
            "unknown aggregation `star`",
        ),
        (
            text.replace("schemes = [\"crc\"]\ns = 2", "schemes = [\"speculative\"]"),
            // One line shorter: the study's `aggregation` is on line 14.
            "x.toml:14:",
            "speculative has no sum over a set of participants",
        ),
        (
            text.replace("aggregation = \"ring\"\n", "")
                .replace("aggregation = \"tree\"\n", ""),
            "x.toml:3:",
            "key `bandwidth` describes an all-reduce collective",
        ),
    ]);
}

/// A file's collective does not reach its [[train]] tables, which train at
/// a master: the file is refused at its `aggregation` key.
#[test]
fn a_train_table_refuses_the_file_s_collective() {
    let text = "name = \"t\"\nn = 8\naggregation = \"ring\"\nbandwidth = \"1GB/s\"\ngradient_size = 1e6\ntime_unit = \"s\"\n[[train]]\nlabel = \"tta\"\nschemes = [\"crc\"]\ns = 1\ndata = \"synthetic:rows=200,features=3\"\niterations = 5\nrepeats = 2\n";
    let e = parse(text).unwrap_err().to_string();
    assert!(
        e.starts_with("x.toml:3:") && e.contains("a [[train]] table is trained at a master"),
        "{e}"
    );
}
