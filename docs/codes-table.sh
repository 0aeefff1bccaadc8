#!/bin/sh
# Regenerates docs/codes-conditioning.csv: condition numbers of every code at
# n = 10, 50, 100, 200 with s = n/10 (frc: the largest s <= n/10 with s+1 | n),
# m = 2, mds k = n - s; exhaustive at n = 10, 1000 random patterns above.
set -u
GCSIM=${GCSIM:-target/release/gcsim}
OUT=${1:-docs/codes-conditioning.csv}
first=1
: > "$OUT"
for n in 10 50 100 200; do
  s=$((n / 10))
  f=$s; while [ $((n % (f + 1))) -ne 0 ]; do f=$((f - 1)); done
  for args in "frc --s $f" "crc --s $s" \
      "comm-efficient --s $s --m 2 --generator gaussian" "comm-efficient --s $s --m 2 --generator vandermonde" \
      "mds --s $s --generator gaussian" "mds --s $s --generator vandermonde"; do
    # shellcheck disable=SC2086
    rows=$("$GCSIM" codes --n "$n" --scheme $args --limit 1000 --seed 0 --format csv)
    if [ $first -eq 1 ]; then echo "$rows" >> "$OUT"; first=0; else echo "$rows" | tail -n +2 >> "$OUT"; fi
  done
done
