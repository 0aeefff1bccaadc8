#!/usr/bin/env bash
# Regenerates the guide's performance table (docs/guide/src/performance-table.md)
# from one run of bench/compare.sh on this machine: every path, gcsim against
# NumPy and against the sampling floor; then bench/hybrid.sh (the
# hybrid-parallel paths against NumPy), bench/trace-vs-fit.sh (`gcsim trace`
# against `gcsim fit` on one trace) and, when WIA names a checkout of the
# what-if artifact, bench/whatif.sh (`gcsim whatif` against its wia.py). The
# page includes the file; nothing else writes it, and it is never edited by
# hand.
#
# usage: bench/table.sh            (RUNS=5 bench/table.sh for five runs a side)
#        WIA=/path/to/StragglerAnalysis bench/table.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "bench/table.sh needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
out=docs/guide/src/performance-table.md
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
bench/compare.sh > "$tmp"
{
  echo "<!-- Written by bench/table.sh; rerun it rather than editing this file. -->"
  echo
  echo "Machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || echo 'unknown CPU'); gcsim $(target/release/gcsim --version | awk '{print $2}') at commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
  echo
  sed -n '/^machine:/,$p' "$tmp"
  echo
  echo "Large runs (wall clock on every core, peak resident memory; GNU time):"
  echo
  echo "| command | seconds | peak RSS |"
  echo "|---|---:|---:|"
  for args in "sweep --n 100 --s 0..50 --trials 10000000" "sweep --n 100000 --s 0..50 --trials 10000"; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$tmp.time" target/release/gcsim $args --format csv --quiet > /dev/null
    read -r secs kb < "$tmp.time"
    echo "| \`gcsim $args\` | $secs | $((kb / 1024)) MB |"
  done
  rm -f "$tmp.time"
  echo
  echo "Hybrid parallelism (\`bench/hybrid.sh\`, gcsim on every core, NumPy on one):"
  echo
  echo '```text'
  GCSIM=target/release/gcsim bench/hybrid.sh
  echo '```'
  echo
  echo "Trace analysis against fit on the same 50 MB trace (\`bench/trace-vs-fit.sh\`, 3 runs each):"
  echo
  echo '```text'
  bench/trace-vs-fit.sh target/release/gcsim 3
  echo '```'
  echo
  if [ -n "${WIA:-}" ]; then
    echo "What-if analysis (\`bench/whatif.sh\`, against the artifact's \`wia.py\`):"
    echo
    echo '```text'
    GCSIM=target/release/gcsim bench/whatif.sh
    echo '```'
  else
    echo "What-if analysis: not measured in this run (\`bench/whatif.sh\` needs WIA, a checkout of the artifact)."
  fi
} > "$out"
echo "wrote $out"
