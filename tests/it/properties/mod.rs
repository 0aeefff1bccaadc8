//! Properties over random inputs (proptest, fixed seeds): the parsers never
//! panic, and the engine's per-trial and summary invariants hold on random
//! small studies.
//!
//! The runner is shared; the tests are in `parsers`, `scenario` and
//! `engine`.

use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// A runner with a fixed seed, so that a failure reproduces.
fn runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]))
}

mod engine;
mod parsers;
mod scenario;
