#!/bin/sh
# Every command loads the libraries it links at start; those only one
# transport uses are opened when first needed (plugins/common/lazy_library.h).
# Fails when one of them is linked into the fleetplan binary again.
set -eu
binary="$TEST_SRCDIR/fleetplan/tools/fleetplan"
linked="$(ldd "$binary")"
status=0
for library in libarchive libslurm libcurl; do
  if printf '%s\n' "$linked" | grep -q "$library"; then
    echo "fleetplan links $library: open it when first used instead" >&2
    status=1
  fi
done
count="$(printf '%s\n' "$linked" | wc -l)"
echo "fleetplan loads $count shared objects at start"
exit "$status"
