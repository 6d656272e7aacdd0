#!/usr/bin/env bash
# The edit loop: a user edits one file of a 2,000-file, 40 MiB project
# (bench/make_tree.py) and relaunches on N ssh nodes. Whole processes side
# by side under hyperfine, one file edited before every run:
#   fleetplan-apply SPEC (sync, environment, preflight, launch of a job that
#     exits at once, followed to its end), against
#   `rsync -a` to every node in parallel, then `pdsh -R ssh` starting the
#     same job on every node.
#
#   bench/edit_loop_bench.sh [N]      (default 8; run as root; RUNS=10)
#
# BIN_DIR: the bazel-bin of an opt build to measure (default: built here);
# COMPARE_BIN_DIR: another one (the main branch's) measured in the same run,
# on the same servers with workdirs of its own, so that neither side's
# agent or records disturb the other's.
#
# Nodes are OpenSSH servers on 127.0.0.1 (bench/loopback_sshd.sh), each
# with a workdir of its own. Target: fleetplan at most 0.4x the peer.
# Then one apply --json shows where fleetplan's time goes, step by step.
set -euo pipefail

cd "$(dirname "$0")/.."
n=${1:-8}
runs=${RUNS:-10}
export FLEETPLAN_BAZEL_OUTPUT_BASE=${FLEETPLAN_BAZEL_OUTPUT_BASE:-/root/.cache/bazel-ob/relay}

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
bin="${BIN_DIR:-$(opt_build //tools:fleetplan-apply //tools/agent:fleetplan-agent)}"
apply_bin="$bin/tools/fleetplan-apply"
agent="$bin/tools/agent/fleetplan-agent"
start_loopback_sshd "$n"

python3 bench/make_tree.py "$work/tree"
mkdir -p "$work/rs"
printf '#!/bin/sh\nexit 0\n' >"$work/tree/job.sh"
chmod +x "$work/tree/job.sh"
spec=$work/edit_$n.toml
{
  loopback_spec_head "edit-loop-$n" "$n"
  echo '[sync]'
  echo "source = \"$work/tree\""
  echo '[job]'
  echo 'program = "./job.sh"'
} >"$spec"
hosts=$(for ((i = 1; i <= n; i++)); do printf 'node%d,' "$i"; done)
{
  echo 'pids=""'
  for ((i = 1; i <= n; i++)); do
    echo "rsync -a -e 'ssh -F $work/ssh_config' $work/tree/ node$i:$work/rs/$i/ & pids=\"\$pids \$!\""
  done
  # shellcheck disable=SC2016 # for the generated script to expand
  echo 'status=0; for p in $pids; do wait $p || status=1; done; [ $status = 0 ] || exit 1'
  echo "PDSH_SSH_ARGS='-F $work/ssh_config %h' pdsh -R ssh -f $n -w ${hosts%,} 'cd $work/rs/1 && ./job.sh'"
} >"$work/peer.sh"
edit="echo \"# \$(date +%s%N)\" >>$work/tree/pkg0/f0001.dat"
apply="$apply_bin --agent=$agent --parallelism=$n --color=never $spec"
compare=()
if [[ -n ${COMPARE_BIN_DIR:-} ]]; then
  compare_spec "$spec" "$work/edit_b.toml"
  compare_apply="$compare_env $COMPARE_BIN_DIR/tools/fleetplan-apply --agent=$COMPARE_BIN_DIR/tools/agent/fleetplan-agent --parallelism=$n --color=never $work/edit_b.toml"
  compare=(-n "fleetplan apply ($COMPARE_BIN_DIR)" "$compare_apply >/dev/null")
  bash -c "$compare_apply" >"$work/first" 2>&1 || { tail -20 "$work/first"; exit 1; }
fi

# The first sync of both, untimed.
bash -c "$apply" >"$work/first" 2>&1 || { tail -20 "$work/first"; exit 1; }
sh "$work/peer.sh" >"$work/first" 2>&1 || { tail -20 "$work/first"; exit 1; }

echo "== edit one file, relaunch on $n nodes (load: $(cut -d' ' -f1-3 /proc/loadavg)) =="
hyperfine --warmup 1 --runs "$runs" --prepare "$edit" --export-markdown "$work/result.md" \
  --export-json "$work/result.json" \
  -n "fleetplan apply" "$apply >/dev/null" -n "rsync -a x$n + pdsh" "sh $work/peer.sh >/dev/null" \
  "${compare[@]}"
cat "$work/result.md"
python3 - "$work/result.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"]
fp, peer = statistics.median(r[0]["times"]), statistics.median(r[1]["times"])
print(f"median ratio {fp / peer:.2f}x (target <= 0.4x)")
if len(r) > 2:
    print(f"compared build: median ratio {statistics.median(r[2]['times']) / peer:.2f}x")
PY

echo "== where one apply's time goes (when each phase's last step ended) =="
bash -c "$edit"
# Each line is stamped as it arrives, by the shell (python, started
# after the apply, would see every line at once), then read.
start=$EPOCHREALTIME
$apply_bin --agent="$agent" --parallelism="$n" --json "$spec" |
  while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$work/stamped"
/usr/bin/python3 - "$start" "$work/stamped" <<'PY'
import json, sys
start, last, first_step = float(sys.argv[1]), {}, None
for stamped in open(sys.argv[2]):
    at, line = stamped.split(" ", 1)
    at = (float(at) - start) * 1000
    event = json.loads(line)
    if event.get("event") == "step":
        first_step = at if first_step is None else first_step
        last[event["phase"]] = at
    elif event.get("event") == "done":
        last["done (job ended, followed)"] = at
label = "first step event (spec, source hashing, connect)"
print(f"{label:50} {first_step:7.1f} ms")
for phase, at in last.items():
    print(f"{phase:50} {at:7.1f} ms")
PY
