//! The scenario parser on arbitrary text and on random mutations of a
//! valid scenario: never a panic, and both outcomes occur.

use std::cell::Cell;
use std::path::Path;

use proptest::prelude::*;

use gcsim_figures::scenario::Scenario;

use super::runner;

/// A scenario that is valid as it stands; its mutations exercise every check.
const SCENARIO: &str = r#"name = "t"
n = 12
dist = "exp:rate=2,p_slow=0.1,slowdown=4"
load_model = "fixed"
trials = 1000
seed = 3

[[study]]
label = "a"
schemes = ["crc", "frc", "ignore", "uncoded"]
s = "0..5"
figures = [{ file = "a.png" }, { file = "a.svg", metric = "p99" }]

[[study]]
label = "b"
schemes = ["mds", "comm-efficient"]
k = [3, 6, 8]
s = 2
m = "1..3"
n = 8
load_model = "affine"
unit_time = 0.5
analytic = true
"#;

/// Replacement pieces: keys, values at and beyond every limit, TOML syntax.
const PIECES: &[&str] = &[
    "0",
    "1",
    "-1",
    "13",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "1e308",
    "nan",
    "inf",
    "-inf",
    "\"0..99999\"",
    "\"5..2\"",
    "\"\"",
    "[]",
    "[0, 18446744073709551615]",
    "\"additive\"",
    "\"scaled\"",
    "\"affine\"",
    "\"pareto:scale=1,shape=0.5\"",
    "\"exp:rate=0\"",
    "\"trace:path=x.csv\"",
    "\"mds\"",
    "\"comm-efficient\"",
    "\"frc\"",
    "[[study]]\nlabel = \"c\"\nschemes = [\"frc\"]\ns = 1\n",
    "\n",
    "=",
    "\"",
    "[",
    "]",
    "{",
    "#",
    "é",
];

#[derive(Debug, Clone)]
enum Mutation {
    /// Delete the chars in `[at, at + len)`.
    Delete { at: usize, len: usize },
    /// Insert a piece at a char position.
    Insert { at: usize, piece: usize },
    /// Replace the value after the `line`-th `=` with a piece.
    Value { line: usize, piece: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0usize..2000, 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (0usize..2000, 0..PIECES.len()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        (0usize..40, 0..PIECES.len()).prop_map(|(line, piece)| Mutation::Value { line, piece }),
    ]
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut chars: Vec<char>;
    for m in mutations {
        match *m {
            Mutation::Value { line, piece } => {
                let with_value: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains(" = ")).collect();
                if let Some(&i) = with_value.get(line % with_value.len().max(1)) {
                    let key = lines[i].split(" = ").next().unwrap_or("").to_string();
                    lines[i] = format!("{key} = {}", PIECES[piece]);
                }
            }
            Mutation::Delete { at, len } => {
                chars = lines.join("\n").chars().collect();
                let at = at % (chars.len() + 1);
                chars.drain(at..(at + len).min(chars.len()));
                lines = chars.iter().collect::<String>().lines().map(str::to_string).collect();
            }
            Mutation::Insert { at, piece } => {
                chars = lines.join("\n").chars().collect();
                let at = at % (chars.len() + 1);
                chars.splice(at..at, PIECES[piece].chars());
                lines = chars.iter().collect::<String>().lines().map(str::to_string).collect();
            }
        }
    }
    lines.join("\n")
}

fn check_scenario(text: &str) -> Result<bool, TestCaseError> {
    match Scenario::from_str(Path::new("p.toml"), text, None) {
        Ok(_) => Ok(true),
        Err(e) => {
            let message = e.to_string();
            prop_assert!(message.starts_with("p.toml"), "{message}");
            prop_assert!(!message.contains('\n'), "one line: {message:?}");
            Ok(false)
        }
    }
}

#[test]
fn scenario_parser_never_panics_on_arbitrary_text() {
    runner(5_000)
        .run(&prop_oneof![any::<String>(), "\\PC*"], |text| {
            check_scenario(&text)?;
            Ok(())
        })
        .unwrap();
}

#[test]
fn scenario_parser_never_panics_on_mutated_scenarios() {
    let parsed = Scenario::from_str(Path::new("p.toml"), SCENARIO, None);
    assert!(parsed.is_ok(), "the unmutated scenario is valid: {:?}", parsed.err());
    let (valid, invalid) = (Cell::new(0), Cell::new(0));
    runner(5_000)
        .run(&prop::collection::vec(mutation(), 1..4), |mutations| {
            if check_scenario(&mutate(SCENARIO, &mutations))? {
                valid.set(valid.get() + 1);
            } else {
                invalid.set(invalid.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    // Both outcomes occur: the mutations neither always break nor never break the file.
    let (valid, invalid) = (valid.get(), invalid.get());
    assert!(valid > 50 && invalid > 1000, "{valid} valid, {invalid} invalid");
}
