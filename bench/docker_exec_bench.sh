#!/bin/sh
# `true` on 8 containers: fleetplan's docker transport (one process, a
# thread per container, Engine API on the unix socket) against `docker exec`
# started in parallel from a shell loop. Target: at most 0.5x the time.
#
#   bench/docker_exec_bench.sh [N]
#
# Starts a daemon if needed (tests/testbed/dockerd.sh), runs N (default 8)
# node containers (tests/testbed/cluster.sh) and removes them at the end.
# Needs hyperfine.
set -eu
cd "$(dirname "$0")/.."
n="${1:-8}"
prefix=fpbench
ob="${FLEETPLAN_BAZEL_OUTPUT_BASE:-/root/.cache/bazel-ob/docker}"

export DOCKER_HOST="$(tests/testbed/dockerd.sh ensure)"
tests/testbed/cluster.sh up "$n" "$prefix" >/dev/null
trap 'tests/testbed/cluster.sh down "$prefix"' EXIT

bazel --output_base="$ob" build -c opt --symlink_prefix=/ //bench:docker_exec_bench
bin="$(bazel --output_base="$ob" info -c opt --symlink_prefix=/ bazel-bin)/bench/docker_exec_bench"

names=""
i=0
while [ "$i" -lt "$n" ]; do names="$names $prefix-$i"; i=$((i + 1)); done

# Within one process: connections once, then rounds (what apply does).
"$bin" --prefix="$prefix" --count="$n" --rounds=20 | sort | uniq -c | head -3
"$bin" --prefix="$prefix" --count="$n" --rounds=20 |
  awk '/^round/ { s += $2; k++ } END { printf "fleetplan mean round: %.2f ms over %d rounds\n", s / k, k }'

# Whole processes, as a user would time them.
hyperfine -N --warmup 3 --runs 30 \
  -n "fleetplan docker transport ($n containers)" \
  "$bin --prefix=$prefix --count=$n --rounds=1" \
  -n "docker exec x$n in parallel" \
  "sh -c 'for c in$names; do docker exec \$c true & done; wait'"
