#ifndef FLEETPLAN_TOOLS_CLI_SUBCOMMANDS_H_
#define FLEETPLAN_TOOLS_CLI_SUBCOMMANDS_H_

// The fleetplan binary's subcommand table, as ninja's `-t` tools:
// `fleetplan NAME ...` runs the row's function with the arguments after
// NAME. Besides the commands (plan, apply, status, logs, stop, exec): help,
// version and completion. A mistyped name is told the nearest one.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/cli/command_doc.h"
#include "tools/cli/flag_set.h"

namespace fleetplan {

struct Subcommand {
  const char* name;
  const char* summary;  // one line for `fleetplan help`; "" keeps it out of help
  int (*run)(const CommandLine& line);
};

// Every row, in the order `fleetplan help` lists them.
const std::vector<Subcommand>& Subcommands();

// The row named `name`, or nullptr.
const Subcommand* FindSubcommand(absl::string_view name);

// main() of `fleetplan`: argv[1] names the subcommand. With none, or
// --help, prints the overview; an unknown one is bad input (exit 2) with
// the nearest name suggested.
int FleetplanMain(int argc, char** argv);

// main() of a per-command binary (`fleetplan-plan`, run by
// `bazel run //tools:plan`): runs the subcommand `name` with argv[1...].
int SubcommandMain(absl::string_view name, int argc, char** argv);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_SUBCOMMANDS_H_
