#include "tools/agent/job_stacks.h"

#include <vector>

#include "tools/process/files.h"
#include "tools/protocol/job_state.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

absl::StatusOr<StacksMessage> NodeJobStacks(const std::string& log_dir, const std::string& node,
                                            const StackCollectorOptions& tools) {
  FP_ASSIGN_OR_RETURN(std::string json, ReadFileToString(JobStatePath(log_dir)));
  FP_ASSIGN_OR_RETURN(NodeJobState state, JobStateFromJson(json));
  StacksMessage message;
  message.generation = state.generation;
  if (IsFinal(state.phase)) return message;
  std::vector<RankTarget> targets;
  for (const RankState& rank : state.ranks) {
    if (rank.pid > 0 && !rank.status.has_value()) targets.push_back({rank.rank, rank.pid, ""});
  }
  message.ranks = CollectRankStacks(node, targets, tools);
  return message;
}

}  // namespace fleetplan
