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

# Each package once, under the first purpose that needs it.
declare -A purpose_of=()
purposes=("to build and run fleetplan")
add() {
  local purpose=$1 p
  shift
  for p in "$@"; do
    [[ -n ${purpose_of[$p]:-} ]] || purpose_of[$p]=$purpose
  done
}
add "${purposes[0]}" "${build[@]}"
for arg in "$@"; do
  case $arg in
    --test-beds) purposes+=("for the tests' beds"); add "for the tests' beds" "${test_beds[@]}" ;;
    --bench) purposes+=("for the benchmarks"); add "for the benchmarks" "${bench[@]}" ;;
    --all)
      purposes+=("for the tests' beds" "for the benchmarks")
      add "for the tests' beds" "${test_beds[@]}"
      add "for the benchmarks" "${bench[@]}"
      ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-deps: unknown argument $arg" >&2; usage >&2; exit 2 ;;
  esac
done

missing=()
for p in "${!purpose_of[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

# "1 package", "3 packages".
packages() { if (($1 == 1)); then echo "1 package"; else echo "$1 packages"; fi; }

# What is missing, by purpose: one line each, not apt's hundreds.
declare -A said=()
for purpose in "${purposes[@]}"; do
  [[ -z ${said[$purpose]:-} ]] || continue
  said[$purpose]=1
  names=()
  for p in "${missing[@]}"; do
    [[ ${purpose_of[$p]} == "$purpose" ]] && names+=("$p")
  done
  ((${#names[@]} == 0)) && continue
  list=$(printf '%s\n' "${names[@]}" | sort | paste -sd ' ')
  echo "install-deps: $(packages "${#names[@]}") $purpose: $list" >&2
done

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
# apt's own account (every unpack, every trigger) goes to a log, shown in
# full only when apt fails.
log_dir="${XDG_CACHE_HOME:-$HOME/.cache}/fleetplan"
mkdir -p "$log_dir"
log="$log_dir/install-deps.log"
echo "install-deps: installing $(packages "${#missing[@]}") with apt (its log: $log) ..." >&2
started=$SECONDS
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get update -qq && \
       $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "install-deps: apt failed; its whole output is above and in $log" >&2
  exit 1
fi
echo "install-deps: $(packages "${#missing[@]}") installed in $((SECONDS - started)) s" >&2
