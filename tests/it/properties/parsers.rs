//! The `--dist` and range parsers on random and near-valid text: no panic,
//! every accepted `--dist` round-trips through its canonical form, and the
//! range parser accepts exactly what it documents.

use std::cell::Cell;

use proptest::prelude::*;

use gcsim::dist::Dist;
use gcsim::scheme::SchemeKind;

use super::runner;

/// Pieces of the `--dist` and range syntax, so that random strings get past
/// the first token often enough to reach the number and range checks.
fn dist_like() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("exp".to_string()),
        Just("shifted-exp".to_string()),
        Just("pareto".to_string()),
        Just("trace".to_string()),
        Just(":".to_string()),
        Just(",".to_string()),
        Just("=".to_string()),
        Just("..".to_string()),
        Just(" ".to_string()),
        Just("rate".to_string()),
        Just("mu".to_string()),
        Just("shift".to_string()),
        Just("scale".to_string()),
        Just("shape".to_string()),
        Just("p_slow".to_string()),
        Just("slowdown".to_string()),
        Just("inf".to_string()),
        Just("NaN".to_string()),
        Just("-".to_string()),
        Just("é".to_string()),
        any::<f64>().prop_map(|x| x.to_string()),
        any::<u64>().prop_map(|x| x.to_string()),
        (0u32..100).prop_map(|x| x.to_string()),
        "\\PC{0,3}",
    ];
    prop::collection::vec(token, 0..12).prop_map(|t| t.concat())
}

/// Well-formed `--dist` strings with arbitrary numbers, valid or not.
fn dist_text() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        any::<f64>(),
        0.0f64..10.0,
        1e-3f64..1e3,
        Just(1e-100),
        Just(1e100),
        Just(0.0),
        Just(-0.0),
        Just(1.0),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(f64::MAX),
    ];
    let base = prop_oneof![
        number.clone().prop_map(|r| format!("exp:rate={r}")),
        number.clone().prop_map(|r| format!("exp:mu={r}")),
        (number.clone(), number.clone()).prop_map(|(s, r)| format!("shifted-exp:shift={s},rate={r}")),
        (number.clone(), number.clone()).prop_map(|(x, a)| format!("pareto:scale={x},shape={a}")),
    ];
    let stragglers = prop::option::of((number.clone(), number)).prop_map(|o| match o {
        Some((p, f)) => format!(",p_slow={p},slowdown={f}"),
        None => String::new(),
    });
    (base, stragglers).prop_map(|(b, s)| b + &s)
}

/// Parses with every parser; returns the Dist if one parsed.
fn parse_everything(text: &str) -> Option<Dist> {
    let _ = gcsim::range::parse(text);
    let _ = text.parse::<SchemeKind>();
    text.parse::<Dist>().ok()
}

fn assert_round_trip(text: &str, d: Dist) {
    let canonical = d.to_string();
    assert_eq!(canonical.parse::<Dist>(), Ok(d), "{text:?} -> {canonical:?}");
    assert_eq!(canonical.parse::<Dist>().unwrap().to_string(), canonical);
}

#[test]
fn parsers_never_panic_and_every_dist_round_trips() {
    let accepted = Cell::new(0);
    let strategy = prop_oneof![any::<String>(), "\\PC*", dist_like(), dist_text()];
    runner(20_000)
        .run(&strategy, |text| {
            if let Some(d) = parse_everything(&text) {
                assert_round_trip(&text, d);
                accepted.set(accepted.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    // The generators must reach the accepting paths, or the round trip is vacuous.
    let accepted = accepted.get();
    assert!(accepted > 1000, "only {accepted} strings parsed as a Dist");
}

#[test]
fn range_parser_accepts_exactly_what_it_documents() {
    let strategy = prop::collection::vec((0usize..1000, 0usize..1000, any::<bool>()), 1..6);
    runner(2_000)
        .run(&strategy, |items| {
            let text: Vec<String> = items
                .iter()
                .map(|&(a, b, range)| if range { format!("{a}..{b}") } else { a.to_string() })
                .collect();
            let text = text.join(",");
            let mut expected = Vec::new();
            let mut ok = true;
            for &(a, b, range) in &items {
                if !range {
                    expected.push(a);
                } else if a <= b {
                    expected.extend(a..=b);
                } else {
                    ok = false;
                }
            }
            // Each value once, at its first occurrence.
            let mut seen = std::collections::HashSet::new();
            expected.retain(|v| seen.insert(*v));
            match gcsim::range::parse(&text) {
                Ok(list) => prop_assert!(ok && list.values == expected, "{text}"),
                Err(e) => prop_assert!(!ok && e.contains("exceeds the end"), "{text}: {e}"),
            }
            Ok(())
        })
        .unwrap();
}
