#!/bin/sh
# Every command, and every agent start, loads the libraries its binary
# links; those only one transport or the agents' TLS channels use are
# opened when first needed (tools/util/lazy_library.h), and the dashboard's
# HTTP server is a program of its own (tools/cli/dashboard_launch.h).
# Fails when one of them is linked into the binary ($1, a runfiles path:
# the fleetplan CLI or the agent) again, directly or through another, or
# when one of the libraries named after it (those the binary holds linked
# in, for its start-up) is loaded as a shared object.
set -eu
binary="$TEST_SRCDIR/fleetplan/$1"
shift
name="$(basename "$binary")"
linked="$(ldd "$binary")"
status=0
# refuse LIBRARY WHY: fails the test when the binary loads LIBRARY at start.
refuse() {
  if printf '%s\n' "$linked" | grep -q "$1"; then
    echo "$name $2" >&2
    status=1
  fi
}
for library in libarchive libslurm libcurl libssh libcrypto libssl libcpp-httplib; do
  refuse "$library" "links $library: open it when first used instead"
done
for library in "$@"; do
  refuse "$library" "loads $library as a shared object: link it in (start-up)"
done
count="$(printf '%s\n' "$linked" | wc -l)"
echo "$name loads $count shared objects at start"
exit "$status"
