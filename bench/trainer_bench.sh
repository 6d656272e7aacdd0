#!/bin/bash
# Throughput and peak memory of //trainer:train against Python PyTorch DDP
# (bench/trainer_ddp.py, Debian's python3-torch: the same LibTorch), side by
# side: the same model, synthetic data, batch size per rank and Gloo on
# 127.0.0.1, at world sizes 1 and 2, one thread per rank.
#
#   bazel run -c opt //bench:trainer_bench [-- --arch=resnet18 \
#       --image-size=64 --batch-size=32 --steps-per-epoch=20]
#
# Refuses a trainer built without -c opt (fastbuild or dbg numbers say
# nothing about the trainer).
#
# Prints one row per (implementation, world size): samples/s of the second
# epoch and the peak RSS of each rank; then the C++/Python ratios.
set -euo pipefail

ARCH=resnet18 IMAGE=64 BATCH=32 STEPS=20
for arg in "$@"; do
  case "$arg" in
    --arch=*) ARCH="${arg#*=}" ;;
    --image-size=*) IMAGE="${arg#*=}" ;;
    --batch-size=*) BATCH="${arg#*=}" ;;
    --steps-per-epoch=*) STEPS="${arg#*=}" ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
runfiles="${RUNFILES_DIR:-$0.runfiles}/fleetplan"
train="$runfiles/trainer/train"
ddp="$runfiles/bench/trainer_ddp.py"
[[ -x "$train" ]] || train="$here/../trainer/train"
[[ -f "$ddp" ]] || ddp="$here/trainer_ddp.py"
case "$(readlink -f "$train")" in
  */k8-opt/*) ;;
  */bazel-out/*) echo "$train is not an optimized build: use bazel run -c opt //bench:trainer_bench" >&2; exit 2 ;;
esac
for tool in /usr/bin/time /usr/bin/python3; do
  [[ -x "$tool" ]] || { echo "$tool is missing (tools/install-deps.sh)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# run NAME WORLD_SIZE CMD...: starts WORLD_SIZE ranks, waits, prints a row.
run() {
  local name="$1" world="$2"; shift 2
  local port; port="$(free_port)"
  local pids=()
  for ((rank = 0; rank < world; rank++)); do
    env OMP_NUM_THREADS=1 RANK=$rank LOCAL_RANK=$rank WORLD_SIZE=$world \
      LOCAL_WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      /usr/bin/time -f "%M" -o "$work/$name.$world.$rank.rss" "$@" \
      > "$work/$name.$world.$rank.out" 2> "$work/$name.$world.$rank.err" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || { echo "$name at world size $world failed:" >&2;
                     cat "$work/$name.$world".*.err >&2; exit 1; }
  done
  local rate rss=""
  rate="$(grep '"event":"epoch"' "$work/$name.$world.0.out" | tail -n 1 |
          /usr/bin/python3 -c 'import json,sys; print("%.1f" % json.loads(sys.stdin.read())["samples_per_sec"])')"
  for ((rank = 0; rank < world; rank++)); do
    rss+="$(( $(tail -n 1 "$work/$name.$world.$rank.rss") / 1024 )) "
  done
  echo "$name $world $rate $rss" | tee -a "$work/rows"
}

common=(--arch="$ARCH" --image-size="$IMAGE" --batch-size="$BATCH" --steps-per-epoch="$STEPS")
echo "# $ARCH, ${IMAGE}x${IMAGE}, batch $BATCH per rank, $STEPS steps/epoch, gloo, 1 thread/rank"
echo "# impl world_size samples_per_sec peak_rss_mb_per_rank"
for world in 1 2; do
  run cpp "$world" "$train" --dataset=synthetic --epochs=2 --log-every=1000000 "${common[@]}"
  run python "$world" /usr/bin/python3 "$ddp" "${common[@]}"
done

/usr/bin/python3 - "$work/rows" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    name, world, rate, *rss = line.split()
    rows[(name, int(world))] = (float(rate), max(int(r) for r in rss))
for world in (1, 2):
    (c, cm), (p, pm) = rows[("cpp", world)], rows[("python", world)]
    print(f"world_size {world}: speed C++/Python = {c / p:.2f}x, "
          f"peak RSS per rank C++ {cm} MB vs Python {pm} MB ({cm / pm:.2f}x)")
PY
