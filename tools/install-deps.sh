#!/usr/bin/env bash
# Installs, idempotently, every Debian package that fleetplan's build, tests,
# benchmarks and demos need. Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(
  # build
  bazel-bootstrap bazel-platforms g++ git
  # libraries the code links
  libabsl-dev libre2-dev libtomlplusplus-dev libssh-dev nlohmann-json3-dev
  libcurl4-openssl-dev libarchive-dev libxxhash-dev zlib1g-dev libssl-dev
  libtorch-dev libgloo-dev
  # tests; clang and its libFuzzer and sanitizer runtimes for //tools/spec:spec_fuzzer
  libgtest-dev libgmock-dev clang-14 libclang-rt-14-dev
  # training data
  dataset-fashion-mnist
  # multi-node test bed: a Docker daemon and sshd for the node image
  docker.io openssh-server openssh-client iproute2 procps
  # stack tools the agent runs on a hung job's ranks, on the host and (through its /usr) the
  # test bed's nodes: eu-stack's native frames, gdb with Python 3.11's py-bt extension
  elfutils gdb python3.11-dbg
  # Slurm test bed and the slurm transport: controller, node daemon, client commands, munge,
  # the C API (job lookups); tini is the node containers' init
  slurmctld slurmd slurm-client munge tini libslurm-dev
  # peers for side-by-side benchmarks
  pdsh ansible rsync python3-torch time hyperfine
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
