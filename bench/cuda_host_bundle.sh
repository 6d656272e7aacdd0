#!/bin/bash
# Packs an opt + NCCL build of fleetplan for a CUDA host that has no Bazel,
# for bench/cuda_host_check.sh to unpack and check there.
#
#   bench/cuda_host_bundle.sh [DIR]     (default .cuda_carry, under the repository root)
#
# Builds `-c opt --config=nccl` //:install, //trainer:cuda_train_test and
# //trainer:nccl_process_group_test in an output base of its own
# (FLEETPLAN_BAZEL_OUTPUT_BASE, default /root/.cache/bazel-ob/cuda; more
# build flags in FLEETPLAN_BAZEL_FLAGS, e.g. --disk_cache=DIR), and writes
# two archives (tar + xz -9e; plain `tar -xJf` unpacks them):
#
# DIR/fleetplan-cuda.tar.xz, fleetplan-cuda/:
#   bin/fleetplan, lib/fleetplan/{fleetplan-agent,train}
#                   as `bazel run //:install -- --prefix=...` lays them out
#                   (fleetplan finds its agent beside itself)
#   tests/          the two GPU gtest binaries
#   runfiles/       fleetplan/trainer/train, as TEST_SRCDIR shows it to
#                   cuda_train_test
#   lib/deps/       the shared libraries of all these (bench/cuda_host_libs.py):
#                   not glibc's own, libstdc++ or libgcc_s (the host's are at
#                   least as new) nor the CUDA ones (libcudart, libnccl,
#                   libcuda: the host's, from pip's nvidia packages or
#                   /usr/local/cuda); libraries named but not used (OpenCV,
#                   FFmpeg, ... by Debian's libtorch_cpu) as empty stand-ins
#   BUNDLE          commit, flags, the newest GLIBC_/GLIBCXX_ versions needed,
#                   what lib/deps holds
#   cuda_host_check.sh
#
# DIR/fashion-mnist.tar.xz, fashion-mnist/: the four IDX files, uncompressed
# (xz packs them smaller than their .gz), for cuda_train_test only; made once
# from /usr/share/datasets/fashion-mnist (FASHION_MNIST_DIR). It is a second
# archive because the two together do not fit one transfer to the host.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${1:-.cuda_carry}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
ob="${FLEETPLAN_BAZEL_OUTPUT_BASE:-/root/.cache/bazel-ob/cuda}"
# shellcheck disable=SC2206
extra=(${FLEETPLAN_BAZEL_FLAGS:-})
flags=(-c opt --config=nccl --symlink_prefix=/ "${extra[@]}")
data="${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}"
xz=(xz -9e -T"${XZ_THREADS:-2}")

bazel --output_base="$ob" build "${flags[@]}" \
  //:install //trainer:cuda_train_test //trainer:nccl_process_group_test
bin="$(bazel --output_base="$ob" info "${flags[@]}" bazel-bin 2>/dev/null)"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
b="$stage/fleetplan-cuda"
bazel --output_base="$ob" run "${flags[@]}" //:install -- --prefix="$b" >/dev/null
mkdir -p "$b/tests" "$b/runfiles/fleetplan/trainer" "$b/lib/deps"
install -m 0755 "$bin/trainer/cuda_train_test" "$bin/trainer/nccl_process_group_test" "$b/tests/"
ln -s ../../../lib/fleetplan/train "$b/runfiles/fleetplan/trainer/train"
install -m 0755 bench/cuda_host_check.sh "$b/"
elves=("$b/bin/fleetplan" "$b/lib/fleetplan/fleetplan-agent" "$b/lib/fleetplan/train"
       "$b/tests/cuda_train_test" "$b/tests/nccl_process_group_test")

# What the host provides itself (matched on the name a binary asks for).
host='^(ld-linux.*|libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libnss_.*|libthread_db|libstdc\+\+|libgcc_s|libcuda|libcudart|libnccl|libnvidia-.*|libnvrtc.*|libnvJitLink|libnvToolsExt|libcublas.*|libcudnn.*|libcufft.*|libcurand|libcusparse.*|libcusolver.*|libcupti)\.so(\..*)?$'
# The tests' own libraries (Bazel links test binaries dynamically) lie in
# _solib_k8, which their rpath names relative to bazel-bin.
LD_LIBRARY_PATH="$bin/_solib_k8" python3 bench/cuda_host_libs.py "$b/lib/deps" "$host" "${elves[@]}" > "$stage/libs.txt"
chmod 0644 "$b/lib/deps/"*

# With only lib/deps on the path, everything resolves there or to the host's set.
LD_LIBRARY_PATH="$b/lib/deps" ldd "${elves[@]}" "$b/lib/deps/"* 2>/dev/null |
  awk '$2 == "=>" { print $1, $3 } $2 == "not" { print $1, "NOTFOUND" }' | sort -u |
  while read -r name path; do
    if [[ ! $name =~ $host && $path != "$b/lib/deps/"* ]]; then
      echo "bundle: $name resolves outside the bundle ($path)" >&2
      exit 1
    fi
  done

newest() {  # newest PREFIX FILES...: the highest PREFIX<version> the files need
  objdump -T "${@:2}" 2>/dev/null | grep -o "$1[0-9.]*" | sort -uV | tail -n 1
}
{
  echo "commit: $(git rev-parse HEAD)$(git diff --quiet HEAD -- . || echo ' (with uncommitted changes)')"
  echo "built: $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -n 1)"
  echo "flags: ${flags[*]}"
  echo "needs: $(newest GLIBC_ "${elves[@]}" "$b/lib/deps/"*) $(newest GLIBCXX_ "${elves[@]}" "$b/lib/deps/"*) $(newest CXXABI_ "${elves[@]}" "$b/lib/deps/"*); from the host: glibc, libstdc++, libgcc_s, libcudart.so.13, libnccl.so.2, libcuda.so.1"
  echo "lib/deps:"
  sed 's/^/  /' "$stage/libs.txt"
} > "$b/BUNDLE"

tar -C "$stage" --owner=0 --group=0 --sort=name -cf - fleetplan-cuda | "${xz[@]}" > "$dir/fleetplan-cuda.tar.xz.tmp"
mv "$dir/fleetplan-cuda.tar.xz.tmp" "$dir/fleetplan-cuda.tar.xz"
sed -n '1,4p' "$b/BUNDLE"
echo "bundle: $(du -sb "$b" | cut -f1) bytes unpacked; $dir/fleetplan-cuda.tar.xz: $(stat -c %s "$dir/fleetplan-cuda.tar.xz") bytes"

if [[ ! -f $dir/fashion-mnist.tar.xz ]]; then
  if [[ -f $data/train-images-idx3-ubyte.gz ]]; then
    mkdir -p "$stage/fashion-mnist"
    for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
      gzip -dc "$data/$f.gz" > "$stage/fashion-mnist/$f"
    done
    tar -C "$stage" --owner=0 --group=0 --sort=name -cf - fashion-mnist | "${xz[@]}" > "$dir/fashion-mnist.tar.xz.tmp"
    mv "$dir/fashion-mnist.tar.xz.tmp" "$dir/fashion-mnist.tar.xz"
  else
    echo "bundle: no Fashion-MNIST in $data: cuda_train_test cannot run on the host" >&2
  fi
fi
[[ -f $dir/fashion-mnist.tar.xz ]] &&
  echo "data: $dir/fashion-mnist.tar.xz: $(stat -c %s "$dir/fashion-mnist.tar.xz") bytes"
