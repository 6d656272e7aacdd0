#!/bin/bash
# What `top` and the dashboard cost the job: //trainer:train's samples/s
# under today's launch agent, which records every rank's steps from its
# output (progress.json) and is asked for a `top` report every --interval
# seconds (2: top's and the dashboard's refresh), against the agent from
# before top existed, which does neither. Runs alternate so that a change
# in load hits both alike.
#
#   bazel run -c opt //bench:top_sampling_bench -- --base-agent=PATH \
#       [--runs=5 --nproc=2 --epochs=2 --log-every=10 --interval=2]
#
# PATH is an optimized fleetplan-agent built from the code before top (for
# example `git worktree add ../before a4a2741^` and `bazel build -c opt
# //tools/agent:fleetplan-agent` there). Each run is one agent alone (the
# local node, no transport) with --nproc ranks of the trainer (the small CNN
# on Fashion-MNIST, batch 64, Gloo on 127.0.0.1, one thread per rank) that
# log a metric line every --log-every steps (10: ten times the trainer's
# default, so the agent reads more lines than a job normally writes); the
# figure is rank 0's last epoch's samples/s (the first warms up), and the
# CPU seconds of the agent itself and of top's requests against its ranks'
# (a share that, unlike samples/s, a busy or noisy machine hardly moves).
# Prints every run, then per setting the median with min..max and the
# ratio of the medians, and the CPU shares; the load average at start and end.
set -euo pipefail

RUNS=5 NPROC=2 EPOCHS=2 LOG_EVERY=10 INTERVAL=2 BASE_AGENT=""
for arg in "$@"; do
  case "$arg" in
    --base-agent=*) BASE_AGENT="${arg#*=}" ;;
    --runs=*) RUNS="${arg#*=}" ;;
    --nproc=*) NPROC="${arg#*=}" ;;
    --epochs=*) EPOCHS="${arg#*=}" ;;
    --log-every=*) LOG_EVERY="${arg#*=}" ;;
    --interval=*) INTERVAL="${arg#*=}" ;;
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
  : > "$dir/top_cpu"
  if [[ $setting == sampled ]]; then
    # top's request, as `fleetplan top` sends it, every interval for the run;
    # each one's CPU seconds (user + system) noted.
    (while sleep "$INTERVAL"; do
       /usr/bin/time -a -o "$dir/top_cpu" -f '%U %S' \
         "$agent" top --protocol=2 --node=bench --log-dir="$dir/logs" > /dev/null 2>&1 || true
     done) &
    sampler=$!
  fi
  local before_ticks
  times > "$work/times"
  before_ticks=$(children_ticks "$work/times")
  env OMP_NUM_THREADS=1 WORLD_SIZE="$NPROC" MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29700 + n * 2)) \
    "$agent_bin" "$@" --node=bench --nproc="$NPROC" --log-dir="$dir/logs" --watch-stdin=false \
    -- "$train" --arch=cnn --dataset=fashion-mnist --batch-size=64 --epochs="$EPOCHS" \
    --log-every="$LOG_EVERY" > "$dir/out" 2>&1 < /dev/null &
  local agent_pid=$! agent_ticks=0 ticks
  # The agent's own CPU ticks (utime + stime, not its ranks'), read until it ends.
  while ticks=$(awk '{print $14 + $15}' "/proc/$agent_pid/stat" 2>/dev/null); do
    agent_ticks=$ticks
    sleep 0.2
  done
  wait "$agent_pid" ||
    { echo "run $setting $n failed:" >&2; tail -n 20 "$dir/out" >&2; exit 1; }
  # The agent and every rank it reaped: this shell's children's CPU.
  times > "$work/times"
  local all_ticks=$(( $(children_ticks "$work/times") - before_ticks ))
  if [[ -n $sampler ]]; then
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; sampler=""
    [[ -s $dir/logs/latest/progress.json ]] ||
      { echo "run $setting $n: the agent recorded no progress.json" >&2; exit 1; }
  fi
  local rate top_s requests
  rate="$(grep '"event":"epoch"' "$dir/logs/latest/rank-0.log" | tail -n 1 |
          /usr/bin/python3 -c 'import json,sys; print("%.1f" % json.loads(sys.stdin.read())["samples_per_sec"])')"
  top_s=$(awk '/^[0-9.]+ [0-9.]+$/ {s += $1 + $2} END {printf "%.2f", s}' "$dir/top_cpu")
  requests=$(grep -c '^[0-9.]* [0-9.]*$' "$dir/top_cpu" || true)
  local rank_s agent_s
  rank_s=$(awk -v a="$all_ticks" -v g="$agent_ticks" -v hz="$HZ" 'BEGIN {printf "%.2f", (a - g) / hz}')
  agent_s=$(awk -v g="$agent_ticks" -v hz="$HZ" 'BEGIN {printf "%.2f", g / hz}')
  printf '%-7s run %d  %8.1f samples/s  ranks %6.1f CPU s, agent %5.2f s, %d top requests %5.2f s\n' \
    "$setting" "$n" "$rate" "$rank_s" "$agent_s" "$requests" "$top_s" >&2
  echo "$setting $n $rate $rank_s $agent_s $top_s" >> "$work/rows"
}

HZ=$(getconf CLK_TCK)
# children_ticks FILE: CPU ticks (user + system) of this shell's reaped
# children, and theirs, from `times` written to FILE by the shell itself (a
# subshell's `times` would count only its own children).
children_ticks() {
  tail -n 1 "$1" | awk -v hz="$HZ" '{
    t = 0
    for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] }
    printf "%d", t * hz + 0.5 }'
}

echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $RUNS runs each; $NPROC ranks; a metric line every $LOG_EVERY steps; top every ${INTERVAL}s" >&2
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
# What the agent itself and top's requests cost, against what the ranks used.
for setting in ("before", "sampled"):
    shares = sorted((float(r[4]) + float(r[5])) / float(r[3]) * 100 for r in rows if r[0] == setting)
    print(f"{setting:8s} agent + top requests: median {statistics.median(shares):.3f} % of the ranks' CPU "
          f"({shares[0]:.3f}..{shares[-1]:.3f})")
PY
