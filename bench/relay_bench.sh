#!/usr/bin/env bash
# The first sync over a slow uplink, side by side under hyperfine: the whole
# `fleetplan-apply` (job /bin/true) with the sync relay (`[sync] relay =
# "auto"`: the changed files go to the chief once, and the nodes pass them
# on along a chain over the nodes' network, each forwarding while it
# receives), the same with `relay = "off"` (every node from this machine),
# and `rsync -a` over ssh to every node in parallel.
#
#   bench/relay_bench.sh [N]        (default: 8 nodes; run as root; RUNS=3)
#   RATE=none: unshaped; ONLY=tree or ONLY=big: one workload; BIN_DIR: the
#   bazel-bin of another opt build to measure (the code before a change).
#
# Nodes are sshd containers on one bridge (tests/testbed/cluster.sh). The
# link from this machine to the containers is shaped to $RATE (default
# 100mbit) with a tbf qdisc on the bridge device, whose egress is exactly
# this machine's traffic into the bridge; container-to-container traffic is
# switched inside the bridge and is not shaped. Where the kernel has no tbf,
# it says so and runs unshaped. Workloads: the 2,000-file, 40 MiB tree
# (bench/make_tree.py) and one 256 MiB file (BIG_MIB). Destinations are
# emptied before every run.
#
# Bytes leaving this machine: the bridge's tx_bytes counter around each run
# (frames, so TCP/IP and ssh overhead included), per tool, against the
# bytes a node must hold (tree + the launch agent for fleetplan, tree for
# rsync). Targets: fleetplan's at most 1.1x whatever N; wall time at most
# 0.3x rsync's at 8 nodes.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-8}
runs=${RUNS:-3}
rate=${RATE:-100mbit}
big_mib=${BIG_MIB:-256}
prefix=fprelaybench
export FLEETPLAN_BAZEL_OUTPUT_BASE=${FLEETPLAN_BAZEL_OUTPUT_BASE:-/root/.cache/bazel-ob/relay}

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
bin="${BIN_DIR:-$(opt_build //tools:fleetplan-apply //tools/agent:fleetplan-agent)}"
apply_bin="$bin/tools/fleetplan-apply"
agent="$bin/tools/agent/fleetplan-agent"

