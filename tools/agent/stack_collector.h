#ifndef FLEETPLAN_TOOLS_AGENT_STACK_COLLECTOR_H_
#define FLEETPLAN_TOOLS_AGENT_STACK_COLLECTOR_H_

// Collects the stacks of a node's ranks without stopping them: for each
// process of a rank (the rank and what it started), its native frames of
// every thread with `eu-stack -m -p PID` (elfutils) and, for a Python
// interpreter, its Python frames of every thread with gdb's `py-bt`
// (`gdb -p PID -batch -nx`, whose Python extension python3.X-dbg installs).
// Both attach with ptrace for a moment and detach; no signal is sent. A
// tool that is missing, cannot attach (ptrace refused) or takes too long is
// a named skip, never silently absent.

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/protocol/stack_report.h"

namespace fleetplan {

struct StackCollectorOptions {
  absl::Duration tool_timeout = absl::Seconds(60);  // per tool and process
  // Argv of the two tools before the pid; tests name others.
  std::vector<std::string> gdb = {"gdb"};
  std::vector<std::string> eu_stack = {"eu-stack"};
};

struct RankTarget {
  int rank = 0;
  pid_t pid = 0;              // the rank's process (its group's leader)
  std::string stacks_path;    // where the full stacks go (0600); empty: nowhere
};

// The stacks of every rank at once (a thread per rank): each rank's
// innermost user frame and skips, in the order of `ranks`; the tools'
// whole output of every process goes to the rank's stacks_path.
std::vector<RankStack> CollectRankStacks(const std::string& node,
                                         const std::vector<RankTarget>& ranks,
                                         const StackCollectorOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_STACK_COLLECTOR_H_
