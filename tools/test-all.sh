#!/usr/bin/env bash
# Installs what the tests need (install-deps.sh --test-beds), starts the test
# bed's Docker daemon, runs every test. Extra arguments go to `bazel test`
# (e.g. --config=ci --keep_going).
#
# The daemon is started here, before Bazel, because Bazel ends every process
# a test leaves behind when that test ends: a daemon started by the first
# docker test would die under the docker tests still running beside it.
# Each test still calls `dockerd.sh ensure`, so one test run alone works too.
set -euo pipefail
cd "$(dirname "$0")/.."

./tools/install-deps.sh --test-beds
tests/testbed/dockerd.sh ensure >/dev/null
# Where a GPU is, build the NCCL process group in so that the GPU tests
# (tag "gpu") run instead of skipping.
gpu=()
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  gpu=(--config=nccl)
fi
exec bazel test "${gpu[@]}" "$@" //...