work="$(mktemp -d /tmp/relay_bench.XXXXXX)"
DOCKER_HOST="$(tests/testbed/dockerd.sh ensure)"
export DOCKER_HOST
bridge=""
cleanup() {
  [ -z "$bridge" ] || tc qdisc del dev "$bridge" root 2>/dev/null || true
  tests/testbed/cluster.sh down "$prefix" >/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
tests/testbed/cluster.sh up "$n" "$prefix" >"$work/nodes"
bridge="br-$(docker network inspect "$prefix-net" -f '{{.Id}}' | cut -c1-12)"
if [ "$rate" = none ]; then
  shaping="UNSHAPED (RATE=none)"
elif tc qdisc replace dev "$bridge" root tbf rate "$rate" burst 256kb latency 100ms; then
  shaping="this machine -> containers shaped to $rate (tbf on $bridge)"
else
  shaping="UNSHAPED: tbf is not available here"
fi
echo "$shaping; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# shellcheck source=bench/testbed_ssh.sh
. bench/testbed_ssh.sh
testbed_ssh_config "$work/nodes" "$work"
hosts="$(awk '{ print $2 }' "$work/nodes")"

# Runs a command and adds what left this machine into the bridge meanwhile
# to $work/bytes_<name>.
cat >"$work/counted.sh" <<SH
#!/bin/sh
name=\$1; shift
before=\$(cat /sys/class/net/$bridge/statistics/tx_bytes)
"\$@"; status=\$?
after=\$(cat /sys/class/net/$bridge/statistics/tx_bytes)
echo \$((after - before)) >>"$work/bytes_\$name"
exit \$status
SH
chmod +x "$work/counted.sh"

{
  for h in $hosts; do
    echo "ssh -F $work/ssh_config $h 'mkdir -p /srv/bench/old && for d in /srv/bench/ap /srv/bench/rs; do [ ! -e \$d ] || mv \$d \$(mktemp -d /srv/bench/old/XXXXXX)/; done' &"
  done
  echo wait
} >"$work/wipe.sh"

spec() {  # spec RELAY SOURCE
  printf 'name = "relay-bench"\n[defaults]\ntransport = "ssh"\nworkdir = "/srv/bench/ap"\nssh = "bench"\n'
  printf '[ssh.bench]\nuser = "root"\nkey_file = "%s"\nknown_hosts = "%s"\n' "$key" "$work/known_hosts"
  local i=0 h
  for h in $hosts; do
    printf '[[nodes]]\nname = "n%d"\naddress = "%s"\n' "$i" "$h"
    [ "$i" -gt 0 ] || printf 'chief = true\n'
    i=$((i + 1))
  done
  printf '[sync]\nsource = "%s"\nrelay = "%s"\n[job]\nprogram = "/bin/true"\n' "$2" "$1"
}

bench() {  # bench NAME SOURCE [with-off]
  local name=$1 source=$2 with_off=${3:-}
  spec auto "$source" >"$work/relay_$name.toml"
  spec off "$source" >"$work/direct_$name.toml"
  {
    echo 'pids=""'
    for h in $hosts; do
      echo "rsync -a -e 'ssh -F $work/ssh_config' $source/ $h:/srv/bench/rs/ & pids=\"\$pids \$!\""
    done
    # shellcheck disable=SC2016 # for the generated script to expand
    echo 'status=0; for p in $pids; do wait $p || status=1; done; exit $status'
  } >"$work/rsync_$name.sh"
  local apply="$apply_bin --agent=$agent --parallelism=$n --color=never --json"
  local cmds=(-n "fleetplan apply, relay ($name)"
    "$work/counted.sh relay_$name $apply $work/relay_$name.toml >>$work/json_relay_$name")
  if [ -n "$with_off" ]; then
    cmds+=(-n "fleetplan apply, relay off ($name)"
      "$work/counted.sh direct_$name $apply $work/direct_$name.toml >>$work/json_direct_$name")
  fi
  cmds+=(-n "rsync -a x$n in parallel ($name)" "$work/counted.sh rsync_$name sh $work/rsync_$name.sh")
  echo "== $name: first sync to $n nodes (destinations emptied before each run) =="
  hyperfine --runs "$runs" --prepare "sh $work/wipe.sh" --export-json "$work/time_$name.json" "${cmds[@]}"
}

python3 bench/make_tree.py "$work/tree"
python3 bench/make_tree.py "$work/big" 1 $((big_mib << 20))
[ "${ONLY:-}" = big ] || bench tree "$work/tree" with-off
[ "${ONLY:-}" = tree ] || bench big "$work/big"

python3 - "$work" "$n" "$agent" "$shaping" <<'PY'
import json, os, statistics, sys
work, n, agent, shaping = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
agent_bytes = os.path.getsize(agent)
def tree_bytes(root):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
def counted(name):
    with open(f"{work}/bytes_{name}") as f:
        return [int(line) for line in f if line.strip()]
def uplink_reported(name):
    # apply's own --json sync event: per node and total.
    out = []
    with open(f"{work}/json_{name}") as f:
        for line in f:
            event = json.loads(line)
            if event.get("event") == "sync":
                out.append(event)
    return out
print(f"\n{shaping}; {n} nodes; agent {agent_bytes} bytes")
for name, root in (("tree", "tree"), ("big", "big")):
    if not os.path.exists(f"{work}/time_{name}.json"):
        continue  # ONLY= the other one
    data = tree_bytes(f"{work}/{root}")
    with open(f"{work}/time_{name}.json") as f:
        results = {r["command"]: r for r in json.load(f)["results"]}
    rsync = next(r for c, r in results.items() if c.startswith("rsync"))
    for command, r in results.items():
        key = ("relay_" if "relay (" in command else "direct_" if "relay off" in command
               else "rsync_") + name
        need = data + (0 if key.startswith("rsync") else agent_bytes)
        sent = counted(key)
        times = r["times"]
        print(f"{command:40} median {statistics.median(times):7.2f} s "
              f"(min {min(times):.2f}, max {max(times):.2f}, {len(times)} runs)  "
              f"{statistics.median(times) / statistics.median(rsync['times']):.2f}x rsync  "
              f"left this machine {statistics.median(sent) / need:.2f}x of {need} bytes")
        if not key.startswith("rsync"):
            events = uplink_reported(key)
            if events:
                e = events[-1]
                per = ", ".join(f"{x['node']} {x['uplink_bytes']}" for x in e["nodes"])
                print(f"{'':40} apply's sync event: {e['uplink_bytes']} bytes from here "
                      f"in {e['seconds']:.2f} s ({per})")
print("targets: bytes from this machine <= 1.1x; relay wall time <= 0.3x rsync at 8 nodes")
PY
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
