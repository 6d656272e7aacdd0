#!/usr/bin/env bash
# `fleetplan top --once` on N loopback ssh nodes (default 8) with a job
# running on them (one rank each, printing `step N`), whole processes under
# hyperfine, beside `pdsh -R ssh` running `true` on the same nodes. The
# apply before leaves the nodes held (the connection holder), as a user's
# apply does; each top reads every node's figures through it.
#
#   bench/top_bench.sh [N]      (run as root; RUNS=10 by default)
#
# Target: top --once at most 1.0x one pdsh.
set -euo pipefail

cd "$(dirname "$0")/.."
n=${1:-8}
runs=${RUNS:-10}

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
# BIN_DIR: the bazel-bin of another opt build to measure.
bin="${BIN_DIR:-$(opt_build //tools:fleetplan)}/tools"
start_loopback_sshd "$n"

mkdir -p "$work/src"
cat >"$work/src/rank.sh" <<'RANK'
#!/bin/sh
i=0
while :; do i=$((i + 1)); echo "step $i"; sleep 1; done
RANK
chmod +x "$work/src/rank.sh"
spec=$work/cluster.toml
{
  loopback_spec_head "top-bench" "$n"
  echo '[sync]'
  echo 'source = "src"'
  echo '[network]'
  echo "master_port = $(free_port)"
  echo '[job]'
  echo 'program = "./rank.sh"'
  echo "supervisor_port = $(free_port)"
  echo 'progress = "step (\\d+)"'
} >"$spec"
loopback_pdsh "$n"

fp=$bin/fleetplan
# The job stopped and the holder closed whatever happens; said when not.
trap '"$fp" stop "$spec" >"$work/end.out" 2>&1 || true
  "$fp" disconnect "$spec" >>"$work/end.out" 2>&1 || cat "$work/end.out" >&2
  cleanup_loopback_sshd' EXIT
"$fp" apply --detach "$spec" >"$work/apply.out" 2>&1 || { tail -20 "$work/apply.out"; exit 1; }
sleep 3
"$fp" top --once "$spec" || { echo "top failed" >&2; exit 1; }
bash -c "$pdsh" >/dev/null

echo "== $n loopback nodes; load: $(uptime | sed 's/.*load average/load average/') =="
hyperfine -N --warmup 2 --runs "$runs" --export-markdown "$work/result.md" \
  --export-json "$work/result.json" \
  -n "top --once" "$fp top --once $spec" \
  -n "pdsh true" "$pdsh"
cat "$work/result.md"
hyperfine_medians "$work/result.json" "top --once" "pdsh true"
echo "(target: top --once at most 1.0x pdsh true)"
echo "load after: $(uptime | sed 's/.*load average/load average/')"
