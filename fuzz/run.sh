#!/bin/sh
# Fuzzes the distribution, scenario, trace and shard parsers, one target
# after another, each for a bounded time or a bounded number of executions.
#
#   fuzz/run.sh [SECONDS] [TARGET...]        # default 120 s per target
#   fuzz/run.sh --runs N [TARGET...]         # N executions per target
#
# Targets: dist_parser scenario_parser trace_parser shard_parser (default:
# all four). Needs the nightly toolchain; installs cargo-fuzz if it is
# absent. New inputs go to fuzz/corpus/<target>/ (not committed), starting
# from the committed seeds in fuzz/seeds/<target>/; a crashing, hanging
# (-timeout=60: wall-clock, so generous on a loaded machine; a real hang still trips it) or out-of-memory input is written to fuzz/artifacts/<target>/
# and the script stops with a non-zero status. Each target's log is kept in
# fuzz/logs/<target>.log, and a summary line gives its executed units
# (libFuzzer's stat::number_of_executed_units) and wall time.
set -eu
limit="-max_total_time=120"
what="120 s"
case ${1:-} in
    --runs)
        [ $# -ge 2 ] || { echo "usage: fuzz/run.sh --runs N [TARGET...]" >&2; exit 2; }
        limit="-runs=$2"
        what="$2 runs"
        shift 2
        ;;
    --time)
        [ $# -ge 2 ] || { echo "usage: fuzz/run.sh --time SECONDS [TARGET...]" >&2; exit 2; }
        limit="-max_total_time=$2"
        what="$2 s"
        shift 2
        ;;
    [0-9]*)
        limit="-max_total_time=$1"
        what="$1 s"
        shift
        ;;
esac
targets=${*:-dist_parser scenario_parser trace_parser shard_parser}
cd "$(dirname "$0")/.."
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
mkdir -p fuzz/logs
# Built first, so that the times below are the fuzzing alone.
for target in $targets; do
    cargo +nightly fuzz build "$target"
done
summary=""
for target in $targets; do
    case $target in
        dist_parser) dict=fuzz/dist.dict max_len=4096 ;;
        scenario_parser) dict=fuzz/scenario.dict max_len=4096 ;;
        trace_parser) dict=fuzz/trace.dict max_len=8192 ;;
        shard_parser) dict=fuzz/shard.dict max_len=8192 ;;
        *) echo "unknown target $target" >&2; exit 2 ;;
    esac
    mkdir -p "fuzz/corpus/$target"
    log=fuzz/logs/$target.log
    echo "== $target: $what"
    start=$(date +%s)
    status=0
    cargo +nightly fuzz run "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
        "$limit" -timeout=60 -max_len="$max_len" -dict="$dict" -print_final_stats=1 \
        >"$log" 2>&1 || status=$?
    seconds=$(($(date +%s) - start))
    units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    grep -e '^stat::' -e '^Done ' "$log" || true
    line="$target: ${units:-?} executions in $seconds s"
    echo "$line"
    summary="$summary$line
"
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$log"
        echo "$target failed (status $status); see $log and fuzz/artifacts/$target/" >&2
        exit "$status"
    fi
done
printf '%s' "$summary"
