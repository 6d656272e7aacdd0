#!/usr/bin/env bash
# Installs, idempotently, the Debian packages a purpose needs; only what is
# missing. Purposes (several may be given):
#
#   (none)        build fleetplan and run it: the compiler, Bazel, the libraries
#                 the code links, LibTorch and the demo's training data
#   --test-beds   the above, and what the tests need: GoogleTest, clang's
#                 libFuzzer, the Docker daemon and sshd of the multi-node test
#                 bed, Slurm's daemons and munge, chromium for the dashboard's
#                 page (tools/test-all.sh)
#   --bench       the above, and the peers the benchmarks compare with: pdsh,
#                 ansible, rsync, PyTorch for Python, hyperfine and perf
#                 (bench/)
#   --all         all of them
#
# On a machine with systemd, installing docker.io, munge and Slurm's daemons
# starts their services; the test beds start their own and need none of them.
set -euo pipefail

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }

build=(
  bazel-bootstrap bazel-platforms g++ git
  # libraries the code links; libslurm-dev: the slurm transport's job lookups
  libabsl-dev libre2-dev libtomlplusplus-dev libssh-dev nlohmann-json3-dev
  # the dashboard's HTTP server
  libcpp-httplib-dev
  libcurl4-openssl-dev libarchive-dev libxxhash-dev zlib1g-dev libssl-dev libslurm-dev
  libtorch-dev libgloo-dev
  # the demo's training data
  dataset-fashion-mnist
)
test_beds=(
  # unit tests; clang and its libFuzzer and sanitizer runtimes for the fuzz targets
  libgtest-dev libgmock-dev clang-14 libclang-rt-14-dev
  # multi-node test bed: a Docker daemon and sshd for the node image
  docker.io openssh-server openssh-client iproute2 procps
  # the Python ranks of the launcher tests (torchrun's contract, failures, hangs)
  python3-torch
  # stack tools the agent runs on a hung job's ranks, on the host and (through
  # its /usr) the test bed's nodes: eu-stack's native frames, gdb with Python
  # 3.11's py-bt extension
  elfutils gdb python3.11-dbg
  # Slurm test bed: controller, node daemon, client commands, munge; tini is
  # the node containers' init
  slurmctld slurmd slurm-client munge tini
  # the dashboard's test loads its page in a real browser, headless
  chromium
  # //packaging:deb: dpkg-shlibdeps finds the package's Depends
  dpkg-dev
)
bench=(
  pdsh ansible rsync python3-torch time hyperfine
  # bench/startup_bench.sh's page faults and task-clock
  linux-perf
)

packages=("${build[@]}")
for arg in "$@"; do
  case $arg in
    --test-beds) packages+=("${test_beds[@]}") ;;
    --bench) packages+=("${bench[@]}") ;;
    --all) packages+=("${test_beds[@]}" "${bench[@]}") ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-deps: unknown argument $arg" >&2; usage >&2; exit 2 ;;
  esac
done

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
