#!/usr/bin/env bash
# Times builds of gcsim against each other on one job, in turn, on one
# thread: the steadier measure of a change on a shared machine, whose speed
# drifts between runs by more than most changes move it.
#
# usage: bench/alternate.sh RUNS BIN... -- GCSIM-ARGS...
#   e.g. bench/alternate.sh 15 /tmp/gcsim.old target/release/gcsim -- \
#          sweep --n 100 --s 0..50 --trials 600000
#
# Each round runs every binary once, in the order given, with --threads 1
# --quiet --format csv (its stderr shown only if it fails); each run's CPU
# time is perf's task-clock (Debian's linux-perf), or user + sys from
# /usr/bin/time where perf is missing. One
# line per binary: the minimum, lower quartile and median in milliseconds,
# and whether its output's bytes match the first binary's.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: bench/alternate.sh RUNS BIN... -- GCSIM-ARGS..." >&2; exit 2; }
runs=$1
shift
case $runs in '' | *[!0-9]* | 0) echo "RUNS must be a whole number above 0, got \`$runs\`" >&2; exit 2 ;; esac
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] || { echo "no \`--\` before gcsim's arguments" >&2; exit 2; }
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Runs the command with its output to $1; prints its CPU milliseconds.
cpu_ms() {
  local out=$1
  shift
  if command -v perf >/dev/null; then
    perf stat -x, -e task-clock -o "$work/stat" "$@" > "$out" 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
    awk -F, '/task-clock/ { print $1 }' "$work/stat"
  else
    /usr/bin/time -o "$work/stat" -f "%U %S" "$@" > "$out" 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
    tail -1 "$work/stat" | awk '{ print 1000 * ($1 + $2) }'
  fi
}
for _ in $(seq "$runs"); do
  for i in "${!bins[@]}"; do
    cpu_ms "$work/out-$i.csv" "${bins[$i]}" "$@" --threads 1 --quiet --format csv >> "$work/times-$i"
  done
done
for i in "${!bins[@]}"; do
  same=$(cmp -s "$work/out-0.csv" "$work/out-$i.csv" && echo "same bytes" || echo "OUTPUT DIFFERS")
  sort -g "$work/times-$i" | awk -v b="${bins[$i]}" -v s="$same" \
    '{ v[NR] = $1 } END { printf "%-32s min %8.1f  q25 %8.1f  median %8.1f ms  %s\n", b, v[1], v[int((NR + 3) / 4)], v[int((NR + 1) / 2)], s }'
done
