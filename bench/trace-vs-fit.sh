#!/usr/bin/env bash
# `gcsim trace` against `gcsim fit` on the same 50 MB trace (64 workers,
# exponential times plus a floor of 0.5, written by bench/trace50.py):
# the trace analysis should cost about what fit's reading and fitting of
# the file costs. The trace is generated into a temporary directory, or
# read from TRACE when given.
#
#   bench/trace-vs-fit.sh [GCSIM] [RUNS] [TRACE]
#
# GCSIM defaults to target/release/gcsim, RUNS to 5. Each command runs RUNS
# times, alternating, on rayon's default threads; prints each command's
# median CPU time (user + system, which other load on the machine disturbs
# less than the wall time) and median wall time, then trace/fit of both.
set -euo pipefail

gcsim=${1:-target/release/gcsim}
runs=${2:-5}
trace=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -z "$trace" ]; then
    trace=$work/trace.csv
    python3 "$(dirname "$0")/trace50.py" "$trace"
fi

# One run of `gcsim ARGS`: "cpu wall" in seconds.
measure() {
    /usr/bin/time -f '%U %S %e' -o "$work/time" "$gcsim" "$@" >/dev/null 2>&1
    awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$work/time"
}

: >"$work/fit"
: >"$work/trace"
for _ in $(seq "$runs"); do
    measure fit "$trace" -q >>"$work/fit"
    measure trace "$trace" -q >>"$work/trace"
done

# The median of column $2 of file $1.
median() {
    sort -g -k"$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

fit_cpu=$(median "$work/fit" 1)
fit_wall=$(median "$work/fit" 2)
trace_cpu=$(median "$work/trace" 1)
trace_wall=$(median "$work/trace" 2)
printf 'medians of %d runs, %s\n' "$runs" "$("$gcsim" --version 2>/dev/null || echo "$gcsim")"
printf '%-6s cpu %7.2f s   wall %7.2f s\n' fit "$fit_cpu" "$fit_wall" trace "$trace_cpu" "$trace_wall"
awk -v a="$trace_cpu" -v b="$fit_cpu" -v c="$trace_wall" -v d="$fit_wall" \
    'BEGIN { printf "trace/fit   cpu %.2f   wall %.2f\n", a / b, c / d }'
