#!/bin/sh
# A rank for the end-to-end apply test: records the environment it got,
# then fails (when it is FAIL_RANK), keeps running (when FAIL_RANK names
# another rank), or exits 0.
set -e
env > "$FP_OUT/rank-$RANK.env"
printf '%s' "$HOSTILE" > "$FP_OUT/hostile-$RANK"
if [ "$FAIL_RANK" = "none" ]; then exit 0; fi
if [ "$RANK" = "$FAIL_RANK" ]; then sleep 1; exit 3; fi
while :; do sleep 0.2; done
