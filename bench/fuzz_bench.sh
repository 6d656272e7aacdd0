#!/bin/sh
# Fuzzes the spec parser and validator (//tools/spec:spec_fuzzer, libFuzzer
# with ASan and UBSan) for longer than `bazel test` does, and prints what it
# did: executions, executions per second, coverage, corpus size, findings.
#
#   bench/fuzz_bench.sh [SECONDS]    (default: 600; one core)
#
# The corpus grows in /tmp/fleetplan-fuzz/spec_fuzzer_bin/corpus across runs
# (FUZZ_WORK_DIR moves it); a crash, leak or timeout is written to its
# artifacts/ folder, and the script exits non-zero. Turn each finding into a
# test in tools/spec/spec_parser_test.cc before fixing it.
set -eu
cd "$(dirname "$0")/.."
seconds="${1:-600}"
log="$(mktemp /tmp/fuzz_bench.XXXXXX)"
status=0
bazel run //tools/spec:spec_fuzzer -- -max_total_time="$seconds" >"$log" 2>&1 || status=$?
grep -E 'cov: [0-9]+' "$log" | tail -n 1 || true
grep -E '^(stat::|Done |SUMMARY|==[0-9]+==ERROR|.*Test unit written)' "$log" || true
echo "fuzz_bench: full log in $log; exit status $status"
exit "$status"
