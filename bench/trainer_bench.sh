#!/bin/bash
# Throughput and peak memory of //trainer:train against Python PyTorch DDP
# (bench/trainer_ddp.py on Debian's python3-torch: the same LibTorch), side
# by side in one run: the same models, data, batch size per rank, optimizer
# and Gloo on 127.0.0.1, at world sizes 1 and 2, one intra-op thread per rank.
#
#   bazel run -c opt //bench:trainer_bench [-- --runs=3 --models=cnn,resnet18 \
#       --worlds=1,2 --steps=100]
#
# Models: cnn (the README's default: the small CNN on Fashion-MNIST from the
# Debian package, batch 64, a whole epoch per measurement: 938 steps per rank
# alone, 469 at world size 2) and resnet18 (synthetic 64x64 images, batch 32,
# --steps per epoch). Each run trains two epochs and measures the second (the
# first warms up allocator and caches). Runs alternate C++ and Python so that
# a change in load hits both alike.
#
# Prints every run, then per (model, world size) the median samples/s with
# min..max and the peak RSS of the largest rank, and the C++/Python ratios.
# Refuses a trainer built without -c opt (fastbuild numbers say nothing).
set -euo pipefail

RUNS=3 MODELS=cnn,resnet18 WORLDS=1,2 STEPS=100
for arg in "$@"; do
  case "$arg" in
    --runs=*) RUNS="${arg#*=}" ;;
    --models=*) MODELS="${arg#*=}" ;;
    --worlds=*) WORLDS="${arg#*=}" ;;
    --steps=*) STEPS="${arg#*=}" ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
if ((RUNS < 3 || STEPS < 100)); then
  echo "at least 3 runs of at least 100 steps make a figure worth reading" >&2
  exit 2
fi

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
  [[ -x "$tool" ]] || { echo "$tool is missing (tools/install-deps.sh --bench)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# model_args MODEL: the flags both implementations take for MODEL.
model_args() {
  case "$1" in
    cnn) echo "--arch=cnn --dataset=fashion-mnist --batch-size=64" ;;
    resnet18) echo "--arch=resnet18 --dataset=synthetic --image-size=64 --batch-size=32 --steps-per-epoch=$STEPS" ;;
    *) echo "unknown model $1: cnn or resnet18" >&2; exit 2 ;;
  esac
}

# run IMPL MODEL WORLD_SIZE RUN CMD...: starts WORLD_SIZE ranks, waits,
# appends "impl model world run samples_per_sec max_rss_mb" to rows.
run() {
  local impl="$1" model="$2" world="$3" n="$4"; shift 4
  local port tag="$impl.$model.$world.$n"
  port="$(free_port)"
  local pids=()
  for ((rank = 0; rank < world; rank++)); do
    env OMP_NUM_THREADS=1 RANK=$rank LOCAL_RANK=$rank WORLD_SIZE=$world \
      LOCAL_WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      /usr/bin/time -f "%M" -o "$work/$tag.$rank.rss" timeout 900 "$@" \
      > "$work/$tag.$rank.out" 2> "$work/$tag.$rank.err" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || { echo "$impl $model at world size $world failed:" >&2;
                     cat "$work/$tag".*.err >&2; exit 1; }
  done
  local rate rss=0 r
  rate="$(grep '"event":"epoch"' "$work/$tag.0.out" | tail -n 1 |
          /usr/bin/python3 -c 'import json,sys; print("%.1f" % json.loads(sys.stdin.read())["samples_per_sec"])')"
  for ((rank = 0; rank < world; rank++)); do
    r=$(( $(tail -n 1 "$work/$tag.$rank.rss") / 1024 ))
    ((r > rss)) && rss=$r
  done
  printf '%-6s %-9s %d  run %d  %8.1f samples/s  peak RSS %4d MB\n' \
    "$impl" "$model" "$world" "$n" "$rate" "$rss" >&2
  echo "$impl $model $world $n $rate $rss" >> "$work/rows"
}

echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $RUNS runs; gloo, 1 thread/rank" >&2
IFS=, read -ra models <<< "$MODELS"
IFS=, read -ra worlds <<< "$WORLDS"
for model in "${models[@]}"; do
  read -ra args <<< "$(model_args "$model")"
  for world in "${worlds[@]}"; do
    for ((n = 1; n <= RUNS; n++)); do
      run cpp "$model" "$world" "$n" "$train" --epochs=2 --log-every=1000000 "${args[@]}"
      run python "$model" "$world" "$n" /usr/bin/python3 "$ddp" --epochs=2 "${args[@]}"
    done
  done
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" >&2

/usr/bin/python3 - "$work/rows" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    impl, model, world, _, rate, rss = line.split()
    runs[(model, int(world), impl)].append((float(rate), int(rss)))
print(f"{'model':9} {'ws':>2}  {'impl':6} {'samples/s median':>16} {'min..max':>17} {'peak RSS MB':>11}")
for (model, world, impl), rows in runs.items():
    rates = [r for r, _ in rows]
    print(f"{model:9} {world:2d}  {impl:6} {statistics.median(rates):16.1f} "
          f"{min(rates):8.1f}..{max(rates):<8.1f} {max(m for _, m in rows):11d}")
for (model, world, impl), rows in runs.items():
    if impl != "cpp" or (model, world, "python") not in runs:
        continue
    c, p = rows, runs[(model, world, "python")]
    speed = statistics.median(r for r, _ in c) / statistics.median(r for r, _ in p)
    memory = max(m for _, m in c) / max(m for _, m in p)
    print(f"{model} world size {world}: C++/Python speed {speed:.2f}x, peak RSS {memory:.2f}x")
PY
