#!/usr/bin/env bash
# The Python module's tests: builds the module (python/) into a virtual
# environment under target/, and runs pytest against the binary of
# target/release (built here if missing). Installs python3-venv and pip with
# apt-get where they are missing and we may (root). The last line is in
# cargo's `test result:` form, so that .ci/run counts these tests with the
# rest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
export CARGO_TARGET_DIR="$target"

if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "python-tests: installing python3-venv and python3-pip" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-pip >/dev/null
  else
    echo "python-tests: needs python3 with venv and pip (apt-get install python3-venv python3-pip)" >&2
    exit 2
  fi
fi

venv="$target/python-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check 'maturin>=1.5,<2' pytest
# pandas only for Result.to_pandas()'s test, which is skipped without it.
"$venv/bin/python" -m pip install -q --disable-pip-version-check pandas ||
  echo "python-tests: pandas not installed; the to_pandas test is skipped" >&2
# maturin is in the venv: no isolated build environment to download it again;
# --locked: the module builds from the committed Cargo.lock.
PATH="$venv/bin:$PATH" MATURIN_PEP517_ARGS="--locked" "$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --no-build-isolation --force-reinstall --no-deps ./python

bin="$target/release/gcsim"
[ -x "$bin" ] || cargo build --release --locked --bin gcsim

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
# From the root, so that `import gcsim` finds the installed module, not python/gcsim.
GCSIM_BIN="$bin" "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests "$@" 2>&1 | tee "$log" || status=$?
summary="$(tail -n 1 "$log")"
count() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0; }
passed="$(count passed)"
failed=$(( $(count failed) + $(count error) ))
skipped="$(count skipped)"
[ "$status" = 0 ] && [ "$passed" -gt 0 ] && result=ok || result=FAILED
[ "$status" = 0 ] && [ "$passed" = 0 ] && status=1
echo "test result: $result. $passed passed; $failed failed; $skipped ignored; 0 measured; 0 filtered out (pytest)"
exit "$status"
