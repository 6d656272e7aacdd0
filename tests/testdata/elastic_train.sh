#!/bin/sh
# The trainer as a rank of an elastic test: says where it stands in its
# generation (as generation_rank.sh does), then is the trainer.
echo "rank=$RANK world=$WORLD_SIZE restart=$TORCHELASTIC_RESTART_COUNT group=$GROUP_RANK/$GROUP_WORLD_SIZE"
exec ./train "$@"
