#!/usr/bin/env bash
# submit.sh K gcsim-args...: a K-task job array of shards of the study, and
# its merge queued to start once every task has succeeded.
#   scripts/slurm/submit.sh 20 sweep --n 100 --s 0..50 --trials 1000000000
# GCSIM (the binary, default `gcsim` on PATH) and GCSIM_WORK (where parts/
# and result.* go, default this directory) reach the jobs through sbatch's
# exported environment.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 K gcsim-args...  (e.g. $0 20 sweep --n 100 --s 0..50 --trials 1000000000)" >&2
  exit 2
fi
k=$1; shift
here="$(cd "$(dirname "$0")" && pwd)"
array=$(sbatch --parsable --array="1-$k" "$here/array.sbatch" "$@")
merge=$(sbatch --parsable --dependency="afterok:${array%%;*}" "$here/merge.sbatch")
echo "array job $array ($k shards), merge job $merge"
