#!/bin/sh
# Syncing a 2,000-file, 40 MB tree to N ssh nodes, side by side under
# hyperfine: fleetplan's sync phase over the ssh transport alone
# (//bench:sync_fanout: apply's executor running only the plan's sync
# phase, every node at once), the whole `apply`
# of a spec with that [sync] whose job is /bin/true (connect, sync,
# environment, preflight, launch; when nothing changed, all but the sync are
# skipped), and `rsync -a` over ssh to every node in parallel. Targets:
# first sync at most 1.0x rsync, unchanged re-sync at most 0.7x rsync
# (whole processes), and within one process whose
# connections are open, an unchanged re-sync of 8 nodes under 100 ms.
#
#   bench/sync_bench.sh [N...]      (default: 8; e.g. `8 16`; run as root)
#
# Starts a daemon if needed (tests/testbed/dockerd.sh), runs the largest N
# node containers (tests/testbed/cluster.sh) and removes them at the end.
# Both tools use the test bed's key and one known_hosts made here with
# ssh-keyscan, host keys checked strictly. Needs hyperfine, rsync, python3.
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- 8
runs="${RUNS:-10}"
rounds="${ROUNDS:-21}"
prefix=fpsync
ob="${FLEETPLAN_BAZEL_OUTPUT_BASE:-/root/.cache/bazel-ob/sync}"

max=0
for n in "$@"; do [ "$n" -gt "$max" ] && max=$n; done

work="$(mktemp -d /tmp/sync_bench.XXXXXX)"
DOCKER_HOST="$(tests/testbed/dockerd.sh ensure)"
export DOCKER_HOST
trap 'tests/testbed/cluster.sh down "$prefix"; rm -rf "$work"' EXIT
tests/testbed/cluster.sh up "$max" "$prefix" >"$work/nodes"

bazel --output_base="$ob" build -c opt --symlink_prefix=/ \
  //bench:sync_fanout //tools/agent:fleetplan-agent //tools:apply
bazel_bin="$(bazel --output_base="$ob" info -c opt --symlink_prefix=/ bazel-bin)"
bin="$bazel_bin/bench/sync_fanout"
agent="$bazel_bin/tools/agent/fleetplan-agent"
apply_bin="$bazel_bin/tools/fleetplan-apply"

# The tree: 2,000 files, exactly 40 MiB (bench/make_tree.py).
python3 bench/make_tree.py "$work/tree"
echo "tree: $(find "$work/tree" -type f | wc -l) files, $(find "$work/tree" -type f -printf '%s\n' | awk '{s += $1} END {print s}') bytes"

# shellcheck source=bench/testbed_ssh.sh
. bench/testbed_ssh.sh
testbed_ssh_config "$work/nodes" "$work"
hosts="$(awk '{ print $2 }' "$work/nodes")"

for n in "$@"; do
  hosts="$(awk -v n="$n" 'NR <= n { print $2 }' "$work/nodes")"
  node_list="$(awk -v n="$n" 'NR <= n { print $2 }' "$work/nodes" | paste -sd, -)"
  fleetplan="$bin --nodes=$node_list --user=root --key=$key --known_hosts=$work/known_hosts --source=$work/tree --dest=/srv/bench/fp --agent=$agent"
  # rsync to every node at once; fails when any of them fails.
  {
    echo 'pids=""'
    for h in $hosts; do
      echo "rsync -a -e 'ssh -F $work/ssh_config' $work/tree/ $h:/srv/bench/rs/ & pids=\"\$pids \$!\""
    done
    # shellcheck disable=SC2016 # for the generated script to expand
    echo 'status=0; for p in $pids; do wait $p || status=1; done; exit $status'
  } >"$work/rsync_$n.sh"
  rsync="sh $work/rsync_$n.sh"
  # The same sync through apply, the job a no-op.
  {
    printf 'name = "sync-bench"\n[defaults]\ntransport = "ssh"\nworkdir = "/srv/bench/ap"\nssh = "bench"\n'
    printf '[ssh.bench]\nuser = "root"\nkey_file = "%s"\nknown_hosts = "%s"\n' "$key" "$work/known_hosts"
    i=0
    for h in $hosts; do
      printf '[[nodes]]\nname = "n%d"\naddress = "%s"\n' "$i" "$h"
      [ "$i" -gt 0 ] || printf 'chief = true\n'
      i=$((i + 1))
    done
    printf '[sync]\nsource = "%s"\n[job]\nprogram = "/bin/true"\n' "$work/tree"
  } >"$work/spec_$n.toml"
  apply="$apply_bin --agent=$agent --parallelism=$n --color=never $work/spec_$n.toml"
  # Empties both destinations on every node. Moved aside, not deleted: on
  # this host's filesystem, creating files is slow for a while after many
  # were deleted (the kernel steps over recently freed inodes one by one),
  # which would charge the deletion to whichever tool runs next. `down`
  # removes it all.
  {
    for h in $hosts; do
      echo "ssh -F $work/ssh_config $h 'mkdir -p /srv/bench/old && for d in /srv/bench/fp /srv/bench/rs /srv/bench/ap; do [ ! -e \$d ] || mv \$d \$(mktemp -d /srv/bench/old/XXXXXX)/; done' &"
    done
    echo wait
  } >"$work/wipe_$n.sh"
  wipe="sh $work/wipe_$n.sh"

  echo "== $n nodes: first sync (destinations emptied before each run) =="
  hyperfine --warmup 1 --runs "$runs" --prepare "$wipe" --export-json "$work/first_$n.json" \
    -n "fleetplan sync_fanout ($n nodes)" "$fleetplan" \
    -n "rsync -a x$n in parallel" "$rsync" \
    -n "fleetplan apply ($n nodes)" "$apply >/dev/null"

  echo "== $n nodes: unchanged re-sync =="
  hyperfine --warmup 1 --runs "$runs" --export-json "$work/resync_$n.json" \
    -n "fleetplan sync_fanout ($n nodes)" "$fleetplan" \
    -n "rsync -a x$n in parallel" "$rsync" \
    -n "fleetplan apply ($n nodes)" "$apply >/dev/null"

  # Within one process, connections open (what apply's sync phase does):
  # round 1 sends the tree, rounds 2.. find it unchanged.
  echo "== $n nodes: rounds in one process =="
  for _ in 1 2 3; do
    sh -c "$wipe"
    $fleetplan --rounds="$rounds"
  done >"$work/rounds_$n.txt"

  python3 - "$work" "$n" <<'PY'
import json, sys
work, n = sys.argv[1], sys.argv[2]
def means(name):
    with open(f"{work}/{name}_{n}.json") as f:
        return [r["mean"] for r in json.load(f)["results"]]
for name, label, target in (("first", "first sync", 1.0), ("resync", "unchanged re-sync", 0.7)):
    fp, rs, ap = means(name)
    print(f"{label:18} sync phase {fp * 1000:8.1f} ms   apply {ap * 1000:8.1f} ms   "
          f"rsync {rs * 1000:8.1f} ms   ratio to rsync {fp / rs:.2f} (sync phase), "
          f"{ap / rs:.2f} (apply) (target <= {target})")
first, later = [], []
with open(f"{work}/rounds_{n}.txt") as f:
    for line in f:
        _, k, ms = line.split()
        (first if k == "1" else later).append(float(ms))
print(f"in one process     first sync {sum(first) / len(first):8.1f} ms mean; "
      f"unchanged re-sync {sum(later) / len(later):.1f} ms mean, {max(later):.1f} ms max "
      f"over {len(later)} rounds (target < 100 ms for 8 nodes)")
PY
done
