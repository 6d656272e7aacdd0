#!/bin/sh
# A Slurm cluster in containers for integration tests and benchmarks.
#
#   slurm_cluster.sh up N PREFIX [IMAGE]   controller PREFIX-ctl, nodes PREFIX-0 .. PREFIX-(N-1)
#   slurm_cluster.sh down PREFIX           remove them, their network, this machine's munged
#
# Every container runs the node image (node_image.sh) with the host's /usr
# (Debian's slurmctld, slurmd and munged) read-only, under tini: munged and
# slurmctld in PREFIX-ctl, munged and slurmd in each node. A munge key and a
# slurm.conf are generated per cluster under $FLEETPLAN_TESTBED_DIR/PREFIX
# (default /var/tmp/fleetplan-testbed) and mounted at /etc/fleetplan-slurm.
# Nodes mount PREFIX/shared at /shared, as a cluster's NFS home would be,
# and at the path this machine has it at, as most clusters mount home on
# the login node too: a workdir under that path is one folder for the
# nodes and this machine, one under /shared is the nodes' alone.
#
# This machine is the login node: `up` starts a munged of its own on a
# private socket and writes PREFIX/login/slurm.conf naming it, so
#
#   SLURM_CONF=$FLEETPLAN_TESTBED_DIR/PREFIX/login/slurm.conf srun -N N hostname
#
# reaches the cluster. `up` prints that SLURM_CONF path and returns once
# every node is idle in partition `debug`. Containers and the network carry
# the label fleetplan.testbed=PREFIX; `down` removes what has it.
# Needs a daemon (dockerd.sh ensure) at $DOCKER_HOST.
#
# FLEETPLAN_SLURM_PROCTRACK=cgroup (default linuxproc) makes slurmd track
# each job step's processes in a freezer cgroup (ProctrackType=
# proctrack/cgroup, as production clusters run), so the end of a step ends
# every process it started, detached or not. It needs this machine's cgroup
# v1 freezer hierarchy, writable: each node gets a folder of its own there
# (/sys/fs/cgroup/freezer/fleetplan-PREFIX-I), bind-mounted as the node's
# freezer root, so three slurmd on one machine do not share job cgroups.
# `up` exits 3 naming what is missing when there is no such hierarchy
# (cgroup v2 only: slurmd's cgroup/v2 plugin wants systemd or a delegated
# tree, which these containers do not have).
set -eu
PATH="$PATH:/usr/sbin:/sbin:/usr/local/bin"

here="$(cd "$(dirname "$0")" && pwd)"
base="${FLEETPLAN_TESTBED_DIR:-/var/tmp/fleetplan-testbed}"
proctrack="${FLEETPLAN_SLURM_PROCTRACK:-linuxproc}"
case "$proctrack" in
  linuxproc | cgroup) ;;
  *) echo "slurm_cluster.sh: FLEETPLAN_SLURM_PROCTRACK=$proctrack: expected linuxproc or cgroup" >&2
     exit 2 ;;
esac

usage() {
  echo "usage: slurm_cluster.sh up N PREFIX [IMAGE] | down PREFIX" >&2
  exit 2
}

# Host directories the containers see read-only. The slurm daemons are
# /etc/alternatives links, so the host's alternatives come too.
mounts() {
  for d in /usr /lib /lib64 /bin /sbin /etc/alternatives; do
    [ -e "$d" ] && printf -- '--mount type=bind,source=%s,target=%s,readonly ' "$d" "$d"
  done
}

# What each container runs under tini: munged, then the role's daemon in
# the foreground once slurm.conf has been written (it names the IPs, known
# only after every container started).
write_start_script() {
  cat >"$1/start.sh" <<'EOF'
#!/bin/sh
set -e
mkdir -p /run/munge /var/lib/munge /var/log /var/spool/slurmd /var/spool/slurmctld
chmod 711 /var/lib/munge
/usr/sbin/munged --force --key-file=/etc/fleetplan-slurm/munge.key \
  --socket=/run/munge/munge.socket.2 --seed-file=/var/lib/munge/munged.seed \
  --pid-file=/run/munge/munged.pid --log-file=/var/log/munged.log
while [ ! -f /etc/fleetplan-slurm/slurm.conf ]; do sleep 0.1; done
export SLURM_CONF=/etc/fleetplan-slurm/slurm.conf
case "$1" in
  ctl) exec /usr/sbin/slurmctld -D -i ;;
  *) exec /usr/sbin/slurmd -D ;;
esac
EOF
}

