#!/usr/bin/env bash
# Reruns every example command of README.md (and a few more that cover each
# subcommand's file outputs) and records what each prints: stdout, stderr,
# exit status, and a hash of every file it writes. Two records compare with
# `diff -r`: a refactor that must not change behaviour leaves them equal.
#
#   scripts/readme-examples.sh OUT_DIR        # uses target/release/gcsim
#   GCSIM=/path/to/gcsim scripts/readme-examples.sh OUT_DIR
#   diff -r before/ after/
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
gcsim="${GCSIM:-$root/target/release/gcsim}"
[ -x "$gcsim" ] || { echo "no gcsim binary at $gcsim; run cargo build --release" >&2; exit 2; }

# The README's example commands: lines of its code blocks that start with
# `gcsim` or `$ gcsim`, with backslash continuations joined; usage templates
# ([...], FILE, TRACE) and the cluster recipes (shell variables, globs) are
# not runnable as they stand and are left out.
mapfile -t commands < <(awk '
  /^```/ { inb = !inb; next }
  !inb { next }
  cont != "" { cont = cont " " $0; if ($0 !~ /\\$/) { print cont; cont = "" } ; next }
  /^(\$ )?gcsim / { line = $0; sub(/^\$ /, "", line)
                    if (line ~ /\\$/) { cont = line } else { print line } }
' "$root/README.md" | sed -e 's/\\ */ /g' -e 's/ *#.*$//' -e 's/  */ /g' |
  grep -v -e '\[' -e 'FILE' -e 'TRACE' -e '\$' -e '\*')

commands+=(
  "gcsim sweep --n 100 --s 0..50"
  "gcsim sweep --n 20 --s 0..4 --scheme uncoded,ignore,frc,crc,comm-efficient,mds --m 1,2 --trials 20000 --comm-time 0.5 --link shared --out x.json"
  "gcsim sweep --n 20 --s 0..4 --scheme frc,crc --comm-time 0.5 --trials 20000 --plot comm.svg --plot-metric mean"
  "gcsim sweep --n 20 --s 0..4 --scheme frc,crc --comm-dist exp:rate=2 --trials 20000 --plot commdist.svg"
  "gcsim sweep --n 12 --s 0..3 --scheme frc,crc --trials 1500000 --shard 1/2 --out s1.json"
  "gcsim sweep --n 12 --s 0..3 --scheme frc,crc --trials 1500000 --shard 2/2 --out s2.json"
  "gcsim merge s1.json s2.json --out merged.csv"
  "gcsim sweep --n 30 --s 0..5 --scheme crc,frc --workers 20:exp:rate=1 --workers 10:pareto:scale=1,shape=3 --trials 20000 --format json"
  "gcsim run --n 30 --scheme mds --k 20 --dist lognormal:mu=0,sigma=1 --load-model additive --trials 20000 --format json"
  "gcsim run --n 30 --scheme comm-efficient --s 3 --m 2 --load-model affine --unit-time 0.2 --trials 20000 --plot tail.png"
  "gcsim plan --n 20 --dist weibull:scale=1,shape=2 --simulate --trials 5000 --format json"
  "gcsim plan --n 20 --objective deadline:3 --trials 5000 --format csv"
  "gcsim fit data/trace-llm-8w.csv --format json"
  "gcsim codes --scheme frc --n 12 --s 2 --format json"
  "gcsim verify --trials 20000 --seed 3"
)
for f in "$root"/scenarios/*.toml; do
  commands+=("gcsim scenario scenarios/$(basename "$f") --trials 5000 --out-dir scen")
done

i=0
for cmd in "${commands[@]}"; do
  i=$((i + 1))
  formats=("")
  case "$cmd" in
    *--format*|*--out*|*scenario*|*verify*|*merge*) ;;
    *) formats+=("table") ;;
  esac
  for fmt in "${formats[@]}"; do
    name="$(printf '%02d' "$i")${fmt:+-$fmt}"
    work="$(mktemp -d)"
    cp -r "$root/data" "$root/scenarios" "$work/"
    # The shard examples continue from the files the previous commands wrote.
    [ -d "$out/.carry" ] && cp -r "$out/.carry/." "$work/"
    args="${cmd#gcsim }${fmt:+ --format $fmt}"
    echo "$cmd${fmt:+ --format $fmt}" >"$out/$name.command"
    set +e
    (cd "$work" && eval "\"$gcsim\" $args" >"$out/$name.stdout" 2>"$out/$name.stderr")
    echo "$?" >"$out/$name.status"
    set -e
    (cd "$work" && find . -type f -newer "$out/$name.command" ! -path './data/*' ! -path './scenarios/*' \
      -exec sha256sum {} + | sort -k2) >"$out/$name.files" || true
    # Shard files are kept for the merge that follows.
    mkdir -p "$out/.carry"; (cd "$work" && cp -f s?.json "$out/.carry/" 2>/dev/null) || true
    rm -rf "$work"
  done
done
rm -rf "$out/.carry"
echo "ran ${#commands[@]} commands; records in $out"
