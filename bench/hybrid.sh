#!/usr/bin/env bash
# Times `gcsim run --parallel` side by side with bench/numpy_hybrid.py, a
# NumPy program that evaluates the same pipeline schedule as max-plus
# recursions vectorised over trials, in one run on this machine, and checks
# that they agree.
#
# usage: bench/hybrid.sh [PATH...]        (default: every path)
#        RUNS=5 bench/hybrid.sh large     (runs per side, default 3)
#        GCSIM=/tmp/gcsim bench/hybrid.sh (that binary; default: build this tree's)
#
# Paths (issue 60's performance goal: every hybrid path at least 10 times
# faster than NumPy, the 1,024-rank job under 10 s):
#   large   dp=32, pp=8, tp=4 (1,024 ranks), M=16, 1F1B, exp(1) ranks with
#           5% 8x stragglers, 10^4 trials
#   issue   the issue's command: dp=2, pp=4, tp=1, M=8, 1F1B, exp(1), 10^5
#   lognormal  dp=2, pp=4, tp=1, M=8, GPipe, log-normal(0, 0.5) ranks with
#           5% 8x stragglers, the last stage 25% heavier, 10^5
#   frc     dp=4, pp=4, tp=1, M=8, 1F1B, frc s=1 across replicas (each runs
#           16 microbatches), exp(1) with 5% 8x stragglers, 10^5
#   timeout dp=4, pp=4, tp=1, M=8, 1F1B, timeout T=30 across replicas,
#           exp(1) with 5% 8x stragglers, 10^5
#
# For each path: RUNS rounds of gcsim then NumPy, in turn, each side's time
# the median of its rounds, wall clock of the whole program (start-up and
# writing the CSV included). gcsim runs on every core, NumPy on one. One
# line per path: the times, NumPy/gcsim, each side's mean ± standard error,
# and whether they agree: the means within 5 standard errors of their
# difference, and the bubble fractions within 5 of NumPy's standard error
# times sqrt(2) (gcsim's, on as many trials of the same law, is about as
# large).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
export PYTHONDONTWRITEBYTECODE=1
all=(large issue lognormal frc timeout)
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=("${all[@]}")

# define PATH: its trials and the job's flags, which both programs read.
define() {
  case $1 in
    large)
      trials=10000
      job=(--parallel dp=32,pp=8,tp=4 --microbatches 16 --schedule 1f1b --dist exp:rate=1,p_slow=0.05,slowdown=8) ;;
    issue)
      trials=100000
      job=(--parallel dp=2,pp=4,tp=1 --microbatches 8 --schedule 1f1b --backward-ratio 2 --dist exp:rate=1) ;;
    lognormal)
      trials=100000
      job=(--parallel dp=2,pp=4,tp=1 --microbatches 8 --schedule gpipe --stage-work 1,1,1,1.25
        --dist lognormal:mu=0,sigma=0.5,p_slow=0.05,slowdown=8) ;;
    frc)
      trials=100000
      job=(--parallel dp=4,pp=4,tp=1 --microbatches 8 --schedule 1f1b --scheme frc --s 1
        --dist exp:rate=1,p_slow=0.05,slowdown=8) ;;
    timeout)
      trials=100000
      job=(--parallel dp=4,pp=4,tp=1 --microbatches 8 --schedule 1f1b --scheme timeout --timeout 30
        --dist exp:rate=1,p_slow=0.05,slowdown=8) ;;
    *) echo "bench/hybrid.sh: no path $1 (paths: ${all[*]})" >&2; exit 2 ;;
  esac
}
for p in "${paths[@]}"; do define "$p"; done

if [ -n "${GCSIM:-}" ]; then
  gcsim=$GCSIM
else
  cargo build --release --quiet --bin gcsim
  gcsim=${CARGO_TARGET_DIR:-target}/release/gcsim
fi
python3 -c "import numpy" 2>/dev/null ||
  python3 -m pip install --quiet numpy ||
  python3 -m pip install --quiet --break-system-packages numpy

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. bench/timing.sh
# The two CSVs' rows of NumPy's scheme: "gcsim mean ± se | NumPy mean ± se | verdict".
verdict() {
  python3 - "$1" "$2" <<'EOF'
import csv, math, sys

def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))

n = rows(sys.argv[2])[0]
g = next((r for r in rows(sys.argv[1]) if r["scheme"] == n["scheme"]), None)
if g is None:
    print(f"- | - | DIFFER: no {n['scheme']} row from gcsim")
    sys.exit()
mg, sg, mn, sn = (float(v) for v in (g["mean"], g["std_err"], n["mean"], n["std_err"]))
z = (mg - mn) / math.hypot(sg, sn)
problems = [f"mean z = {z:.1f}"] if abs(z) > 5 else []
if g.get("bubble_fraction"):
    bg, bn, bs = float(g["bubble_fraction"]), float(n["bubble_fraction"]), float(n["bubble_fraction_se"])
    zb = (bg - bn) / (math.sqrt(2) * bs)
    if abs(zb) > 5:
        problems.append(f"bubble_fraction {bg:.5g} vs {bn:.5g}, z = {zb:.1f}")
else:
    problems.append("no bubble_fraction from gcsim")
state = "agree" if not problems else "DIFFER: " + "; ".join(problems)
print(f"{mg:.6g} ± {sg:.2g} | {mn:.6g} ± {sn:.2g} | {state} (z = {z:.2f})")
EOF
}

echo "goal: NumPy/gcsim >= 10 on every path, large under 10 s"
echo "machine: $(uname -m), $(nproc) cores (gcsim on all, NumPy $(python3 -c 'import numpy; print(numpy.__version__)') on one), load average $(load) at the start; median of $runs runs per side, run in turn; seconds of wall clock"
echo
echo "| path | trials | gcsim s | NumPy s | NumPy/gcsim | gcsim mean | NumPy mean | results |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
legend=()
for p in "${paths[@]}"; do
  define "$p"
  g=() n=()
  for _ in $(seq "$runs"); do
    g+=("$(timed "$work/gcsim.csv" "$gcsim" run "${job[@]}" --trials "$trials" --format csv --quiet)")
    n+=("$(timed "$work/numpy.csv" env OPENBLAS_NUM_THREADS=1 python3 bench/numpy_hybrid.py "${job[@]}" "$trials")")
  done
  awk -v p="$p" -v t="$trials" -v g="$(median "${g[@]}")" -v n="$(median "${n[@]}")" -v v="$(verdict "$work/gcsim.csv" "$work/numpy.csv")" \
    'BEGIN { printf "| %s | %d | %.4g | %.4g | %.3g | %s |\n", p, t, g, n, n / g, v }'
  legend+=("$(printf '%-10s gcsim run %s' "$p" "${job[*]}")")
done
echo
echo "load average $(load) at the end"
echo "paths (each with --trials as stated, --format csv):"
printf '  %s\n' "${legend[@]}"
