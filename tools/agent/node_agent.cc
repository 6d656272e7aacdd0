#include "tools/agent/node_agent.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tools/agent/coordinator_agent.h"
#include "tools/agent/worker_agent.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// Only an agent alone needs no key: every other one talks to a peer.
bool HasTheKeyItNeeds(const NodeAgentOptions& options) {
  bool alone = options.coordinator.empty() &&
               (options.nodes.empty() ||
                (options.nodes.size() == 1 && options.nodes[0] == options.node));
  return alone || options.job_key.has_value();
}

absl::Status Validate(const NodeAgentOptions& options) {
  if (options.node.empty()) return absl::InvalidArgumentError("--node is required");
  if (options.nproc < 1) return absl::InvalidArgumentError("--nproc must be at least 1");
  if (options.first_rank < 0) return absl::InvalidArgumentError("--first-rank must be >= 0");
  if (options.restarts < 0) return absl::InvalidArgumentError("--restarts must be >= 0");
  if (options.log_dir.empty()) return absl::InvalidArgumentError("--log-dir is required");
  if (options.program.empty()) {
    return absl::InvalidArgumentError("no program: give it after `--`");
  }
  if (options.heartbeat_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--heartbeat-timeout must be positive");
  }
  if (options.hang_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--hang-timeout must not be negative (0: off)");
  }
  if (!HasTheKeyItNeeds(options)) {
    return absl::InvalidArgumentError(
        "a job of several nodes needs the job's key (--key-file): the agents prove it to "
        "each other on every connection");
  }
  if (!options.coordinator.empty() && !options.nodes.empty()) {
    return absl::InvalidArgumentError("--coordinator (a worker) and --nodes (the coordinator) "
                                      "exclude each other");
  }
  bool alone = options.nodes.empty() ||
               (options.nodes.size() == 1 && options.nodes[0] == options.node);
  if (options.coordinator.empty() && !alone) {
    if (std::find(options.nodes.begin(), options.nodes.end(), options.node) ==
        options.nodes.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--nodes must list this node ('", options.node, "')"));
    }
    if (options.supervisor_port < 1 || options.supervisor_port > 65535) {
      return absl::InvalidArgumentError("a job of several nodes needs --supervisor-port");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NodeJobState> RunNodeAgent(const NodeAgentOptions& options) {
  FP_RETURN_IF_ERROR(Validate(options));
  if (options.coordinator.empty()) return CoordinatorAgent(options).Run();
  return WorkerAgent(options).Run();
}

}  // namespace fleetplan
