# Sourced by the ssh benchmarks: N OpenSSH servers on 127.0.0.1, each in a
# mount namespace where root's ~/.bashrc is masked, so that figures measure
# the tools and not this host's shell start-up.
#
#   start_loopback_sshd N
#
# leaves: $work (a temporary folder, removed on exit, with client_key,
# known_hosts and ssh_config where node1..nodeN are the servers), ports[]
# (node i listens on ports[i-1], on 127.0.0.1 and on addrs[i-1], an address
# of its own in 127.0.0.0/8 for specs, where addresses are unique), and
# stops the servers on exit.
#
#   loopback_pdsh N
#
# makes the nodes' workdirs and the holder's folder and sets $pdsh.
#
#   hyperfine_medians RESULT.json [A B]
#
# prints each command's median and spread, and the ratio of A's to B's.
#
#   loopback_spec_nodes N
#   loopback_spec_head NAME N
#
# prints a spec's [[nodes]] node1..nodeN (node1 the chief, workdir
# $work/nodes/<i>) and their [ssh.g<i>] groups, for a spec on these servers.

# The benchmarks' binaries: builds TARGETS with -c opt in an output base
# of their own (the working tree's build stays) and prints its bazel-bin.
opt_build() {
  local ob=${FLEETPLAN_BAZEL_OUTPUT_BASE:-/root/.cache/bazel-ob/ssh}
  bazel --output_base=$ob build -c opt --symlink_prefix=/ "$@" >&2 || return 1
  bazel --output_base=$ob info -c opt bazel-bin 2>/dev/null
}

# start_loopback_sshd for as many nodes as the largest of SIZES.
start_loopback_sshd_for() {
  local max=0 n
  for n in "$@"; do ((n > max)) && max=$n; done
  start_loopback_sshd "$max"
}

start_loopback_sshd() {
  local max=$1 i port
  work=$(mktemp -d /tmp/ssh_bench.XXXXXX)
  pids=()
  trap cleanup_loopback_sshd EXIT
  mkdir -p /run/sshd
  ssh-keygen -q -t ed25519 -N '' -C '' -f "$work/host_key"
  ssh-keygen -q -t ed25519 -N '' -C '' -f "$work/client_key"
  cp "$work/client_key.pub" "$work/authorized_keys"
  ports=() addrs=()
  : >"$work/known_hosts"
  : >"$work/ssh_config"
  for ((i = 1; i <= max; i++)); do
    port=$(free_port)
    ports+=("$port")
    addrs+=("127.0.$((i / 250)).$((i % 250 + 1))")
    cat >"$work/sshd_$i.conf" <<CONF
Port $port
ListenAddress 127.0.0.1
ListenAddress ${addrs[i - 1]}
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
    echo "[${addrs[i - 1]}]:$port $(cat "$work/host_key.pub")" >>"$work/known_hosts"
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
}

# loopback_spec_head NAME N: a spec's first lines: its name, the ssh
# transport, and [[nodes]] node1..nodeN with their [ssh.g<i>] groups;
# with $PERSIST set, each group's `persist` (PERSIST=0: no connection
# holder, for a side-by-side run with code from before the holder).
loopback_spec_head() {
  echo "name = \"$1\""
  echo '[defaults]'
  echo 'transport = "ssh"'
  loopback_spec_nodes "$2"
}

loopback_spec_nodes() {
  local n=$1 i
  for ((i = 1; i <= n; i++)); do
    echo '[[nodes]]'
    echo "name = \"node$i\""
    echo "address = \"${addrs[i - 1]}\""
    echo "workdir = \"$work/nodes/$i\""
    echo "ssh = \"g$i\""
    ((i == 1)) && echo 'chief = true'
  done
  for ((i = 1; i <= n; i++)); do
    echo "[ssh.g$i]"
    echo 'user = "root"'
    echo "port = ${ports[i - 1]}"
    echo "key_file = \"$work/client_key\""
    echo "known_hosts = \"$work/known_hosts\""
    if [[ -n ${PERSIST:-} ]]; then echo "persist = \"$PERSIST\""; fi
  done
}

cleanup_loopback_sshd() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  # Connection holders of this run's specs (each side's, when two builds
  # were compared): their nodes are gone, nothing is left to hold.
  pkill -f "__hold .* $work/" 2>/dev/null || true
  rm -rf "$work"
}

# loopback_pdsh N: the nodes' workdirs, a private folder for the
# connection holder ($XDG_RUNTIME_DIR), and $pdsh: `pdsh -R ssh` running
# `true` on node1..nodeN.
loopback_pdsh() {
  local n=$1 i hosts
  for ((i = 1; i <= n; i++)); do mkdir -p "$work/nodes/$i"; done
  # The holder's folder: private, and short enough for a socket's path.
  export XDG_RUNTIME_DIR=$work/run
  mkdir -m 700 "$XDG_RUNTIME_DIR"
  hosts=$(for ((i = 1; i <= n; i++)); do printf 'node%d,' "$i"; done)
  export PDSH_SSH_ARGS="-F $work/ssh_config %h"
  pdsh="pdsh -R ssh -f $n -w ${hosts%,} true"
}

# hyperfine_medians RESULT.json [A B]: each command's median and spread
# (min..max) in ms, which a shared machine's outliers move less than a
# mean; with A and B (command names), the ratio of A's median to B's.
hyperfine_medians() {
  python3 - "$@" <<'PY'
import json, statistics, sys
medians = {}
for r in json.load(open(sys.argv[1]))["results"]:
    t = sorted(x * 1e3 for x in r["times"])
    medians[r["command"]] = statistics.median(t)
    print("%s: median %.1f ms (%.1f..%.1f)" % (r["command"], medians[r["command"]], t[0], t[-1]))
if len(sys.argv) == 4:
    print("%s / %s: %.2fx" % (sys.argv[2], sys.argv[3], medians[sys.argv[2]] / medians[sys.argv[3]]))
PY
}

# compare_spec SPEC OUT: SPEC for another build measured beside this one:
# its own name, workdirs (nodes_b/) and ports, and no `persist` (older
# code does not know the key). Sets $compare_env, the prefix of that
# build's commands: a connection holder folder of its own. Both specs name
# the same nodes, so both builds would look for one holder: one of the same
# wire version would serve both sides, and builds from before the holder's
# socket named its version refused each other's commands, which then
# connected directly on every run.
compare_spec() {
  mkdir -p -m 700 "$work/run_b"
  compare_env="env XDG_RUNTIME_DIR=$work/run_b"
  local ports=(-e "s|^master_port = .*|master_port = $(free_port)|"
               -e "s|^supervisor_port = .*|supervisor_port = $(free_port)|")
  sed -e "s|$work/nodes/|$work/nodes_b/|" -e '1s|^name = "\(.*\)"|name = "\1-b"|' \
      -e '/^persist = /d' "${ports[@]}" "$1" >"$2"
  local dir
  for dir in $(sed -n 's/^workdir = "\(.*\)"$/\1/p' "$2"); do mkdir -p "$dir"; done
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
