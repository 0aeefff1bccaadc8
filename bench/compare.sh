#!/usr/bin/env bash
# Times, in one run on this machine: the sampling floor (n x trials draws with
# gcsim's streams on all cores), the headline job
#   gcsim sweep --n 100 --s 0..50 --trials T
# end to end, and the same job as a vectorised NumPy program; prints the
# ratios; then the general paths (heterogeneous workers, a trace, a law
# drawn per worker and sorted) against the same floor. Each is the median of
# three runs.
#
# usage: bench/compare.sh [trials]      (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-1000000}
cargo build --release --quiet --bin gcsim --example floor
python3 -c "import numpy" 2>/dev/null || python3 -m pip install --quiet numpy
now() { date +%s.%N; }
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
time_cmd() {
  local runs=()
  for _ in 1 2 3; do
    local t0; t0=$(now)
    "$@" > /dev/null
    runs+=("$(echo "$(now) - $t0" | bc -l)")
  done
  median3 "${runs[@]}"
}
floor_runs=()
for _ in 1 2 3; do floor_runs+=("$(./target/release/examples/floor 100 "$trials")"); done
floor=$(median3 "${floor_runs[@]}")
gcsim=$(time_cmd ./target/release/gcsim sweep --n 100 --s 0..50 --trials "$trials" --format csv --quiet)
numpy=$(time_cmd python3 bench/numpy_sweep.py "$trials")
# The general paths: a heterogeneous cluster, the bootstrap from a trace,
# and a law drawn one worker at a time and sorted (log-normal).
classes=$(time_cmd ./target/release/gcsim sweep --n 100 --s 0..50 --trials "$trials" --format csv --quiet \
  --workers 50:exp:rate=1 --workers 50:exp:rate=0.5)
trace=$(time_cmd ./target/release/gcsim sweep --n 100 --s 0..50 --trials "$trials" --format csv --quiet \
  --dist trace:path=data/trace-llm-64w.csv)
lognormal=$(time_cmd ./target/release/gcsim sweep --n 100 --s 0..50 --trials "$trials" --format csv --quiet \
  --dist lognormal:mu=0,sigma=1)
printf 'machine: %s, %s cores\n' "$(uname -m)" "$(nproc)"
printf 'trials: %s, n = 100, s = 0..50 (51 configurations)\n' "$trials"
printf 'sampling floor (n x trials draws): %8.3f s\n' "$floor"
printf 'gcsim sweep, end to end:           %8.3f s\n' "$gcsim"
printf 'numpy program, end to end:         %8.3f s\n' "$numpy"
printf 'gcsim / floor: %.2f   numpy / gcsim: %.1f\n' "$(echo "$gcsim / $floor" | bc -l)" "$(echo "$numpy / $gcsim" | bc -l)"
printf 'general paths (same sweep), end to end, and / floor:\n'
printf '  50 exp(1) + 50 exp(0.5) workers: %8.3f s  %.2f\n' "$classes" "$(echo "$classes / $floor" | bc -l)"
printf '  trace bootstrap (64-worker LLM):  %8.3f s  %.2f\n' "$trace" "$(echo "$trace / $floor" | bc -l)"
printf '  log-normal, draws + sort:         %8.3f s  %.2f\n' "$lognormal" "$(echo "$lognormal / $floor" | bc -l)"
