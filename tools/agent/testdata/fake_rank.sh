#!/bin/sh
# A rank for tests: reports its pid and environment, then
#   fake_rank.sh FAIL_RANK CODE OTHERS [ONCE_FILE]
# exits with CODE if RANK is FAIL_RANK (CODE "kill" kills itself with
# SIGKILL; with ONCE_FILE, fails only while that file does not exist and
# creates it), and otherwise exits 0 (OTHERS=exit) or sleeps (OTHERS=hang).
# A failing rank writes FAKE_EXCEPTION, when set, to its error file as
# torch's @record would.
echo "pid=$$ rank=$RANK local_rank=$LOCAL_RANK world=$WORLD_SIZE"
printf 'partial from %s' "$RANK"
echo " ...done" >&2
if [ "$RANK" = "$1" ]; then
  if [ -z "$4" ] || [ ! -e "$4" ]; then
    [ -n "$4" ] && touch "$4"
    sleep 0.2
    echo "rank $RANK failing"
    if [ -n "$FAKE_EXCEPTION" ]; then
      printf '{"message": {"message": "%s"}}' "$FAKE_EXCEPTION" >"$TORCHELASTIC_ERROR_FILE"
    fi
    [ "$2" = kill ] && kill -9 $$
    exit "$2"
  fi
fi
[ "$3" = hang ] && exec sleep 1000
exit 0
