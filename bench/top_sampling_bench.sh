#!/bin/bash
# What `top` and the dashboard cost the job: //trainer:train's samples/s
# under today's launch agent, which records every rank's steps from its
# output (progress.json) and is asked for a `top` report once a second
# (twice top's refresh), against the agent from before top existed, which
# does neither. Runs alternate so that a change in load hits both alike.
#
#   bazel run -c opt //bench:top_sampling_bench -- --base-agent=PATH \
#       [--runs=5 --nproc=2 --epochs=2 --log-every=10]
#
# PATH is an optimized fleetplan-agent built from the code before top (for
# example `git worktree add ../before a4a2741^` and `bazel build -c opt
# //tools/agent:fleetplan-agent` there). Each run is one agent alone (the
# local node, no transport) with --nproc ranks of the trainer (the small CNN
# on Fashion-MNIST, batch 64, Gloo on 127.0.0.1, one thread per rank) that
# log a metric line every --log-every steps (10: ten times the trainer's
# default, so the agent reads more lines than a job normally writes); the
# figure is rank 0's last epoch's samples/s (the first warms up). Prints
# every run, then per setting the median with min..max and the ratio of the
# medians; the load average at start and end.
set -euo pipefail

RUNS=5 NPROC=2 EPOCHS=2 LOG_EVERY=10 BASE_AGENT=""
for arg in "$@"; do
  case "$arg" in
    --base-agent=*) BASE_AGENT="${arg#*=}" ;;
    --runs=*) RUNS="${arg#*=}" ;;
    --nproc=*) NPROC="${arg#*=}" ;;
    --epochs=*) EPOCHS="${arg#*=}" ;;
    --log-every=*) LOG_EVERY="${arg#*=}" ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z $BASE_AGENT || ! -x $BASE_AGENT ]]; then
  echo "--base-agent=PATH must name the agent built from the code before top (see --help)" >&2
  exit 2
fi
if ((RUNS < 5 || EPOCHS < 2)); then
  echo "at least 5 runs of at least 2 epochs make a figure worth reading" >&2
  exit 2
fi

runfiles="${RUNFILES_DIR:-$0.runfiles}/fleetplan"
train="$runfiles/trainer/train"
agent="$runfiles/tools/agent/fleetplan-agent"
case "$(readlink -f "$train")" in
  */k8-opt/*) ;;
  *) echo "$train is not an optimized build: use bazel run -c opt //bench:top_sampling_bench" >&2; exit 2 ;;
esac
# The agent before the typed protocol took its mode from flags alone.
base_launch=(launch --protocol=2)
"$BASE_AGENT" launch --protocol=2 --help > /dev/null 2>&1 || base_launch=()

work="$(mktemp -d)"
sampler=""
trap '[[ -n $sampler ]] && kill "$sampler" 2>/dev/null; rm -rf "$work"' EXIT

# run SETTING N AGENT ARGS...: one agent and its ranks; appends "setting n rate".
run() {
  local setting="$1" n="$2" agent_bin="$3"; shift 3
  local dir="$work/$setting.$n"
  mkdir -p "$dir"
  if [[ $setting == sampled ]]; then
    # top's request, as `fleetplan top` sends it, every second for the run.
    (while sleep 1; do
       "$agent" top --protocol=2 --node=bench --log-dir="$dir/logs" > /dev/null 2>&1 || true
     done) &
    sampler=$!
  fi
  env OMP_NUM_THREADS=1 WORLD_SIZE="$NPROC" MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29700 + n * 2)) \
    "$agent_bin" "$@" --node=bench --nproc="$NPROC" --log-dir="$dir/logs" --watch-stdin=false \
    -- "$train" --arch=cnn --dataset=fashion-mnist --batch-size=64 --epochs="$EPOCHS" \
    --log-every="$LOG_EVERY" > "$dir/out" 2>&1 < /dev/null ||
    { echo "run $setting $n failed:" >&2; tail -n 20 "$dir/out" >&2; exit 1; }
  if [[ -n $sampler ]]; then
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; sampler=""
    [[ -s $dir/logs/latest/progress.json ]] ||
      { echo "run $setting $n: the agent recorded no progress.json" >&2; exit 1; }
  fi
  local rate
  rate="$(grep '"event":"epoch"' "$dir/logs/latest/rank-0.log" | tail -n 1 |
          /usr/bin/python3 -c 'import json,sys; print("%.1f" % json.loads(sys.stdin.read())["samples_per_sec"])')"
  printf '%-7s run %d  %8.1f samples/s\n' "$setting" "$n" "$rate" >&2
  echo "$setting $n $rate" >> "$work/rows"
}

echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $RUNS runs each; $NPROC ranks; a metric line every $LOG_EVERY steps" >&2
for ((n = 1; n <= RUNS; n++)); do
  run before "$n" "$BASE_AGENT" "${base_launch[@]}"
  run sampled "$n" "$agent" launch --protocol=2
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" >&2
/usr/bin/python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
med = {}
for setting in ("before", "sampled"):
    rates = sorted(float(r[2]) for r in rows if r[0] == setting)
    med[setting] = statistics.median(rates)
    print(f"{setting:8s} median {med[setting]:8.1f} samples/s  ({rates[0]:.1f}..{rates[-1]:.1f}, {len(rates)} runs)")
print(f"sampled/before {med['sampled'] / med['before']:.4f}")
PY
