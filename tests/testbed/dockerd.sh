#!/bin/sh
# The test bed's Docker daemon.
#
#   dockerd.sh ensure   start dockerd unless one answers at $DOCKER_HOST;
#                       prints the DOCKER_HOST to use (unix:///path)
#   dockerd.sh stop     stop the daemon this script started
#
# No daemon runs on a fresh machine and Debian's docker.io is installed
# without one, so tests and benchmarks call `ensure` first. The daemon uses
# vfs storage (no overlayfs inside this sandbox) and --iptables=false (no
# netfilter here); containers on a user-defined bridge network still reach
# each other by name and by IP, and the host reaches them by IP, because
# that traffic only crosses the bridge. Without iptables there is no NAT, so
# containers cannot reach outside addresses, which the test bed never needs.
#
# Everything lives under $FLEETPLAN_DOCKERD_DIR (default
# /var/tmp/fleetplan-dockerd): data root, exec root, pid file, log
# (dockerd.log). The socket is the one $DOCKER_HOST names, default
# /var/run/docker.sock, so a plain `docker` finds it too.
set -eu
# Bazel's strict action environment leaves /usr/sbin (dockerd) off PATH.
PATH="$PATH:/usr/sbin:/sbin:/usr/local/bin"

host="${DOCKER_HOST:-unix:///var/run/docker.sock}"
case "$host" in
  unix://*) socket="${host#unix://}" ;;
  *) echo "dockerd.sh: DOCKER_HOST must be unix:///path, got $host" >&2; exit 2 ;;
esac
dir="${FLEETPLAN_DOCKERD_DIR:-/var/tmp/fleetplan-dockerd}"
timeout_s="${FLEETPLAN_DOCKERD_TIMEOUT_S:-60}"

answers() {
  DOCKER_HOST="$host" docker version --format '{{.Server.Version}}' \
    >/dev/null 2>&1
}

ensure() {
  mkdir -p "$dir" "$(dirname "$socket")"
  # Two tests may call this at once: one starts the daemon, the other waits
  # for the lock and then finds it answering.
  exec 9>"$dir/lock"
  flock 9
  if answers; then
    echo "$host"
    return 0
  fi
  if [ -f "$dir/dockerd.pid" ] && kill -0 "$(cat "$dir/dockerd.pid")" 2>/dev/null; then
    : # started but not answering yet: wait below
  else
    rm -f "$socket"
    # 9>&-: the daemon must not hold the lock. setsid: the daemon outlives the test that started it, so later tests
    # reuse it (and its images) instead of paying the start-up again.
    setsid dockerd \
      --storage-driver=vfs \
      --iptables=false \
      --ip-masq=false \
      -H "unix://$socket" \
      --data-root "$dir/data" \
      --exec-root "$dir/exec" \
      --pidfile "$dir/dockerd.pid" \
      >>"$dir/dockerd.log" 2>&1 </dev/null 9>&- &
  fi
  waited=0
  while ! answers; do
    if [ "$waited" -ge "$((timeout_s * 5))" ]; then
      echo "dockerd.sh: no answer at $host after ${timeout_s}s; see $dir/dockerd.log:" >&2
      tail -n 20 "$dir/dockerd.log" >&2
      exit 1
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
  echo "$host"
}

stop() {
  [ -f "$dir/dockerd.pid" ] || return 0
  pid="$(cat "$dir/dockerd.pid")"
  kill "$pid" 2>/dev/null || return 0
  i=0
  while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 150 ]; do
    sleep 0.2
    i=$((i + 1))
  done
}

case "${1:-}" in
  ensure) ensure ;;
  stop) stop ;;
  *) echo "usage: dockerd.sh ensure|stop" >&2; exit 2 ;;
esac
