#ifndef FLEETPLAN_TOOLS_CLI_MEMBERSHIP_VIEW_H_
#define FLEETPLAN_TOOLS_CLI_MEMBERSHIP_VIEW_H_

// What `status` shows of an elastic job's membership, from the chief's
// job.json (tools/protocol/job_state.h): which nodes run each generation,
// who was lost and when, the spares in reserve, and that the chief's loss
// ends the job (its agent is the coordinator). Pure: the command reads
// the state, this says it.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json_fwd.hpp"
#include "tools/protocol/job_state.h"

namespace fleetplan {

// For people, a line each: "generation 2 since 12:03:09: a, b, d",
// the generations before it, "lost c at 12:03:04 (no heartbeat for 10s)",
// "spares: e", and the chief's note. Times in `zone`.
std::vector<std::string> MembershipLines(const NodeJobState& chief, absl::TimeZone zone);

// For `status --json`: job.json's membership (MembershipToJson: generations,
// lost, spares, node_losses, restarts_used), "chief": the chief's node and
// "chief_loss_ends_job": true.
nlohmann::json MembershipJson(const NodeJobState& chief);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_MEMBERSHIP_VIEW_H_
