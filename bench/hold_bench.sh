#!/usr/bin/env bash
# Commands through a warm connection holder on N loopback ssh nodes
# (default 8), whole processes under hyperfine, beside `pdsh -R ssh`
# running `true` on the same nodes:
#   fleetplan status SPEC           (a holder already holds the nodes)
#   fleetplan exec SPEC -- true     (the same)
#   the same two with persist = "0" (no holder: a connection per node)
# The nodes hold the launch agent, as an apply leaves them: the holder runs
# exec's command through its agent session on each node.
#
#   bench/hold_bench.sh [N]      (run as root; RUNS=20 by default)
#
# Target: with a warm holder, status and exec at most 0.1x one pdsh.
set -euo pipefail

cd "$(dirname "$0")/.."
n=${1:-8}
runs=${RUNS:-20}

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
bin="${BIN_DIR:-$(opt_build //tools:fleetplan //tools/agent:fleetplan-agent)}/tools"
start_loopback_sshd "$n"

held=$work/held.toml
direct=$work/direct.toml
{
  loopback_spec_head "hold-bench" "$n"
  echo '[job]'
  echo 'program = "/bin/true"'
} >"$held"
sed 's/^\(\[ssh\.g[0-9]*\]\)$/\1\npersist = "0"/' "$held" >"$direct"
loopback_pdsh "$n"
for ((i = 1; i <= n; i++)); do
  install -D -m 0755 "$bin/agent/fleetplan-agent" "$work/nodes/$i/.fleetplan/bin/fleetplan-agent"
done

fp=$bin/fleetplan
for cmd in "$fp status $held" "$fp exec $held -- true" "$fp status $direct" "$pdsh"; do
  bash -c "$cmd" >"$work/first_run" 2>&1 || { tail -20 "$work/first_run"; exit 1; }
done
pgrep -f "__hold --identity" >/dev/null || { echo "no holder runs" >&2; exit 1; }
agents=$(pgrep -fc "$work/nodes/.*fleetplan-agent session" || true)
((agents == n)) || { echo "the holder keeps $agents agent session(s), not $n" >&2; exit 1; }

echo "== $n loopback nodes; load: $(uptime | sed 's/.*load average/load average/') =="
hyperfine -N --warmup 2 --runs "$runs" --export-markdown "$work/result.md" \
  --export-json "$work/result.json" \
  -n "status (held)" "$fp status $held" \
  -n "exec true (held)" "$fp exec $held -- true" \
  -n "status (persist 0)" "$fp status $direct" \
  -n "exec true (persist 0)" "$fp exec $direct -- true" \
  -n "pdsh true" "$pdsh"
cat "$work/result.md"
hyperfine_medians "$work/result.json"
echo "load after: $(uptime | sed 's/.*load average/load average/')"
"$fp" disconnect "$held" >/dev/null