# slurm.conf for a cluster: the settings that matter in containers
# (root as SlurmUser, linuxproc or cgroup tracking, no task plugin, no
# accounting), short timeouts so a lost node is noticed within seconds.
write_slurm_conf() {
  conf="$1" prefix="$2" ctl_ip="$3" auth_socket="$4" nodes_file="$5"
  {
    echo "ClusterName=fleetplan"
    echo "SlurmctldHost=$prefix-ctl($ctl_ip)"
    echo "ProctrackType=proctrack/$proctrack"
    cat <<'EOF'
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurmctld.log
SlurmdLogFile=/var/log/slurmd.log
SlurmdTimeout=10
SlurmctldTimeout=10
MessageTimeout=5
KillWait=2
InactiveLimit=0
EOF
    echo "AuthInfo=socket=$auth_socket"
    while read -r name ip; do
      echo "NodeName=$name NodeAddr=$ip CPUs=$(nproc) State=UNKNOWN"
    done <"$nodes_file"
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$conf.tmp"
  mv "$conf.tmp" "$conf"
}

# cgroup.conf for proctrack/cgroup: the v1 freezer hierarchy the node's
# container mounts; nothing constrained (no task/cgroup), nothing mounted
# by slurmd itself.
write_cgroup_conf() {
  cat >"$1.tmp" <<'EOF'
CgroupPlugin=cgroup/v1
CgroupAutomount=no
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
  mv "$1.tmp" "$1"
}

freezer_root="/sys/fs/cgroup/freezer"

# The node's own folder in this machine's freezer hierarchy, as mount options.
freezer_mount() {
  [ "$proctrack" = cgroup ] || return 0
  mkdir -p "$freezer_root/fleetplan-$1"
  printf -- '--mount type=bind,source=%s,target=%s ' "$freezer_root/fleetplan-$1" "$freezer_root"
}

ip_of() {
  docker container inspect --format \
    "{{(index .NetworkSettings.Networks \"$2\").IPAddress}}" "$1"
}

start_container() {
  name="$1" role="$2" dir="$3" net="$4" image="$5" prefix="$6"
  docker container inspect "$name" >/dev/null 2>&1 && return 0
  # shellcheck disable=SC2046 # mounts() is a word list by design
  docker run -d --name "$name" --hostname "$name" --network "$net" \
    --label "fleetplan.testbed=$prefix" \
    -v "$dir/etc:/etc/fleetplan-slurm:ro" -v "$dir/shared:/shared" -v "$dir/shared:$dir/shared" \
    $(mounts) $(freezer_mount "$name") --entrypoint /usr/bin/tini "$image" -- /bin/sh /etc/fleetplan-slurm/start.sh "$role" \
    >/dev/null
}

up() {
  n="$1" prefix="$2" image="${3:-fleetplan-node:latest}"
  dir="$base/$prefix"
  net="$prefix-net"
  if [ "$proctrack" = cgroup ] && ! { [ -d "$freezer_root" ] && [ -w "$freezer_root" ]; }; then
    echo "slurm_cluster.sh: proctrack/cgroup needs a writable cgroup v1 freezer hierarchy at" \
      "$freezer_root; this machine has none" >&2
    exit 3
  fi
  "$here/node_image.sh" "$image" >/dev/null
  mkdir -p "$dir/etc" "$dir/shared" "$dir/login"
  chmod 700 "$dir" "$dir/login"
  chmod 1777 "$dir/shared"
  [ -f "$dir/etc/munge.key" ] || {
    dd if=/dev/urandom of="$dir/etc/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$dir/etc/munge.key"
  }
  write_start_script "$dir/etc"
  docker network inspect "$net" >/dev/null 2>&1 ||
    docker network create --label "fleetplan.testbed=$prefix" "$net" >/dev/null
  start_container "$prefix-ctl" ctl "$dir" "$net" "$image" "$prefix"
  i=0
  while [ "$i" -lt "$n" ]; do
    start_container "$prefix-$i" node "$dir" "$net" "$image" "$prefix"
    i=$((i + 1))
  done
  : >"$dir/nodes"
  i=0
  while [ "$i" -lt "$n" ]; do
    echo "$prefix-$i $(ip_of "$prefix-$i" "$net")" >>"$dir/nodes"
    i=$((i + 1))
  done
  ctl_ip="$(ip_of "$prefix-ctl" "$net")"
  # The login node's munged: a private socket, the cluster's key.
  if ! { [ -f "$dir/login/munged.pid" ] && kill -0 "$(cat "$dir/login/munged.pid")" 2>/dev/null; }; then
    /usr/sbin/munged --force --key-file="$dir/etc/munge.key" --socket="$dir/login/munge.sock" \
      --seed-file="$dir/login/munged.seed" --pid-file="$dir/login/munged.pid" \
      --log-file="$dir/login/munged.log"
  fi
  write_slurm_conf "$dir/login/slurm.conf" "$prefix" "$ctl_ip" "$dir/login/munge.sock" "$dir/nodes"
  write_cgroup_conf "$dir/etc/cgroup.conf"
  write_slurm_conf "$dir/etc/slurm.conf" "$prefix" "$ctl_ip" /run/munge/munge.socket.2 "$dir/nodes"
  wait_idle "$dir/login/slurm.conf" "$n"
  echo "$dir/login/slurm.conf"
}

# Every node idle (or already allocated by an earlier run): 30 s is generous.
wait_idle() {
  tries=0
  until [ "$(SLURM_CONF="$1" sinfo -h -N -o '%T' 2>/dev/null | grep -cE '^(idle|mixed|allocated)')" -ge "$2" ]; do
    tries=$((tries + 1))
    if [ "$tries" -ge 150 ]; then
      echo "slurm_cluster.sh: nodes did not become idle:" >&2
      SLURM_CONF="$1" sinfo -N >&2 || true
      exit 1
    fi
    sleep 0.2
  done
}

down() {
  prefix="$1"
  dir="$base/$prefix"
  ids="$(docker ps -aq --filter "label=fleetplan.testbed=$prefix")"
  [ -z "$ids" ] || docker rm -f $ids >/dev/null
  nets="$(docker network ls -q --filter "label=fleetplan.testbed=$prefix")"
  [ -z "$nets" ] || docker network rm $nets >/dev/null
  if [ -f "$dir/login/munged.pid" ]; then
    kill "$(cat "$dir/login/munged.pid")" 2>/dev/null || true
  fi
  # The nodes' freezer folders, emptied by the containers' end.
  for cg in "$freezer_root/fleetplan-$prefix"-*; do
    if [ -d "$cg" ]; then find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi
  done
  rm -rf "${base:?}/$prefix"
}

case "${1:-}" in
  up) [ $# -ge 3 ] || usage; up "$2" "$3" "${4:-}" ;;
  down) [ $# -eq 2 ] || usage; down "$2" ;;
  *) usage ;;
esac
