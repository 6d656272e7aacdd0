#!/usr/bin/env bash
# apply of an unchanged spec on N Slurm nodes against the job step it
# stands for run by hand with srun, whole processes side by side under
# hyperfine, on the Slurm test bed (tests/testbed/slurm_cluster.sh: slurmctld
# and N slurmd in containers, this machine the login node).
#
#   bench/slurm_apply_bench.sh [N]      (default 3; run as root; RUNS=10)
#
# fleetplan: `fleetplan-apply SPEC` after a first apply, so the allocation
#   exists and every step is recorded: it finds the allocation through
#   libslurm, reads each node's records and the job's state, takes and gives
#   back the apply lock, and changes nothing. The workdir is one the nodes
#   and this machine see at the same path (the test bed's shared folder, as
#   most clusters mount home on the login node), so those are read and
#   taken here with no job step (plugins/slurm/state_here.h);
#   NODES_ONLY=1 puts it under /shared, which only the nodes see, and then
#   they cost one job step (the state step, which also carries the lock's
#   commands on the chief).
# by hand: `srun --jobid=J --overlap -N N --ntasks-per-node=1 ./rank.sh` in
#   the same allocation, the job's program run once on every node.
# Target: at most 1.2x the srun's wall time.
set -euo pipefail

cd "$(dirname "$0")/.."
n=${1:-3}
runs=${RUNS:-10}
prefix="fpbench-slurm-$$"
work="$(mktemp -d)"

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh  # opt_build
bin="$(opt_build //tools:fleetplan-apply //tools/agent:fleetplan-agent)" || exit 1
apply="$bin/tools/fleetplan-apply"

export DOCKER_HOST="$(tests/testbed/dockerd.sh ensure)"
cleanup() {
  "$apply" --destroy "$work/bench.toml" >/dev/null 2>&1 || true
  tests/testbed/slurm_cluster.sh down "$prefix" || true
  rm -rf "$work"
}
trap cleanup EXIT
SLURM_CONF="$(tests/testbed/slurm_cluster.sh up "$n" "$prefix")"
export SLURM_CONF

# The test bed's shared folder as this machine has it (beside login/).
workdir="$(dirname "$(dirname "$SLURM_CONF")")/shared/slurm-bench"
[ "${NODES_ONLY:-0}" = 1 ] && workdir=/shared/slurm-bench

mkdir -p "$work/src"
cp tests/testdata/rank.sh "$work/src/rank.sh"
cat >"$work/bench.toml" <<SPEC
name = "slurm-bench"
[defaults]
transport = "slurm"
workdir = "$workdir"
[slurm]
partition = "debug"
nodes = $n
[sync]
source = "src"
[env]
FP_OUT = "/tmp"
FAIL_RANK = "none"
[job]
program = "./rank.sh"
SPEC

"$apply" "$work/bench.toml" >"$work/first_apply" 2>&1 || { tail -20 "$work/first_apply"; exit 1; }
job="$(squeue --me --noheader --name=fleetplan-slurm-bench --format=%i)"
fleetplan="$apply $work/bench.toml"
by_hand="srun --jobid=$job --overlap --nodes=$n --ntasks-per-node=1 --chdir=$workdir --export=ALL,FP_OUT=/tmp,FAIL_RANK=none ./rank.sh"
for cmd in "$fleetplan" "$by_hand"; do
  bash -c "$cmd" >"$work/first_run" 2>&1 || { tail -20 "$work/first_run"; exit 1; }
done

echo "== apply of an unchanged spec on $n Slurm nodes, workdir $workdir; load: $(cut -d' ' -f1-3 /proc/loadavg) =="
hyperfine -N --warmup 1 --runs "$runs" --export-markdown "$work/result.md" \
  --export-json "$work/result.json" \
  -n "fleetplan apply (unchanged)" "$fleetplan" -n "srun by hand" "$by_hand"
cat "$work/result.md"
# Median and spread (min..max) of each, and the ratio of the medians.
python3 - "$work/result.json" <<'PY'
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
medians = {}
for r in results:
    times = [t * 1000 for t in r["times"]]
    medians[r["command"]] = statistics.median(times)
    print(f"{r['command']}: median {medians[r['command']]:.1f} ms, "
          f"spread {min(times):.1f}..{max(times):.1f} ms, {len(times)} runs")
names = [r["command"] for r in results]
print(f"ratio of medians: {medians[names[0]] / medians[names[1]]:.2f}x (target at most 1.2x)")
PY
"$apply" --destroy "$work/bench.toml" >/dev/null
left="$(squeue --noheader | wc -l)"
echo "jobs left in squeue after --destroy: $left"
