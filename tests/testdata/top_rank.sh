#!/bin/sh
# A rank for the `top` test: local rank 0 burns a core, printing `step N`
# every 20,000 turns of its loop; every other rank sleeps between its
# `step N` lines. Both never end.
i=0
if [ "$LOCAL_RANK" = 0 ]; then
  while :; do
    i=$((i + 1))
    if [ $((i % 20000)) = 0 ]; then echo "step $((i / 20000))"; fi
  done
fi
while :; do
  i=$((i + 1))
  echo "step $i"
  sleep 0.3
done
