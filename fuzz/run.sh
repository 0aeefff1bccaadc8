#!/bin/sh
# Fuzzes the distribution and scenario parsers for a bounded time each.
#
#   fuzz/run.sh [SECONDS]      # default 120 s per target
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# New inputs go to fuzz/corpus/<target>/ (not committed), starting from the
# committed seeds in fuzz/seeds/<target>/; a crashing input is written to
# fuzz/artifacts/<target>/ and the script stops with a non-zero status.
set -eu
seconds=${1:-120}
cd "$(dirname "$0")/.."
for target in dist_parser scenario_parser; do
    case $target in
        dist_parser) dict=fuzz/dist.dict ;;
        scenario_parser) dict=fuzz/scenario.dict ;;
    esac
    mkdir -p "fuzz/corpus/$target"
    echo "== $target: $seconds s"
    cargo +nightly fuzz run "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
        -max_total_time="$seconds" -timeout=5 -max_len=4096 -dict="$dict" -print_final_stats=1
done
