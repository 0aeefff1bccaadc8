# Timing helpers shared by the side-by-side benchmarks (bench/compare.sh,
# bench/hybrid.sh). Source it after setting `work` to a scratch directory.

now() { date +%s.%N; }
# The machine's 1, 5 and 15-minute load averages: other jobs on a shared
# machine slow every side, the multi-threaded one most.
load() { uptime | sed 's/.*load averages*: //'; }
# The median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Seconds the command takes, its stdout to the file $1; its stderr is shown
# only if it fails.
timed() {
  local out=$1 t0
  shift
  t0=$(now)
  "$@" > "$out" 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }'
}
