#!/usr/bin/env bash
# From a hang's deadline to its summary on N ssh nodes (default 8): every
# rank prints one line, writes the time, and then blocks without output or
# CPU; with [job] hang_timeout = "5s" the deadline is the last rank's line
# plus 5 s. Attached `fleetplan apply` ends with 124 once the coordinator
# declared the hang, every node's agent took its ranks' stacks and the
# summary naming where each rank stood is printed; the figure is the time
# from the deadline to apply's exit.
#
#   bench/hang_bench.sh [N]         (run as root; RUNS=5 by default)
#   RANKS=python bench/hang_bench.sh   ranks in a Gloo barrier in Python
#                                    (tests/testdata/hang_rank.py): the
#                                    stacks then hold Python frames too
#
# Nodes are OpenSSH servers on 127.0.0.1 (bench/loopback_sshd.sh), one rank
# each. The figure includes the sampling period (1 s at this timeout), the
# stack tools' time on every rank (gdb, eu-stack) and the agents' reports.
set -euo pipefail

cd "$(dirname "$0")/.."
n=${1:-8}
runs=${RUNS:-5}
ranks=${RANKS:-shell}
timeout_s=5

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
bin="${BIN_DIR:-$(opt_build //tools:fleetplan)}/tools"
start_loopback_sshd "$n"

mkdir -p "$work/src"
cat >"$work/src/rank.sh" <<'RANK'
#!/bin/sh
echo "rank $RANK ready"
date +%s%N >"$FP_OUT/last-$RANK"
exec sleep 600.7
RANK
chmod +x "$work/src/rank.sh"
cp tests/testdata/hang_rank.py "$work/src/"

spec=$work/cluster.toml
{
  loopback_spec_head "hang-bench" "$n"
  echo '[sync]'
  echo 'source = "src"'
  echo '[env]'
  echo "FP_OUT = \"$work\""
  echo 'HANG_RANK = "0"'
  echo '[network]'
  echo "master_port = $(free_port)"
  echo '[job]'
  if [ "$ranks" = python ]; then
    echo 'program = "/usr/bin/python3"'
    echo 'args = ["hang_rank.py"]'
  else
    echo 'program = "./rank.sh"'
  fi
  echo "supervisor_port = $(free_port)"
  echo "hang_timeout = \"${timeout_s}s\""
} >"$spec"

echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $n nodes, $ranks ranks, $runs runs"
times=()
for ((r = 1; r <= runs; r++)); do
  rm -f "$work"/last-*
  set +e
  "$bin/fleetplan" apply "$spec" >"$work/apply.out" 2>&1
  status=$?
  set -e
  ended=$(date +%s%N)
  if [ "$status" != 124 ]; then
    echo "run $r: apply exited $status, not 124:" >&2
    tail -n 20 "$work/apply.out" >&2
    exit 1
  fi
  if [ "$ranks" = python ]; then
    # The Python ranks print "ready" after the rendezvous; the log's
    # modification time is the last output.
    last=$(find -L "$work/nodes" -path '*/logs/latest/rank-*.log' -printf '%T@\n' |
           sort -n | tail -1 | awk '{printf "%d", $1 * 1e9}')
  else
    last=$(cat "$work"/last-* | sort -n | tail -1)
  fi
  ms=$(((ended - last) / 1000000 - timeout_s * 1000))
  times+=("$ms")
  echo "run $r: ${ms} ms from the deadline to the summary"
  # The agents have ended before the next launch.
  while pgrep -f 'fleetplan-agent.*--node=node' >/dev/null; do sleep 0.05; done
done
echo "# the last run's summary, as apply printed it:"; tail -n 4 "$work/apply.out"
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "deadline to summary, ms: median $(echo "$sorted" | sed -n "$(((runs + 1) / 2))p"), min $(echo "$sorted" | head -1), max $(echo "$sorted" | tail -1)"
