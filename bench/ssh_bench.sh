#!/usr/bin/env bash
# Fan-out of a trivial command to N ssh nodes: fleetplan's ssh transport
# (//bench:ssh_fanout) vs `pdsh -R ssh` vs `ansible -m command`, side by
# side under hyperfine.
#
#   bench/ssh_bench.sh [N...]        (default: 8 16; run as root)
#
# Nodes are N OpenSSH servers on 127.0.0.1, each in a mount namespace where
# root's ~/.bashrc is masked, so the figures measure the tools and not this
# host's shell start-up. All three tools use the same keys and known_hosts.
set -euo pipefail

cd "$(dirname "$0")/.."
sizes=("$@")
((${#sizes[@]})) || sizes=(8 16)
runs=${RUNS:-10}

bazel --output_base=/root/.cache/bazel-ob/ssh build -c opt --symlink_prefix=/ //bench:ssh_fanout >&2
fanout="$(bazel --output_base=/root/.cache/bazel-ob/ssh info -c opt bazel-bin 2>/dev/null)/bench/ssh_fanout"

work=$(mktemp -d /tmp/ssh_bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p /run/sshd

ssh-keygen -q -t ed25519 -N '' -C '' -f "$work/host_key"
ssh-keygen -q -t ed25519 -N '' -C '' -f "$work/client_key"
cp "$work/client_key.pub" "$work/authorized_keys"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

max=0
for n in "${sizes[@]}"; do ((n > max)) && max=$n; done
ports=()
: >"$work/known_hosts"
: >"$work/ssh_config"
for ((i = 1; i <= max; i++)); do
  port=$(free_port)
  ports+=("$port")
  cat >"$work/sshd_$i.conf" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
PermitRootLogin prohibit-password
MaxStartups 200
LogLevel ERROR
Subsystem sftp /usr/lib/openssh/sftp-server
CONF
  unshare -m sh -c "mount --bind /dev/null /root/.bashrc 2>/dev/null; exec /usr/sbin/sshd -D -e -f $work/sshd_$i.conf" &
  pids+=($!)
  echo "[127.0.0.1]:$port $(cat "$work/host_key.pub")" >>"$work/known_hosts"
  printf 'Host node%d\n  HostName 127.0.0.1\n  Port %d\n' "$i" "$port" >>"$work/ssh_config"
done
cat >>"$work/ssh_config" <<CONF
Host *
  User root
  IdentityFile $work/client_key
  UserKnownHostsFile $work/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
CONF
sleep 1

for n in "${sizes[@]}"; do
  nodes=() hosts=()
  for ((i = 1; i <= n; i++)); do
    nodes+=("127.0.0.1:${ports[i - 1]}")
    hosts+=("node$i")
  done
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
