#ifndef FLEETPLAN_TOOLS_APPLY_LAUNCH_RESULT_H_
#define FLEETPLAN_TOOLS_APPLY_LAUNCH_RESULT_H_

// The launch agent's report of how a node's ranks ended:
// <workdir>/.fleetplan/nodes/<node>/logs/result.json =
// {"node", "status", "failed_rank", "restarts", "run_id"}.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

struct NodeResult {
  std::string node;
  int status = 0;                  // the node's exit status
  std::optional<int> failed_rank;  // global rank that failed, if one did
  int restarts = 0;
  std::string run_id;
};

// Where the agent on `node` writes its result.
std::string ResultJsonPath(const NodeSpec& node);

// Parses result.json. InvalidArgument when it is not the agent's format.
absl::StatusOr<NodeResult> ParseNodeResult(absl::string_view json);

// The failure to report for a job: the failed node result with the lowest
// failed rank (a node without a failed rank sorts last), or nullopt when
// `results` holds no failure.
std::optional<NodeResult> FirstFailure(const std::vector<NodeResult>& results);

// "rank 3 on node 'b' failed with exit status 1", or, without a rank,
// "node 'b' failed with exit status 1".
std::string DescribeFailure(const NodeResult& result);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_LAUNCH_RESULT_H_
