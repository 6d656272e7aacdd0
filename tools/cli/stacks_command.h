#ifndef FLEETPLAN_TOOLS_CLI_STACKS_COMMAND_H_
#define FLEETPLAN_TOOLS_CLI_STACKS_COMMAND_H_

// `stacks`: where every rank of a running job stands now, grouped by its
// innermost frame of the user's code, read on every node through the
// spec's transports (fleetplan-agent stacks). The job runs on unharmed:
// the stack tools attach for a moment and detach, no signal is sent.

#include "tools/cli/spec_target.h"

namespace fleetplan {

// One line per group of ranks and per skip (stack_report.h), as a hung
// job's failure shows them; with `target.json`, one object: "groups",
// "skips" (StackSummaryToJson) and "lines". A node that could not be read
// is a skip naming why. Exit 0 when every node answered, 1 when one did
// not, 2 for bad input.
int RunStacksCommand(const JobTarget& target);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_STACKS_COMMAND_H_
