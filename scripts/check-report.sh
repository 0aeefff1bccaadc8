#!/usr/bin/env bash
# Renders a scenario's --report page in headless Chromium to a PNG and checks
# the screenshot is not blank (a blank page compresses to a few KB). Installs
# the Debian package `chromium` if it is missing. Not part of `cargo test`.
#
#   scripts/check-report.sh [SCENARIO] [OUT_DIR]
set -euo pipefail

scenario=${1:-scenarios/comm-tradeoff.toml}
out=${2:-target/report-check}
min_kb=${MIN_KB:-40}

cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq chromium
fi

cargo run --release --quiet -- scenario "$scenario" --trials 20000 --out-dir "$out" --report -q >/dev/null
name=$(sed -n 's/^name *= *"\(.*\)".*/\1/p' "$scenario" | head -1)
page="$(pwd)/$out/$name/index.html"
shot="$(pwd)/$out/$name/screenshot.png"
[ -f "$page" ] || { echo "error: no report at $page" >&2; exit 1; }

rm -f "$shot"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --screenshot="$shot" --window-size=1200,2000 "file://$page" 2>/dev/null || true
[ -f "$shot" ] || { echo "error: chromium wrote no screenshot of $page" >&2; exit 1; }
kb=$(( $(stat -c %s "$shot") / 1024 ))
if [ "$kb" -lt "$min_kb" ]; then
    echo "error: $shot is $kb KB, under $min_kb KB: the page looks blank" >&2
    exit 1
fi
echo "ok: $shot ($kb KB)"
