"""fleetplan's version, in one place: `fleetplan version` and the man pages
print it (the generated tools/cli/version.h), and the .deb is named and
stamped with it (//packaging:deb)."""

FLEETPLAN_VERSION = "0.1.0"
