#include "tools/agent/node_agent.h"

#include "tools/agent/coordinator_agent.h"
#include "tools/agent/worker_agent.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

absl::StatusOr<NodeJobState> RunNodeAgent(const NodeAgentOptions& options) {
  FP_RETURN_IF_ERROR(options.request.Check());
  // Only an agent alone needs no key: every other one talks to a peer.
  if (!RunsAlone(options.request) && !options.job_key.has_value()) {
    return absl::InvalidArgumentError(
        "a job of several nodes needs the job's key (--key-file): the agents prove it to "
        "each other on every connection");
  }
  if (options.request.supervision.coordinator.empty()) return CoordinatorAgent(options).Run();
  return WorkerAgent(options).Run();
}

}  // namespace fleetplan
