#!/usr/bin/env bash
# A lost node's cost: on N loopback ssh nodes (default 8) running a job
# with `min_nodes = N - 1`, one worker's launch agent and ranks are frozen
# (SIGSTOP: a node that drops off the network says nothing, it falls
# silent), and the time is taken from that moment to every remaining rank
# running the next generation, in its parts:
#   detection  the loss to the coordinator's noting it (job.json's lost
#              node, its time): about heartbeat_timeout
#   stop       to the last rank of the old generation ended (each rank
#              writes the time when SIGTERM reaches it)
#   start      to the last rank of the new generation started (each rank
#              writes the time, its RANK, WORLD_SIZE and restart count)
#
#   bench/elastic_bench.sh [N]   (run as root; RUNS=5; HEARTBEAT=5s)
#
# BIN_DIR: the bazel-bin of an opt build to measure (default: built here).
# Goal: under heartbeat_timeout + 3 s in all.
set -euo pipefail

cd "$(dirname "$0")/.."
n=${1:-8}
runs=${RUNS:-5}
heartbeat=${HEARTBEAT:-5s}

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
bin="${BIN_DIR:-$(opt_build //tools:fleetplan //tools/agent:fleetplan-agent)}/tools"
start_loopback_sshd "$n"
loopback_pdsh "$n"
trap 'cleanup_loopback_sshd' EXIT

mkdir -p "$work/src"
cat >"$work/src/rank.sh" <<'RANK'
#!/bin/sh
# Notes when it started (and as which rank of how many, in which
# generation) and when it was told to stop; runs until then.
echo "$(date +%s%N) $RANK $WORLD_SIZE $TORCHELASTIC_RESTART_COUNT" >>"$FP_OUT/started"
trap 'echo "$(date +%s%N) $RANK $TORCHELASTIC_RESTART_COUNT" >>"$FP_OUT/stopped"; exit 143' TERM
while :; do sleep 0.05; done
RANK
chmod +x "$work/src/rank.sh"

spec=$work/elastic.toml
{
  loopback_spec_head "elastic-bench-$n" "$n"
  echo '[sync]'
  echo 'source = "src"'
  echo '[env]'
  echo "FP_OUT = \"$work/out\""
  echo '[network]'
  echo "master_port = $(free_port)"
  echo '[job]'
  echo 'program = "./rank.sh"'
  echo "supervisor_port = $(free_port)"
  echo "heartbeat_timeout = \"$heartbeat\""
  echo "min_nodes = $((n - 1))"
} >"$spec"

# ms NANOS: milliseconds since the loss.
ms() { echo $((($1 - lost_at) / 1000000)); }

rows=()
for ((r = 1; r <= runs; r++)); do
  rm -rf "$work/out"; mkdir -p "$work/out"
  "$bin/fleetplan" apply --detach "$spec" >"$work/apply.out" 2>&1 ||
    { cat "$work/apply.out"; exit 1; }
  until [[ -f $work/out/started && $(wc -l <"$work/out/started") -ge $n ]]; do sleep 0.05; done
  # The last node's agent and its rank: frozen, as a node cut off.
  victim=node$n
  agent_pid=$(pgrep -f "fleetplan-agent launch .*--node=$victim( |$)" | head -1)
  [[ -n $agent_pid ]] || { echo "no agent found for $victim" >&2; exit 1; }
  frozen=("$agent_pid" $(pgrep -P "$agent_pid" || true))
  lost_at=$(date +%s%N)
  kill -STOP "${frozen[@]}"
  # Every remaining rank running generation 1.
  until [[ $(awk '$4 == 1' "$work/out/started" 2>/dev/null | wc -l) -ge $((n - 1)) ]]; do
    sleep 0.02
    (($(date +%s%N) - lost_at > 120000000000)) && { echo "no new generation in 120 s" >&2; exit 1; }
  done
  started=$(awk '$4 == 1 {print $1}' "$work/out/started" | sort -n | tail -1)
  stopped=$(awk '$3 == 0 {print $1}' "$work/out/stopped" | sort -n | tail -1)
  noted=$(python3 - "$work/nodes/1/.fleetplan/nodes/node1/logs/job.json" <<'PY'
import datetime, json, sys
state = json.load(open(sys.argv[1]))
lost = state.get("lost") or []
at = lost[-1].get("at") if lost else None
if at is None:
    print(0)
else:
    t = datetime.datetime.fromisoformat(at.replace("Z", "+00:00"))
    print(int(t.timestamp() * 1e9))
PY
)
  sizes=$(awk '$4 == 1 {print $3}' "$work/out/started" | sort -u | tr '\n' ' ')
  row="$(ms "$noted") $(ms "$stopped") $(ms "$started")"
  echo "run $r: detected $(ms "$noted") ms, old ranks stopped $(ms "$stopped") ms, new generation running $(ms "$started") ms (WORLD_SIZE now $sizes)"
  rows+=("$row")
  kill -CONT "${frozen[@]}" 2>/dev/null || true
  "$bin/fleetplan" stop "$spec" >/dev/null 2>&1 || true
  while pgrep -f "fleetplan-agent launch .*--node=node" >/dev/null; do sleep 0.05; done
done

printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
rows = [list(map(int, line.split())) for line in sys.stdin]
for i, part in enumerate(["detected", "old ranks stopped", "new generation running"]):
    v = sorted(r[i] for r in rows)
    print(f"{part:24} median {statistics.median(v):7.0f} ms  ({v[0]}..{v[-1]}, {len(v)} runs)")
' 
echo "goal: new generation running within heartbeat_timeout ($heartbeat) + 3 s"
