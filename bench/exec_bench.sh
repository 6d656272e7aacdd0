#!/usr/bin/env bash
# `exec` of a trivial command on N ssh nodes, whole processes side by side
# under hyperfine: `fleetplan-exec SPEC -- true` vs `pdsh -R ssh` vs
# `ansible -m command`, all with the same keys and known_hosts.
#
#   bench/exec_bench.sh [N...]        (default: 8 32; run as root; RUNS=10)
#
# Nodes are OpenSSH servers on 127.0.0.1 (bench/loopback_sshd.sh). fleetplan
# does all that exec does: parse the spec, connect, activate each node's
# environment (env.sh, or the spec's before any apply), cd to the workdir.
# Target: at most 0.5x pdsh's wall time at every size.
set -euo pipefail

cd "$(dirname "$0")/.."
sizes=("$@")
((${#sizes[@]})) || sizes=(8 32)
runs=${RUNS:-10}

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
exec_bin="${BIN_DIR:-$(opt_build //tools:fleetplan-exec)}/tools/fleetplan-exec"
start_loopback_sshd_for "${sizes[@]}"

for n in "${sizes[@]}"; do
  spec=$work/exec_$n.toml
  {
    loopback_spec_head "exec-bench-$n" "$n"
    echo '[job]'
    echo 'program = "/bin/true"'
  } >"$spec"
  for ((i = 1; i <= n; i++)); do mkdir -p "$work/nodes/$i"; done
  {
    echo "[all]"
    for ((i = 1; i <= n; i++)); do
      echo "node$i ansible_host=127.0.0.1 ansible_port=${ports[i - 1]}"
    done
    echo "[all:vars]"
    echo "ansible_user=root"
    echo "ansible_ssh_private_key_file=$work/client_key"
    echo "ansible_ssh_common_args='-F $work/ssh_config'"
    echo "ansible_python_interpreter=/usr/bin/python3"
  } >"$work/inventory_$n"
  hosts=$(for ((i = 1; i <= n; i++)); do printf 'node%d,' "$i"; done)

  fleetplan="$exec_bin $spec -- true"
  pdsh="PDSH_SSH_ARGS='-F $work/ssh_config %h' pdsh -R ssh -f $n -w ${hosts%,} true"
  ansible="ANSIBLE_HOST_KEY_CHECKING=True ansible all -i $work/inventory_$n -f $n -m command -a true"
  # Each must succeed once before it is timed.
  for cmd in "$fleetplan" "$pdsh" "$ansible"; do
    bash -c "$cmd" >"$work/first_run" 2>&1 || { tail -20 "$work/first_run"; exit 1; }
  done

  compare=()
  if [[ -n ${COMPARE_BIN_DIR:-} ]]; then
    compare_spec "$spec" "$work/exec_${n}_b.toml"
    compare=(-n "fleetplan exec ($COMPARE_BIN_DIR)"
             "$compare_env $COMPARE_BIN_DIR/tools/fleetplan-exec $work/exec_${n}_b.toml -- true")
    bash -c "${compare[2]}" >"$work/first_run" 2>&1 || { tail -20 "$work/first_run"; exit 1; }
  fi

  echo "== exec of true on $n nodes =="
  hyperfine --warmup 1 --runs "$runs" --export-markdown "$work/result_$n.md" \
    --export-json "$work/result_$n.json" \
    -n "fleetplan exec" "$fleetplan" -n pdsh "$pdsh" -n ansible "$ansible" "${compare[@]}"
  cat "$work/result_$n.md"
  hyperfine_medians "$work/result_$n.json"
done
