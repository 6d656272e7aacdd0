# Sourced by the benchmarks on the container test bed (tests/testbed/cluster.sh).
#
#   testbed_ssh_config NODES DIR
#
# reads the `NAME IP KEY` lines cluster.sh printed to NODES and writes
# DIR/known_hosts (ssh-keyscan of every node) and DIR/ssh_config (root, the
# test bed's key, host keys checked strictly), for rsync and pdsh; sets $key.
testbed_ssh_config() {
  key="$(awk 'NR == 1 { print $3 }' "$1")"
  awk '{ print $2 }' "$1" | xargs ssh-keyscan >"$2/known_hosts" 2>/dev/null
  cat >"$2/ssh_config" <<CONF
Host *
  User root
  IdentityFile $key
  UserKnownHostsFile $2/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
CONF
}
