#!/bin/bash
# The cost of watching for hangs: //trainer:train's samples/s under the
# launch agent with --hang-timeout set (progress sampled once a second: the
# densest rate, a hang_timeout of 10 s or less) against unset, runs
# alternating so that a change in load hits both alike.
#
#   bazel run -c opt //bench:hang_watch_bench [-- --runs=5 --nproc=2 --epochs=2]
#
# Each run is one agent alone (the local node, no transport) with --nproc
# ranks of the trainer (the small CNN on Fashion-MNIST, batch 64, Gloo on
# 127.0.0.1, one thread per rank); the figure is rank 0's last epoch's
# samples/s (the first warms up). Prints every run, then per setting the
# median with min..max, and the ratio of the medians; the load average at
# start and end (the figures mean little on a busy machine).
set -euo pipefail

RUNS=5 NPROC=2 EPOCHS=2
for arg in "$@"; do
  case "$arg" in
    --runs=*) RUNS="${arg#*=}" ;;
    --nproc=*) NPROC="${arg#*=}" ;;
    --epochs=*) EPOCHS="${arg#*=}" ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
if ((RUNS < 5 || EPOCHS < 2)); then
  echo "at least 5 runs of at least 2 epochs make a figure worth reading" >&2
  exit 2
fi

runfiles="${RUNFILES_DIR:-$0.runfiles}/fleetplan"
train="$runfiles/trainer/train"
agent="$runfiles/tools/agent/fleetplan-agent"
case "$(readlink -f "$train")" in
  */k8-opt/*) ;;
  *) echo "$train is not an optimized build: use bazel run -c opt //bench:hang_watch_bench" >&2; exit 2 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# run SETTING N FLAGS...: one agent and its ranks; appends "setting n rate".
run() {
  local setting="$1" n="$2"; shift 2
  local dir="$work/$setting.$n"
  mkdir -p "$dir"
  env OMP_NUM_THREADS=1 WORLD_SIZE="$NPROC" MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29700 + n * 2)) \
    "$agent" launch --protocol=2 --node=bench --nproc="$NPROC" --log-dir="$dir/logs" --watch-stdin=false "$@" \
    -- "$train" --arch=cnn --dataset=fashion-mnist --batch-size=64 --epochs="$EPOCHS" \
    --log-every=1000000 > "$dir/out" 2>&1 < /dev/null ||
    { echo "run $setting $n failed:" >&2; tail -n 20 "$dir/out" >&2; exit 1; }
  local rate
  rate="$(grep '"event":"epoch"' "$dir/logs/latest/rank-0.log" | tail -n 1 |
          /usr/bin/python3 -c 'import json,sys; print("%.1f" % json.loads(sys.stdin.read())["samples_per_sec"])')"
  printf '%-7s run %d  %8.1f samples/s\n' "$setting" "$n" "$rate" >&2
  echo "$setting $n $rate" >> "$work/rows"
}

echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $RUNS runs each; $NPROC ranks" >&2
for ((n = 1; n <= RUNS; n++)); do
  run unset "$n"
  run watched "$n" --hang-timeout=10s
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" >&2
/usr/bin/python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
med = {}
for setting in ("unset", "watched"):
    rates = sorted(float(r[2]) for r in rows if r[0] == setting)
    med[setting] = statistics.median(rates)
    print(f"{setting:8s} median {med[setting]:8.1f} samples/s  ({rates[0]:.1f}..{rates[-1]:.1f}, {len(rates)} runs)")
print(f"watched/unset {med['watched'] / med['unset']:.4f}")
PY
