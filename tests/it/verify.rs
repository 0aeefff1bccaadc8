//! `gcsim verify` passes on the engine and fails on a deliberately wrong one.

use assert_cmd::Command;
use predicates::prelude::*;

use gcsim::engine::{self, Silent, TrialPlan};
use gcsim::scheme::Rule;
use gcsim::verify;

#[test]
fn the_engine_passes_the_grid() {
    let v = verify::run(&verify::grid(), 100_000, 3, &|study| engine::simulate(study, &Silent));
    assert!(
        v.checks.len() > 300,
        "the grid covers every exact configuration: {}",
        v.checks.len()
    );
    assert_eq!(
        v.failed(),
        0,
        "{:#?}",
        v.checks.iter().filter(|c| !c.pass).collect::<Vec<_>>()
    );
    assert!(v.printed.iter().all(|p| p.1));
}

/// An engine whose k-of-n rule waits for one worker too many.
#[test]
fn one_worker_too_many_is_caught() {
    let wrong = |study: &gcsim::study::Study| {
        let n = study.n();
        let plan = TrialPlan::new(study).map_rules(|_, rule| match rule {
            Rule::KOfN(k) => Rule::KOfN((k + 1).min(n)),
            other => other,
        });
        engine::simulate_with(&plan, study, &Silent)
    };
    let v = verify::run(&verify::grid(), 20_000, 3, &wrong);
    let failed: Vec<_> = v.checks.iter().filter(|c| !c.pass).collect();
    assert!(failed.len() > 100, "only {} checks failed", failed.len());
    assert!(failed.iter().any(|c| c.config.contains("crc s=3") && c.stat == "mean"));
    assert!(failed.iter().any(|c| c.config.contains("mds k=10") && c.stat == "p99"));
    // frc's group rule and uncoded (k = n already) are untouched, and pass.
    assert!(
        v.checks
            .iter()
            .filter(|c| c.config.contains("frc s=3") || c.config.contains("uncoded"))
            .all(|c| c.pass)
    );
}

#[test]
fn cli_verify_passes_and_summarises() {
    Command::cargo_bin("gcsim")
        .unwrap()
        .args(["verify", "--failures-only"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^\d+ passed, 0 failed$").unwrap());
}
