#!/bin/sh
# Runs architecture_test.py (see there) with the system's python3.
exec python3 "$TEST_SRCDIR/fleetplan/docs/architecture_test.py"
