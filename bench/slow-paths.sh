#!/usr/bin/env bash
# The paths that were slow by construction, timed side by side on two gcsim
# binaries: `train` on 10 rows x 20,000 features (the smoothness constant's
# Gram matrix), `gcsim trace` on a 50 MB trace against `gcsim fit` reading
# it, `run --code` with a 2000 x 2000 matrix, and `sweep` of k-batch-async
# at n = 5000 (an event walk of 8n gradients per trial). The big inputs
# are generated here, into a temporary directory.
#
#   bench/slow-paths.sh OLD NEW [LIMIT]
#
# Each command runs once per binary, one thread, with a time limit of LIMIT
# seconds (default 600); a run cut by the limit prints ">LIMIT". Prints one
# line per path: old and new seconds and old/new.
set -euo pipefail

old=${1:?usage: bench/slow-paths.sh OLD NEW [LIMIT]}
new=${2:?usage: bench/slow-paths.sh OLD NEW [LIMIT]}
limit=${3:-600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$(dirname "$0")/trace50.py" "$work/trace.csv"
python3 - "$work" <<'EOF'
import random, sys
work = sys.argv[1]
random.seed(2)
# A 2000 x 2000 code: each worker stores three consecutive partitions.
n = 2000
with open(f"{work}/code.csv", "w") as f:
    for i in range(n):
        row = ["0"] * n
        for k in range(3):
            row[(i + k) % n] = f"{random.uniform(0.5, 2):.3f}"
        f.write(",".join(row) + "\n")
EOF

# Seconds one command takes, or >LIMIT.
seconds() {
    local start end
    start=$(date +%s.%N)
    if ! timeout "$limit" "$@" >/dev/null 2>&1; then
        echo ">$limit"
        return
    fi
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l | xargs printf '%.2f\n'
}

# old/new, or a bound when the old run hit the limit.
ratio() {
    case "$1/$2" in
    ">"*/">"*) echo "-" ;;
    */">"*) echo "<1" ;;
    ">"*) echo "$2" | awk -v l="$limit" '{ printf ">%.1f\n", l / $1 }' ;;
    *) echo "$1 $2" | awk '{ printf "%.1f\n", $1 / $2 }' ;;
    esac
}

compare() {
    local name=$1
    shift
    local a b
    a=$(seconds "$old" "$@")
    b=$(seconds "$new" "$@")
    printf '%-44s old %8s s   new %8s s   old/new %s\n' "$name" "$a" "$b" "$(ratio "$a" "$b")"
}

cd "$work"
compare "train 10 rows x 20000 features" train --data synthetic:rows=10,features=20000 --n 4 --scheme crc --s 1 -q -j 1
compare "fit, 50 MB trace (the reading to match)" fit trace.csv -q
compare "trace, 50 MB trace" trace trace.csv -q
compare "run --code 2000x2000, 20 trials" run --code code.csv --trials 20 -q -j 1
compare "sweep k-batch-async n=5000 K=100, 20000 trials" sweep --n 5000 --k 100 --scheme k-batch-async --trials 20000 -q -j 1
