#!/bin/sh
# A rank for the elastic tests: says where it stands in its generation,
# then runs until it is stopped (as this script, so that a test finds it
# among a node's processes).
echo "rank=$RANK world=$WORLD_SIZE restart=$TORCHELASTIC_RESTART_COUNT group=$GROUP_RANK/$GROUP_WORLD_SIZE"
while :; do sleep 1; done
