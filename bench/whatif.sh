#!/usr/bin/env bash
# Times `gcsim whatif` side by side with the what-if artifact's own analysis,
# analyzer/wia.py of ByteDance-Seed/StragglerAnalysis (Lin et al., OSDI 2025),
# on the same per-op traces (data/whatif), in one run, and checks that the
# two agree on S.
#
# usage: WIA=/path/to/StragglerAnalysis bench/whatif.sh [SE|ST|AR...]  (default: all three)
#        RUNS=5 ...                (runs per side, default 5)
#        GCSIM=/tmp/gcsim ...      (that binary; default: build this tree's)
#        PYTHON=/venv/bin/python   (one with the artifact's requirements;
#                                   default: a venv made in bench/.wia-venv)
#
# The artifact is not on a package registry: clone it from GitHub and give
# its directory as WIA. Its analysis needs pandas < 2.2, numpy < 2 and
# pyarrow < 18 (which refuses numpy < 2 from version 18), with scipy, tqdm,
# ujson and pyyaml; the default venv installs exactly those.
#
# For each job: RUNS rounds of gcsim then wia.py, in turn, each side's time
# the median of its rounds, wall clock of the whole program (start-up,
# reading the Parquet file and writing the result included). gcsim also
# computes M_S and M_W, which the artifact leaves to two more scripts
# (compute_ms.py, compute_mw.py) not timed here. One line per job: the
# times, wia.py/gcsim, both S values and whether they agree to 1e-5.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
: "${WIA:?set WIA to a checkout of github.com/ByteDance-Seed/StragglerAnalysis}"
[ -f "$WIA/analyzer/wia.py" ] || { echo "bench/whatif.sh: $WIA/analyzer/wia.py not found" >&2; exit 2; }
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(SE ST AR)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. bench/timing.sh

if [ -z "${PYTHON:-}" ]; then
  venv=bench/.wia-venv
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet "pandas<2.2" "numpy<2" "pyarrow<18" scipy tqdm ujson pyyaml
  fi
  PYTHON=$venv/bin/python
fi
if [ -z "${GCSIM:-}" ]; then
  cargo build --release --quiet --bin gcsim
  GCSIM=target/release/gcsim
fi

echo "# gcsim whatif against the artifact's wia.py, median of $runs runs each; load $(load)"
printf '%-4s %10s %10s %9s %20s %20s %s\n' job gcsim_s wia_s ratio S_gcsim S_wia agree
for job in "${jobs[@]}"; do
  trace=data/whatif/trace-$job.parquet
  meta=data/whatif/meta-$job.yaml
  ours=() theirs=()
  for _ in $(seq "$runs"); do
    ours+=("$(timed "$work/ours.json" "$GCSIM" whatif "$trace" --meta "$meta" --format json)")
    rm -rf "$work/dump"
    theirs+=("$(timed "$work/wia.log" env PYTHONPATH="$WIA" "$PYTHON" "$WIA/analyzer/wia.py" \
      --metadata "$meta" --trace "$trace" --dump-dir "$work/dump" --root "$work/dump")")
  done
  result=$(find "$work/dump" -name "$job.json" | head -1)
  [ -n "$result" ] || { echo "bench/whatif.sh: wia.py wrote no $job.json" >&2; exit 1; }
  "$PYTHON" - "$job" "$(median "${ours[@]}")" "$(median "${theirs[@]}")" "$work/ours.json" "$result" <<'PY'
import json, sys
job, ours, theirs, a, b = sys.argv[1:]
s_ours = json.load(open(a))["slowdown"]
s_wia = json.load(open(b))["blocking_slowdown"]
agree = "yes" if abs(s_ours - s_wia) <= 1e-5 * s_wia else "NO"
print(f"{job:<4} {float(ours):10.4f} {float(theirs):10.4f} {float(theirs) / float(ours):8.1f}x {s_ours:20.16f} {s_wia:20.16f} {agree}")
PY
done
