#!/usr/bin/env bash
# test-slurm.sh [TRIALS] [K]: the Slurm recipe on a real, single-node Slurm.
# Installs slurmctld, slurmd, slurm-client and munge from the distribution's
# packages (needs root and apt-get), starts munged, slurmctld and slurmd on
# this machine with a configuration of their own (under a temporary
# directory, given to every Slurm command by SLURM_CONF: /etc/slurm is not
# touched), submits scripts/slurm/submit.sh's job array of K shards of a
# TRIALS-trial sweep and its merge, waits, and checks the merged CSV and
# JSON against the single-machine run byte for byte; then the same for a
# plan in 3 shards (by cluster size) and for a scenario in 2 shards (by
# table) with its report. Defaults: 10^8 trials in 20 shards (minutes on
# two cores). Not part of scripts/test.sh.
set -euo pipefail
trials=${1:-100000000}
k=${2:-20}
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [ "$(id -u)" != 0 ]; then
  echo "test-slurm: needs root (it installs and starts Slurm and munge)" >&2
  exit 2
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
fi
cargo build --release --locked --manifest-path "$root/Cargo.toml" --bin gcsim
gcsim="${CARGO_TARGET_DIR:-$root/target}/release/gcsim"

work="$(mktemp -d /tmp/gcsim-slurm.XXXXXX)"
host="$(hostname -s)"
cpus="$(nproc)"
mem="$(awk '/MemTotal/ {print int($2 / 1024) - 512}' /proc/meminfo)"
mkdir -p "$work/spool/ctld" "$work/spool/d" "$work/log"
cat > "$work/slurm.conf" <<CONF
ClusterName=gcsim-test
SlurmctldHost=$host
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation=$work/spool/ctld
SlurmdSpoolDir=$work/spool/d
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=6917
SlurmdPort=6918
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"

pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$work/slurmctld.pid" ] && kill "$(cat "$work/slurmctld.pid")" 2>/dev/null || true
  [ -f "$work/slurmd.pid" ] && kill "$(cat "$work/slurmd.pid")" 2>/dev/null || true
}
trap stop EXIT

# munge: the packaged key, or a new one; its own socket under $work.
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
fi
mkdir -p /run/munge && chown munge:munge /run/munge
if ! pgrep -x munged >/dev/null; then
  sudo_munge() { runuser -u munge -- "$@"; }
  sudo_munge munged --force
fi
munge -n | unmunge >/dev/null

slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
  sleep 1
done
sinfo

# Waits until the queue is empty, and says how long it took.
drain() {
  local start
  start=$(date +%s)
  while squeue -h | grep -q .; do sleep 5; done
  echo "test-slurm: the queue is empty after $(( $(date +%s) - start )) s"
}

echo "test-slurm: $trials trials in $k shards, in $work"
cd "$work"
args=(sweep --n 100 --s 0..50 --trials "$trials" --seed 7)
GCSIM="$gcsim" GCSIM_WORK="$work" "$root/scripts/slurm/submit.sh" "$k" "${args[@]}" | tee submitted.txt
merge_job="$(awk '{print $NF}' submitted.txt)"
drain
state="$(sacct -n -j "$merge_job" -o State 2>/dev/null | head -1 | tr -d ' ' || true)"
[ -s "$work/result.csv" ] || { echo "test-slurm: no result.csv (merge job $merge_job $state); logs in $work" >&2; tail -n 20 "$work"/gcsim-*.log >&2 || true; exit 1; }

"$gcsim" "${args[@]}" --quiet --format csv > single.csv
"$gcsim" "${args[@]}" --quiet --format json > single.json
cmp single.csv result.csv
cmp single.json result.json
echo "test-slurm: $(ls parts | wc -l) shards merged; result.csv and result.json equal the single run byte for byte"

# A plan sharded by cluster size (each shard whole sizes), by the same
# recipe, against the single plan.
mkdir -p "$work/plan"
plan=(plan --n 16,32,64,128 --ref-n 64 --dist exp:rate=1,p_slow=0.05,slowdown=8 --simulate --trials 200000 --seed 7)
GCSIM="$gcsim" GCSIM_WORK="$work/plan" "$root/scripts/slurm/submit.sh" 3 "${plan[@]}"
drain
"$gcsim" "${plan[@]}" --quiet --format csv > plan/single.csv
"$gcsim" "${plan[@]}" --quiet --format json > plan/single.json
cmp plan/single.csv plan/result.csv
cmp plan/single.json plan/result.json
echo "test-slurm: a plan in 3 shards merged; result.csv and result.json equal the single plan byte for byte"

# A scenario sharded by table, its merge and report, against the single
# run with the same --out-dir (the report quotes the command), moved aside.
scenario="$root/scenarios/stragglers-100gpu.toml"
out="$work/scenario/out"
mkdir -p "$work/scenario"
"$gcsim" scenario "$scenario" --out-dir "$out" --trials 20000 --report --quiet > /dev/null
name="$(ls "$out")"
mv "$out" "$work/scenario/single"
(cd "$work/scenario" && GCSIM="$gcsim" GCSIM_WORK="$work/scenario" \
  "$root/scripts/slurm/submit-scenario.sh" 2 "$scenario" --out-dir "$out" --trials 20000)
drain
diff -r "$work/scenario/single/$name" "$out/$name"
echo "test-slurm: scenario $name in 2 shards merged; its $(ls "$out/$name" | wc -l) files equal the single run's byte for byte"
