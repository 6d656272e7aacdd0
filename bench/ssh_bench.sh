#!/usr/bin/env bash
# Fan-out of a trivial command to N ssh nodes: fleetplan's ssh transport
# (//bench:ssh_fanout) vs `pdsh -R ssh` vs `ansible -m command`, side by
# side under hyperfine.
#
#   bench/ssh_bench.sh [N...]        (default: 8 16; run as root)
#
# Nodes are N OpenSSH servers on loopback addresses (bench/loopback_sshd.sh).
# All three tools use the same keys and known_hosts.
set -euo pipefail

cd "$(dirname "$0")/.."
sizes=("$@")
((${#sizes[@]})) || sizes=(8 16)
runs=${RUNS:-10}

# shellcheck source=bench/loopback_sshd.sh
. bench/loopback_sshd.sh
fanout="$(opt_build //bench:ssh_fanout)/bench/ssh_fanout"
start_loopback_sshd_for "${sizes[@]}"

for n in "${sizes[@]}"; do
  nodes=() hosts=()
  for ((i = 1; i <= n; i++)); do
    nodes+=("${addrs[i - 1]}:${ports[i - 1]}")
    hosts+=("node$i")
  done
  {
    echo "[all]"
    for ((i = 1; i <= n; i++)); do
      echo "node$i ansible_host=${addrs[i - 1]} ansible_port=${ports[i - 1]}"
    done
    echo "[all:vars]"
    echo "ansible_user=root"
    echo "ansible_ssh_private_key_file=$work/client_key"
    echo "ansible_ssh_common_args='-F $work/ssh_config'"
    echo "ansible_python_interpreter=/usr/bin/python3"
  } >"$work/inventory_$n"
  node_list=$(IFS=,; echo "${nodes[*]}")
  host_list=$(IFS=,; echo "${hosts[*]}")

  fleetplan="$fanout --nodes=$node_list --user=root --key=$work/client_key --known_hosts=$work/known_hosts -- true"
  pdsh="PDSH_SSH_ARGS='-F $work/ssh_config %h' pdsh -R ssh -f $n -w $host_list true"
  ansible="ANSIBLE_HOST_KEY_CHECKING=True ansible all -i $work/inventory_$n -f $n -m command -a true"
  # Each must succeed once before it is timed.
  for cmd in "$fleetplan" "$pdsh" "$ansible"; do bash -c "$cmd" >/dev/null; done

  echo "== $n nodes =="
  hyperfine --warmup 1 --runs "$runs" --export-markdown "$work/result_$n.md" \
    -n fleetplan "$fleetplan" -n pdsh "$pdsh" -n ansible "$ansible"
  cat "$work/result_$n.md"
done
