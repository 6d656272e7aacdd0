#!/bin/sh
# Every command loads the libraries it links at start; those only one
# transport or command uses are opened when first needed
# (tools/util/lazy_library.h), and the dashboard's HTTP server is a program
# of its own (tools/cli/dashboard_launch.h). Fails when one of them is
# linked into the fleetplan binary again.
set -eu
binary="$TEST_SRCDIR/fleetplan/tools/fleetplan"
linked="$(ldd "$binary")"
status=0
for library in libarchive libslurm libcurl libssh libcrypto libssl libcpp-httplib; do
  if printf '%s\n' "$linked" | grep -q "$library"; then
    echo "fleetplan links $library: open it when first used instead" >&2
    status=1
  fi
done
count="$(printf '%s\n' "$linked" | wc -l)"
echo "fleetplan loads $count shared objects at start"
exit "$status"
