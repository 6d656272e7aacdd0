#!/usr/bin/env bash
# What a fleetplan command costs before it does anything: `fleetplan
# version` and `fleetplan status --help`, whole processes under hyperfine,
# beside /bin/true and a C++ hello (std::cout, libstdc++ loaded as usual)
# for the floor of this machine; with COMPARE_BIN_DIR, the same commands of
# another build side by side in the same run.
#
#   bench/startup_bench.sh       (RUNS=300 by default; opt build of main,
#                                 or BIN_DIR=<bazel-bin of an opt build>)
#
# Target: each subcommand starts in under 5 ms. Then, for each binary, the
# shared objects it loads and its page faults and task-clock (perf stat).
set -euo pipefail

cd "$(dirname "$0")/.."
runs=${RUNS:-300}

opt_bin() {
  local ob=${FLEETPLAN_BAZEL_OUTPUT_BASE:-/root/.cache/bazel-ob/ssh}
  bazel --output_base="$ob" build -c opt --symlink_prefix=/ //tools:fleetplan >&2
  bazel --output_base="$ob" info -c opt bazel-bin 2>/dev/null
}
fp="${BIN_DIR:-$(opt_bin)}/tools/fleetplan"
work=$(mktemp -d /tmp/startup_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

printf '#include <iostream>\nint main() { std::cout << "hello\\n"; }\n' >"$work/hello.cc"
g++ -O2 -o "$work/hello" "$work/hello.cc"

commands=("/bin/true" "$work/hello" "$fp version" "$fp status --help")
names=("/bin/true" "C++ hello" "fleetplan version" "fleetplan status --help")
if [[ -n "${COMPARE_BIN_DIR:-}" ]]; then
  commands+=("$COMPARE_BIN_DIR/tools/fleetplan version" "$COMPARE_BIN_DIR/tools/fleetplan status --help")
  names+=("compared: fleetplan version" "compared: fleetplan status --help")
fi

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
args=()
for i in "${!commands[@]}"; do args+=(-n "${names[$i]}" "${commands[$i]}"); done
hyperfine -N -w 20 -r "$runs" --export-json "$work/times.json" "${args[@]}" >/dev/null 2>"$work/hyperfine.err" ||
  { cat "$work/hyperfine.err" >&2; exit 1; }
python3 - "$work/times.json" <<'PY'
import json, statistics, sys
print(f"{'command':34} {'median':>9} {'p10..p90':>17} {'min..max':>17}")
for r in json.load(open(sys.argv[1]))["results"]:
    t = sorted(x * 1000 for x in r["times"])
    q = statistics.quantiles(t, n=10)
    print(f"{r['command']:34} {statistics.median(t):7.2f}ms {q[0]:7.2f}..{q[-1]:<7.2f}ms "
          f"{t[0]:7.2f}..{t[-1]:<7.2f}ms")
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

for binary in "$fp" ${COMPARE_BIN_DIR:+"$COMPARE_BIN_DIR/tools/fleetplan"}; do
  echo "$binary: $(ldd "$binary" | wc -l) shared objects (ldd)"
  perf stat -r 100 -e page-faults,task-clock "$binary" version 2>&1 >/dev/null |
    awk '/page-faults|task-clock/ {print "  " $1, $2}'
done
