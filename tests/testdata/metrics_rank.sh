#!/bin/sh
# A rank that prints trainer-style metric lines (tools/protocol/metric_line.h)
# five times a second until stopped: the step, a falling loss, a throughput.
step=0
while :; do
  step=$((step + 1))
  printf '{"event":"step","epoch":0,"step":%d,"loss":%d.%03d,"samples_per_sec":%d}\n' \
    "$step" $((10 / step)) $((1000 - step % 1000)) $((1000 + RANK * 100 + step % 7))
  sleep 0.2
done
