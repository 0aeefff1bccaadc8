# Timing helpers shared by the side-by-side benchmarks (bench/compare.sh,
# bench/hybrid.sh). Source it after setting `work` to a scratch directory.

# Sets the variable named $1 to the time in seconds: from bash's own clock
# where it has one (5.0 and later), without a fork; `date` costs about a
# millisecond per reading, which would count in every timed command and
# weigh most on the fastest.
stamp() {
  if [ -n "${EPOCHREALTIME:-}" ]; then
    printf -v "$1" '%s' "${EPOCHREALTIME/,/.}"
  else
    printf -v "$1" '%s' "$(date +%s.%N)"
  fi
}
# The machine's 1, 5 and 15-minute load averages: other jobs on a shared
# machine slow every side, the multi-threaded one most.
load() { uptime | sed 's/.*load averages*: //'; }
# The median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Seconds the command takes, its stdout to the file $1; its stderr is shown
# only if it fails.
timed() {
  local out=$1 t0 t1
  shift
  stamp t0
  "$@" > "$out" 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  stamp t1
  awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
