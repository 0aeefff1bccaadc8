#!/usr/bin/env bash
# Times two gcsim binaries side by side on the code-decodability paths (the
# rank decoder in simulation, and `gcsim codes`), and checks that they print
# the same bytes.
#
# usage: bench/codes-speed.sh OLD NEW [COMMAND...]
#        RUNS=3 bench/codes-speed.sh /tmp/gcsim-base target/release/gcsim
#
# OLD and NEW are paths to gcsim binaries (e.g. one built from main, one
# from a branch). Each COMMAND is one quoted gcsim argument list; without
# any, the list below. For each command: RUNS rounds (default 1), each
# running OLD then NEW, so both see the same load on a shared machine;
# each side's time is the median of its rounds (wall clock of the whole
# program, in seconds). One line per command: the times, OLD/NEW, and
# whether the two outputs (CSV, last round) are byte for byte the same and
# the exit statuses equal; if not, the differing lines of each follow.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '5,6p' "$0" >&2; exit 2; }
old=$1 new=$2
shift 2
runs=${RUNS:-1}
commands=("$@")
[ ${#commands[@]} -gt 0 ] || commands=(
  "sweep --n 50 --s 0..10 --scheme crc --decoder rank --trials 2000"
  "sweep --n 12 --s 0..5 --scheme frc,crc,ignore --decoder rank --trials 20000"
  "run --n 500 --scheme crc --s 50 --decoder rank --trials 20"
  "codes --n 300 --scheme crc --s 30 --limit 100"
  "codes --n 1000 --scheme mds --k 900 --limit 20"
  "codes --n 2000 --scheme frc --s 19 --limit 20"
)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Runs binary $1 on the words of $2, its output into $3 and its exit
# status into $3.status; prints the seconds taken.
timed() {
  local start end status=0
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$1" $2 --format csv --quiet >"$3" 2>/dev/null || status=$?
  end=$(date +%s.%N)
  echo "$status" >"$3.status"
  echo "$end - $start" | bc
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

printf '%-70s %9s %9s %8s  %s\n' command old_s new_s old/new output
for cmd in "${commands[@]}"; do
  : >"$dir/old.t"
  : >"$dir/new.t"
  for _ in $(seq "$runs"); do
    timed "$old" "$cmd" "$dir/old.csv" >>"$dir/old.t"
    timed "$new" "$cmd" "$dir/new.csv" >>"$dir/new.t"
  done
  o=$(median <"$dir/old.t")
  n=$(median <"$dir/new.t")
  same="same (exit $(cat "$dir/old.csv.status"))"
  if ! cmp -s "$dir/old.csv" "$dir/new.csv" || ! cmp -s "$dir/old.csv.status" "$dir/new.csv.status"; then
    same="differs (exit $(cat "$dir/old.csv.status") and $(cat "$dir/new.csv.status"))"
  fi
  printf '%-70s %9.2f %9.2f %8.1f  %s\n' "$cmd" "$o" "$n" "$(echo "$o / $n" | bc -l)" "$same"
  if [ "${same%% *}" = differs ]; then
    diff "$dir/old.csv" "$dir/new.csv" | sed 's/^/    /' || true
  fi
done
