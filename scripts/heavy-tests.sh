#!/usr/bin/env bash
# The opt-in heavy tests: brute-force Monte Carlo with about 10⁹ draws
# against the exact laws (`#[ignore]`d in the ordinary run, which CI makes).
# Takes about a minute in release on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --locked --test it -- --ignored
