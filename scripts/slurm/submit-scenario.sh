#!/usr/bin/env bash
# submit-scenario.sh K FILE [gcsim scenario flags]: a K-task job array that
# runs the scenario's tables (each task whole studies, trains and plans),
# and its merge (the printed tables and --report) queued to start once
# every task has succeeded.
#   scripts/slurm/submit-scenario.sh 4 scenarios/stragglers-100gpu.toml --out-dir out
# GCSIM and GCSIM_WORK as for submit.sh; --out-dir must be on a shared file system.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 K FILE [gcsim scenario flags]  (e.g. $0 4 scenarios/stragglers-100gpu.toml --out-dir out)" >&2
  exit 2
fi
k=$1; shift
here="$(cd "$(dirname "$0")" && pwd)"
array=$(sbatch --parsable --array="1-$k" "$here/scenario.sbatch" shard "$@")
merge=$(sbatch --parsable --dependency="afterok:${array%%;*}" --job-name=gcsim-scenario-merge \
  --output=gcsim-scenario-merge-%j.log "$here/scenario.sbatch" merge "$@")
echo "array job $array ($k shards), merge job $merge"
