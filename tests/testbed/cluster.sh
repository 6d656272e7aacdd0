#!/bin/sh
# A cluster of SSH nodes in containers for integration tests and benchmarks.
#
#   cluster.sh up N PREFIX [IMAGE]   start PREFIX-0 .. PREFIX-(N-1)
#   cluster.sh down PREFIX           remove them, their network and key
#
# `up` starts N containers of the node image (node_image.sh) on the
# user-defined bridge network PREFIX-net, each running sshd with a host key
# of its own; a key pair made here is every node's authorized key. It
# prints, and writes to $FLEETPLAN_TESTBED_DIR/PREFIX/nodes (default
# /var/tmp/fleetplan-testbed), one line per node:
#
#   NAME IP KEY_PATH
#
# and waits until every node's sshd listens. Containers and the network
# carry the label fleetplan.testbed=PREFIX; `down` removes what has it.
# Needs a daemon (dockerd.sh ensure) at $DOCKER_HOST.
set -eu
PATH="$PATH:/usr/sbin:/sbin:/usr/local/bin"

here="$(cd "$(dirname "$0")" && pwd)"
base="${FLEETPLAN_TESTBED_DIR:-/var/tmp/fleetplan-testbed}"

usage() {
  echo "usage: cluster.sh up N PREFIX [IMAGE] | down PREFIX" >&2
  exit 2
}

# Host directories the nodes see read-only: binaries, libraries, LibTorch.
mounts() {
  for d in /usr /lib /lib64 /bin /sbin; do
    [ -e "$d" ] && printf -- '--mount type=bind,source=%s,target=%s,readonly ' "$d" "$d"
  done
}

up() {
  n="$1" prefix="$2" image="${3:-fleetplan-node:latest}"
  dir="$base/$prefix"
  net="$prefix-net"
  "$here/node_image.sh" "$image" >/dev/null
  mkdir -p "$dir" "$dir/shared"
  chmod 700 "$dir"
  # One folder every node mounts at /shared, as a cluster's NFS home would be.
  chmod 1777 "$dir/shared"
  [ -f "$dir/id_ed25519" ] ||
    ssh-keygen -q -t ed25519 -N '' -C "fleetplan-testbed-$prefix" -f "$dir/id_ed25519"
  docker network inspect "$net" >/dev/null 2>&1 ||
    docker network create --label "fleetplan.testbed=$prefix" "$net" >/dev/null
  pub="$(cat "$dir/id_ed25519.pub")"
  i=0
  while [ "$i" -lt "$n" ]; do
    name="$prefix-$i"
    if ! docker container inspect "$name" >/dev/null 2>&1; then
      # shellcheck disable=SC2046 # mounts() is a word list by design
      docker run -d --name "$name" --hostname "$name" --network "$net" \
        --label "fleetplan.testbed=$prefix" \
        -e "FLEETPLAN_AUTHORIZED_KEYS=$pub" \
        -v "$dir/shared:/shared" \
        $(mounts) "$image" >/dev/null
    fi
    i=$((i + 1))
  done
  : >"$dir/nodes.tmp"
  i=0
  while [ "$i" -lt "$n" ]; do
    name="$prefix-$i"
    ip="$(docker container inspect --format \
      "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$name")"
    wait_for_sshd "$ip"
    echo "$name $ip $dir/id_ed25519" >>"$dir/nodes.tmp"
    i=$((i + 1))
  done
  mv "$dir/nodes.tmp" "$dir/nodes"
  cat "$dir/nodes"
}

# sshd listens within a second of the start; 20 s is generous on vfs.
wait_for_sshd() {
  tries=0
  until bash -c "exec 3<>/dev/tcp/$1/22" 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -ge 100 ]; then
      echo "cluster.sh: sshd on $1 did not come up" >&2
      exit 1
    fi
    sleep 0.2
  done
}

down() {
  prefix="$1"
  ids="$(docker ps -aq --filter "label=fleetplan.testbed=$prefix")"
  [ -z "$ids" ] || docker rm -f $ids >/dev/null
  nets="$(docker network ls -q --filter "label=fleetplan.testbed=$prefix")"
  [ -z "$nets" ] || docker network rm $nets >/dev/null
  rm -rf "${base:?}/$prefix"
}

case "${1:-}" in
  up) [ $# -ge 3 ] || usage; up "$2" "$3" "${4:-}" ;;
  down) [ $# -eq 2 ] || usage; down "$2" ;;
  *) usage ;;
esac
