#!/usr/bin/env bash
# The README's test command: the Rust tests (`cargo test --release --locked`,
# extra arguments passed on), then the Python module's (scripts/python-tests.sh).
# Both run whatever the first gives; the status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
cargo test --release --locked "$@" || status=$?
scripts/python-tests.sh || { rc=$?; [ "$status" != 0 ] || status=$rc; }
exit "$status"
