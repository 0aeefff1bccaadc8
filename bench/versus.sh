#!/usr/bin/env bash
# Times two gcsim binaries against each other on the paths of
# bench/compare.sh, each at its trials, one thread, the binaries in turn
# (bench/alternate.sh), and prints one line per path: each binary's median
# CPU milliseconds, NEW/OLD, and whether the outputs' bytes match.
#
# usage: bench/versus.sh OLD NEW [PATH...]     (default: every path)
#        RUNS=5 bench/versus.sh /tmp/gcsim.old target/release/gcsim headline
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/versus.sh OLD NEW [PATH...]" >&2; exit 2; }
old=$1 new=$2
shift 2
for b in "$old" "$new"; do
  [ -x "$b" ] || { echo "$b: not an executable gcsim binary" >&2; exit 2; }
done
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
. bench/paths.sh
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=("${all[@]}")
for p in "${paths[@]}"; do define "$p"; done

echo "| path | trials | old ms | new ms | new/old | bytes |"
echo "|---|---:|---:|---:|---:|---|"
for p in "${paths[@]}"; do
  define "$p"
  out=$(bench/alternate.sh "$runs" "$old" "$new" -- "${gcsim_args[@]}" --trials "$trials")
  o=$(printf '%s\n' "$out" | awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "median") print $(i + 1) }')
  n=$(printf '%s\n' "$out" | awk 'NR == 2 { for (i = 1; i <= NF; i++) if ($i == "median") print $(i + 1) }')
  same=$(printf '%s\n' "$out" | awk 'NR == 2 { print ($0 ~ /same bytes/) ? "same" : "differ" }')
  awk -v p="$p" -v t="$trials" -v o="$o" -v n="$n" -v s="$same" \
    'BEGIN { printf "| %s | %d | %.1f | %.1f | %.3f | %s |\n", p, t, o, n, n / o, s }'
done
