#ifndef FLEETPLAN_TOOLS_CLI_COMMANDS_H_
#define FLEETPLAN_TOOLS_CLI_COMMANDS_H_

// The plan and apply commands, given their parsed options; each returns
// the process's exit code (0 ok, 1 apply failed or the job's status, 2 bad
// input, 73 another apply, stop or destroy of the spec holds its lock, 130
// interrupted) and prints to stdout/stderr.

#include <string>

#include "tools/apply/connect_nodes.h"
#include "tools/apply/executor.h"

namespace fleetplan {

struct PlanCommand {
  std::string spec;  // as typed
  bool json = false;
  std::string out;  // save the plan here ("" : don't)
  std::string color = "auto";
  // Connect to the nodes and run the preflight checks alone, changing
  // nothing; print their summary instead of the plan.
  bool check = false;
  // Connect to the nodes, read what they hold of earlier applies, and mark
  // each step of the plan with what apply would do to it.
  bool refresh = false;
  ApplyOptions options;  // for `check` and `refresh`: parallelism, transport options
  // How `check` and `refresh` reach the nodes.
  const ConnectionFactory* connections = &TransportConnections();
};

// Prints the plan (exit 0; with `refresh`, 1 when a node could not be
// read), or with `check` the checks' summary (exit 0 when every check
// passed, 1 when one failed).
int RunPlanCommand(const PlanCommand& command);

struct ApplyCommand {
  std::string target;  // a spec, or a saved plan (.json), as typed
  bool json = false;
  std::string color = "auto";
  bool destroy = false;
  // Remove the spec's lock (whoever holds it), say whose it was, and exit.
  bool force_unlock = false;
  std::string workspace;  // --workspace
  std::string agent;      // --agent
  std::string argv0;
  ApplyOptions options;  // parallelism, force, transport options
  const ConnectionFactory* connections = &TransportConnections();  // how it reaches the nodes
};

// Runs the apply; SIGINT and SIGTERM stop it (exit 130) with every node
// cancelled first.
int RunApplyCommand(ApplyCommand command);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_COMMANDS_H_
