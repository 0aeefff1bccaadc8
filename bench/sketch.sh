#!/usr/bin/env bash
# How often gcsim's percentile refinement passes run on the README's jobs,
# and what they cost when they do; then bench/sketch.py (the sketches'
# accuracy on the same jobs).
#
#   bench/sketch.sh [GCSIM]      (default target/release/gcsim)
#
# Environment: SEEDS (seeds 0..SEEDS-1 per job and trial count; default 10),
# TRIALS (trial counts, `bench` meaning the path's own in bench/paths.sh;
# default "bench 1e5 1e6"), PY (a Python with NumPy, datasketches,
# fastdigest and ddsketch; default python3), NO_SKETCH=1 to skip sketch.py.
#
# How it knows, without changing gcsim:
# - passes: gcsim prints `note: the percentiles needed K passes over the
#   trials ...` on stderr when K > 1 (src/job.rs); no note means one pass;
# - cost: for a run that refines, its task-clock (perf stat, one thread, the
#   mean of REPEATS runs, default 10) against the same job at the nearest
#   seed that does not refine, and, where gdb is present, the wall time of each
#   call of Runner::pass (pass 1 is the main pass, later calls refinements:
#   engine/started.rs `finish`) from main() to exit.
set -euo pipefail
cd "$(dirname "$0")/.."
gcsim=${1:-target/release/gcsim}
seeds=${SEEDS:-10}
trial_list=${TRIALS:-bench 1e5 1e6}
repeats=${REPEATS:-10}
py=${PY:-python3}
source bench/paths.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passes() { # args: trials seed -> passes of the path defined last
  "$gcsim" "${gcsim_args[@]}" --trials "$1" --seed "$2" --format csv -o "$tmp/out.csv" 2>"$tmp/err" >/dev/null ||
    { echo "?"; return; }
  local k
  k=$(sed -n 's/.*percentiles needed \([0-9]*\) passes.*/\1/p' "$tmp/err")
  echo "${k:-1}"
}

task_clock() { # args: trials seed -> mean task-clock in ms on one thread
  perf stat -r "$repeats" -x, -e task-clock "$gcsim" "${gcsim_args[@]}" --trials "$1" --seed "$2" -j 1 \
    --format csv -o "$tmp/out.csv" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'
}

# gdb: the wall time of every call of Runner::pass, and of main() to exit.
symbol=""
if command -v gdb >/dev/null; then
  symbol=$(gdb -q -batch -ex "info functions Runner>::pass::h" "$gcsim" 2>/dev/null |
    awk '/^0x.*Runner>::pass::h/ && !/closure/ {sub(/^0x[0-9a-f]+ +/, ""); print; exit}')
  cat >"$tmp/passes.py" <<EOF
import gdb, time, os
T0 = time.perf_counter(); ev = []
class End(gdb.FinishBreakpoint):
    def __init__(self, f, i): super().__init__(f, internal=True); self.i = i; self.silent = True
    def stop(self): ev[self.i][2] = time.perf_counter() - T0; return False
    def out_of_scope(self): pass
class Start(gdb.Breakpoint):
    def stop(self):
        i = len(ev); ev.append(["pass", time.perf_counter() - T0, None]); End(gdb.newest_frame(), i); return False
class Main(gdb.Breakpoint):
    def stop(self): ev.append(["main", time.perf_counter() - T0, None]); return False
gdb.execute("set pagination off")
Main("main", internal=True)
Start("'$symbol'", internal=True)
def report(_):
    end = time.perf_counter() - T0
    t0 = next(a for k, a, _ in ev if k == "main")
    ps = [(a, b) for k, a, b in ev if k == "pass"]
    out = " ".join(f"pass{i + 1}={1e3 * (b - a):.1f}ms" for i, (a, b) in enumerate(ps))
    open("$tmp/gdb.out", "w").write(f"main->exit={1e3 * (end - t0):.1f}ms before-pass1={1e3 * (ps[0][0] - t0):.1f}ms {out}\n")
gdb.events.exited.connect(report)
gdb.execute("run")
EOF
fi

echo "# refinement passes of gcsim ($gcsim) on bench/paths.sh's jobs, seeds 0..$((seeds - 1))"
printf '%-12s %9s %s\n' path trials "runs that refine (seed:passes)"
refining=()
for p in "${all[@]}"; do
  define "$p"
  for t in $trial_list; do
    if [ "$t" = bench ]; then t=$trials; fi
    t=$(printf '%.0f' "$t")
    # rank decodes with QR per trial: its own 400 trials only
    if [ "$p" = rank ] && [ "$t" != "$trials" ]; then continue; fi
    hits=()
    for seed in $(seq 0 $((seeds - 1))); do
      k=$(passes "$t" "$seed")
      if [ "$k" != 1 ]; then hits+=("$seed:$k"); refining+=("$p $t $seed"); fi
    done
    printf '%-12s %9s %d of %d  %s\n' "$p" "$t" "${#hits[@]}" "$seeds" "${hits[*]:-}"
  done
done

if [ ${#refining[@]} -gt 0 ]; then
  echo
  echo "# cost of the refinement passes where they ran"
  for run in "${refining[@]}"; do
    read -r p t seed <<<"$run"
    define "$p"
    other=$seed
    for s in $(seq $((seed + 1)) $((seed + 50))); do
      if [ "$(passes "$t" "$s")" = 1 ]; then other=$s; break; fi
    done
    line="$p trials=$t seed=$seed"
    if command -v perf >/dev/null; then
      a=$(task_clock "$t" "$seed")
      b=$(task_clock "$t" "$other")
      line+=$(awk -v a="$a" -v b="$b" -v s="$other" \
        'BEGIN {printf "  task-clock (1 thread) %.1f ms vs %.1f ms at seed %s: +%.0f%%, refinement %.0f%% of the run", a, b, s, 100 * (a - b) / b, 100 * (a - b) / a}')
    fi
    if [ -n "$symbol" ]; then
      rm -f "$tmp/gdb.out"
      gdb -q -batch -x "$tmp/passes.py" --args "$gcsim" "${gcsim_args[@]}" --trials "$t" --seed "$seed" \
        --format csv -o "$tmp/out.csv" >/dev/null 2>&1 || true
      line+="; gdb: $(cat "$tmp/gdb.out" 2>/dev/null || echo 'no timing')"
    fi
    echo "$line"
  done
fi

if [ "${NO_SKETCH:-}" != 1 ]; then
  echo
  "$py" bench/sketch.py --gcsim "$gcsim"
fi
