#ifndef FLEETPLAN_TOOLS_AGENT_JOB_STACKS_H_
#define FLEETPLAN_TOOLS_AGENT_JOB_STACKS_H_

// `stacks` on a node (fleetplan-agent stacks): where each of the node's
// running ranks stands now, read from its job.json's pids with the stack
// tools, which attach for a moment and detach (stack_collector.h): the job
// runs on unharmed, no signal is sent, no file written.

#include <string>

#include "absl/status/statusor.h"
#include "tools/agent/stack_collector.h"
#include "tools/protocol/peer_message.h"

namespace fleetplan {

// The node's ranks' stacks in the job's current generation; no ranks when
// the node has no job or its job ended. Errors reading job.json are
// returned (NotFound: the node has none).
absl::StatusOr<StacksMessage> NodeJobStacks(const std::string& log_dir, const std::string& node,
                                            const StackCollectorOptions& tools = {});

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_JOB_STACKS_H_
