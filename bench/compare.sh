#!/usr/bin/env bash
# Times gcsim side by side with a vectorised NumPy program of the same job
# and with the job's sampling floor, path by path, on this machine, in one
# run, and checks that gcsim and NumPy agree.
#
# usage: bench/compare.sh [PATH...]        (default: every path)
#        RUNS=5 bench/compare.sh headline  (runs per side, default 3)
#
# For each path: RUNS rounds of gcsim, then NumPy, then the floor, one after
# the other, each side's time the median of its rounds; wall clock of the
# whole program for gcsim and NumPy (start-up, reading a trace, building a
# code and writing the CSV included), the sampling alone for the floor. One
# line per path: the times in seconds, NumPy/gcsim, gcsim/floor, and whether
# the means agree (bench/agree.py on the last round's CSVs: within 5
# standard errors, configuration by configuration).
#
# The floor (crates/gcsim/examples/floor.rs) draws, with gcsim's per-trial streams on all
# cores, the random numbers the job's model defines and nothing else: D
# values per trial, worker i of n taking every n-th. A path's floor is:
#   headline     n = 100 exp(1) draws (one per worker; gcsim itself draws
#                only the 51 order statistics the sweep reads, so it may go
#                below its floor)
#   shared       n exp(1) draws: the transfer time is a constant
#   transfers    2n: each worker's time and its message's transfer time
#                (gcsim draws the 51 order statistics the sweep reads and
#                takes each configuration's hypoexponential arrival quantile
#                of them, so it goes below its floor)
#   classes      n draws, 50 of exp(1) and 50 of exp(0.5)
#   replay       one uniform step index and a copy of its 64 times
#   bootstrap    n uniform indices into the 2752 recorded times
#   frc          n = 100 000 exp(1) draws (one per worker; every rule of
#                the study reads only the largest, so gcsim draws that
#                alone, by its quantile, and takes every group rule from it
#                by its quantile transform, so it goes far below its floor)
#   rank         n = 50 exp(1) draws and, for each s = 0..10, one
#                Householder QR of the rows of crc's B of the first n - s
#                workers to arrive (--crc-qr): a decoder that reads the
#                rows must factor the ones it decodes from, and n - s is
#                where crc decodes. gcsim's pass (Gram-Schmidt twice where
#                needed, and its certificate) does about twice the QR's
#                work; an SVD where the pass cannot certify its verdict is
#                on top (about 1.05 a trial, each some 12 QRs' time)
#   timeout      n exp(1) draws (the study reads only the largest and the
#                fastest: gcsim draws the largest by its quantile and one
#                uniform that places the fastest before the deadline, or
#                the fastest itself, so it goes below its floor)
#   speculative  n + 25: each worker's task and a fresh draw for each of the
#                n - ceil(0.75 n) = 25 copies (F = 1: every late task gets one)
#                (gcsim draws the top 51 order statistics and the 25 copies,
#                and takes the copies by rank, so it may go below its floor)
#   k-async      n + W K = 100 + 16 x 50 = 900: each worker's first gradient
#                and the K restarts after each of the W = ceil(8n/K) warm-up
#                updates, before the recorded update (with exponential
#                workers gcsim reads the update as the K-th of the trial's
#                order statistics, exact by memorylessness, and draws the
#                staleness as W hypergeometric counts over 20 000 trials, so
#                it goes far below its floor)
#   additive     51 n: crc's load is s+1, so s = 50 sums 51 unit draws per
#                worker, and lower s read the first of them (gcsim draws the
#                51 order statistics the sweep reads and takes each load's
#                Erlang quantile of them, so it goes below its floor)
#   lognormal    n log-normal draws
# The trials make each NumPy run take about 1-10 s on a 2-core machine
# (frc: 10^4 trials), so that neither side's start-up decides a ratio (at
# 200 000 trials, shared's NumPy took 0.6 s and gcsim's fixed start-up and
# pilot were an eighth of its time); each line states them. gcsim runs on
# every core, NumPy on one (its operations here are single-threaded). NumPy
# runs with OPENBLAS_NUM_THREADS=1: the rank path's batched SVDs of 50 x 50
# matrices ran about 9 times slower with OpenBLAS's threads on the shared
# 2-core machine, and the other paths call no BLAS.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
# The NumPy programs import bench/numpy_common.py; keep the tree free of bytecode.
export PYTHONDONTWRITEBYTECODE=1
. bench/paths.sh
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=("${all[@]}")
for p in "${paths[@]}"; do define "$p"; done

cargo build --release --quiet --bin gcsim --example floor
bin=${CARGO_TARGET_DIR:-target}/release
python3 -c "import numpy" 2>/dev/null ||
  python3 -m pip install --quiet numpy ||
  python3 -m pip install --quiet --break-system-packages numpy

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. bench/timing.sh

echo "goal: NumPy/gcsim >= 10 (headline >= 15), gcsim/floor <= 3"
echo "machine: $(uname -m), $(nproc) cores (gcsim on all, NumPy $(python3 -c 'import numpy; print(numpy.__version__)') on one), load average $(load) at the start; median of $runs runs per side, run in turn; seconds of wall clock"
echo
echo "| path | trials | gcsim s | NumPy s | floor s | NumPy/gcsim | gcsim/floor | results |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
legend=()
for p in "${paths[@]}"; do
  define "$p"
  g=() n=() f=()
  for _ in $(seq "$runs"); do
    g+=("$(timed "$work/gcsim.csv" "$bin/gcsim" "${gcsim_args[@]}" --trials "$trials" --format csv --quiet)")
    n+=("$(timed "$work/numpy.csv" env OPENBLAS_NUM_THREADS=1 python3 "${numpy_args[@]}" "$trials")")
    f+=("$("$bin/examples/floor" "${floor_args[0]}" "$trials" "${floor_args[@]:1}")")
  done
  verdict=$(python3 bench/agree.py "$work/gcsim.csv" "$work/numpy.csv" 2> "$work/differ-$p")
  awk -v p="$p" -v t="$trials" -v g="$(median "${g[@]}")" -v n="$(median "${n[@]}")" \
    -v f="$(median "${f[@]}")" -v v="$verdict" \
    'BEGIN { printf "| %s | %d | %.4g | %.4g | %.4g | %.3g | %.3g | %s |\n", p, t, g, n, f, n / g, g / f, v }'
  legend+=("$(printf '%-12s gcsim %s' "$p" "${gcsim_args[*]}")")
done
echo
echo "load average $(load) at the end"
echo "paths (each with --trials as stated, --format csv; the floor of each is described in bench/compare.sh):"
printf '  %s\n' "${legend[@]}"
for p in "${paths[@]}"; do
  if [ -s "$work/differ-$p" ]; then
    echo
    echo "$p: configurations where gcsim and NumPy differ by more than 5 standard errors:"
    sed 's/^/  /' "$work/differ-$p"
  fi
done
