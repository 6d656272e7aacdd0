#!/usr/bin/env bash
# Runs a libFuzzer binary over a work corpus seeded from checked-in inputs.
#   run_fuzzer.sh FUZZER DICT SEED_DIR... -- [libFuzzer flags]
# New inputs go to $FUZZ_WORK_DIR/corpus (kept between runs), crashes, leaks
# and timeouts to $FUZZ_WORK_DIR/artifacts/. Under a test the corpus is
# thrown away and findings are kept in the test's undeclared outputs
# (bazel-testlogs/.../test.outputs/).
set -euo pipefail

fuzzer=$1
dict=$2
shift 2
seeds=()
while (($#)) && [[ $1 != -- ]]; do
  seeds+=("$1")
  shift
done
(($#)) && shift

work=${FUZZ_WORK_DIR:-${TEST_TMPDIR:-${TMPDIR:-/tmp}/fleetplan-fuzz}/$(basename "$fuzzer")}
artifacts=${TEST_UNDECLARED_OUTPUTS_DIR:-$work/artifacts}
mkdir -p "$work/corpus" "$artifacts"
echo "run_fuzzer: corpus $work/corpus, findings in $artifacts/" >&2
exec "$fuzzer" -dict="$dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "$@" "$work/corpus" "${seeds[@]}"
