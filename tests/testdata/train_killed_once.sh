#!/bin/sh
# Starts the trainer in this folder; in the job's first generation, rank 1
# is killed (SIGKILL, as by the OOM killer) once rank 0 has written its
# first checkpoint to CHECKPOINT_DIR, mid-epoch.
if [ "$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "$RANK" = 1 ]; then
  pid=$$
  (
    while [ ! -f "$CHECKPOINT_DIR/checkpoint.pt" ]; do sleep 0.1; done
    sleep 0.5
    kill -9 "$pid"
  ) &
fi
exec "$(dirname "$0")/train" "$@"
