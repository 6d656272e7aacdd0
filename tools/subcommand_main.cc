// main() of the per-command binaries (`bazel run //tools:plan`, ...): the
// subcommand FLEETPLAN_SUBCOMMAND of `fleetplan`, set by tools/BUILD.

#include "tools/cli/subcommands.h"

int main(int argc, char** argv) {
  return fleetplan::SubcommandMain(FLEETPLAN_SUBCOMMAND, argc, argv);
}
