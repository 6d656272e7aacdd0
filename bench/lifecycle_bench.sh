#!/usr/bin/env bash
# A job's life on N ssh nodes (default 8), side by side with the peer a
# user would reach for:
#   (a) `status` of a running job vs `pdsh -R ssh` running one trivial
#       command on the same nodes (hyperfine, whole processes);
#   (b) the time from a rank's failure to no rank left on any node: the
#       failing rank writes the time just before it exits; the script polls
#       the process table every 10 ms until no rank of any node is left.
#
#   bench/lifecycle_bench.sh [N]      (run as root; RUNS=10 by default)
#
# Nodes are OpenSSH servers on 127.0.0.1 (bench/loopback_sshd.sh), each
# with its own workdir; they share this machine's process table, which is
# what lets (b) watch every node at once.
set -euo pipefail

cd "$(dirname "$0")/.."
n=${1:-8}
runs=${RUNS:-10}

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
# BIN_DIR: the bazel-bin of another opt build to measure (the code before a
# change, run right before or after this one); COMPARE_BIN_DIR: one more,
# whose status of its own job (the same spec on workdirs of its own) is
# timed in the same hyperfine run as (a).
bin="${BIN_DIR:-$(opt_build //tools:fleetplan-apply //tools:fleetplan-status //tools:fleetplan-stop)}/tools"
start_loopback_sshd "$n"

mkdir -p "$work/src"
cat >"$work/src/rank.sh" <<'RANK'
#!/bin/sh
# Rank FAIL_RANK fails after FAIL_AFTER seconds, writing the time first;
# every other rank waits (marked, so the bench can find them).
if [ "$RANK" = "$FAIL_RANK" ]; then
  sleep "$FAIL_AFTER"
  date +%s%N >"$FP_OUT/failed_at"
  exit 1
fi
exec sleep 600.5
RANK
chmod +x "$work/src/rank.sh"

write_spec() {  # FAIL_RANK
  local spec=$work/cluster.toml
  {
    loopback_spec_head "lifecycle-bench" "$n"
    echo '[sync]'
    echo 'source = "src"'
    echo '[env]'
    echo "FP_OUT = \"$work\""
    echo "FAIL_RANK = \"$1\""
    echo 'FAIL_AFTER = "2"'
    echo '[network]'
    echo "master_port = $(free_port)"
    echo '[job]'
    echo 'program = "./rank.sh"'
    echo "supervisor_port = $(free_port)"
  } >"$spec"
  echo "$spec"
}

ranks_left() { pgrep -f '^sleep 600.5$' | wc -l; }

echo "== (a) status of a running $n-node job vs pdsh running \`true\` on the same nodes =="
spec=$(write_spec none)
"$bin/fleetplan-apply" --detach "$spec" >/dev/null
hosts=$(for ((i = 1; i <= n; i++)); do printf 'node%d,' "$i"; done)
pdsh="PDSH_SSH_ARGS='-F $work/ssh_config %h' pdsh -R ssh -f $n -w ${hosts%,} true"
status="$bin/fleetplan-status $spec"
bash -c "$pdsh" >/dev/null
$status | tail -1
compare=()
if [[ -n ${COMPARE_BIN_DIR:-} ]]; then
  compare_spec "$spec" "$work/cluster_b.toml"
  $compare_env "$COMPARE_BIN_DIR/tools/fleetplan-apply" --detach "$work/cluster_b.toml" >/dev/null
  compare=(-n "fleetplan status ($COMPARE_BIN_DIR)" "$compare_env $COMPARE_BIN_DIR/tools/fleetplan-status $work/cluster_b.toml")
  $compare_env "$COMPARE_BIN_DIR/tools/fleetplan-status" "$work/cluster_b.toml" | tail -1
fi
hyperfine --warmup 2 --runs "$runs" --export-markdown "$work/status.md" \
  --export-json "$work/status.json" \
  -n "fleetplan status" "$status" -n "pdsh true" "$pdsh" "${compare[@]}"
cat "$work/status.md"
hyperfine_medians "$work/status.json"
"$bin/fleetplan-stop" "$spec" | tail -1
if [[ -n ${COMPARE_BIN_DIR:-} ]]; then
  $compare_env "$COMPARE_BIN_DIR/tools/fleetplan-stop" "$work/cluster_b.toml" | tail -1
fi
[[ ${ONLY_STATUS:-} == 1 ]] && exit 0

echo "== (b) a rank's failure to no rank left on any of $n nodes, $runs runs =="
spec=$(write_spec $((n - 2)))
times=()
for ((r = 1; r <= runs; r++)); do
  rm -f "$work/failed_at"
  "$bin/fleetplan-apply" --detach "$spec" >/dev/null
  until [ -f "$work/failed_at" ]; do sleep 0.01; done
  while [ "$(ranks_left)" -gt 0 ]; do sleep 0.01; done
  gone=$(date +%s%N)
  ms=$(((gone - $(cat "$work/failed_at")) / 1000000))
  times+=("$ms")
  echo "run $r: ${ms} ms"
  # The agents have ended too before the next launch.
  while pgrep -f 'fleetplan-agent launch .*--node=node' >/dev/null; do sleep 0.05; done
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
echo "failure to nothing left, ms: median $(echo "$sorted" | sed -n "$(((runs + 1) / 2))p"), min $(echo "$sorted" | head -1), max $(echo "$sorted" | tail -1) (target: under 3000)"
