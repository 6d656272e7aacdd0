#!/bin/sh
# A rank for the job lifecycle tests. It says who it is and which
# generation it runs in, records its environment per generation, then:
#   - rank FAIL_RANK fails with status 7 after a second, in generation 0
#     only, or in every generation with FAIL_ALWAYS=1;
#   - every other rank stays busy (not in any collective) for BUSY_SECONDS
#     in generation 0 and RUN_SECONDS afterwards, then says it is done.
gen="${TORCHELASTIC_RESTART_COUNT:-none}"
echo "rank $RANK generation $gen of $TORCHELASTIC_MAX_RESTARTS run $TORCHELASTIC_RUN_ID"
env > "$FP_OUT/life-$RANK-$gen.env"
if [ "$RANK" = "$FAIL_RANK" ] && { [ "$FAIL_ALWAYS" = 1 ] || [ "$gen" = 0 ]; }; then
  sleep 1
  echo "rank $RANK failing"
  exit 7
fi
if [ "$gen" = 0 ]; then sleep "${BUSY_SECONDS:-0}"; else sleep "${RUN_SECONDS:-0}"; fi
echo "rank $RANK done"
