#ifndef FLEETPLAN_TOOLS_AGENT_RUN_RECORD_H_
#define FLEETPLAN_TOOLS_AGENT_RUN_RECORD_H_

// What the launch agent leaves in its log directory:
//   DIR/<run-id>/rank-<RANK>.log   each rank's raw output, per run
//   DIR/latest -> <run-id>
//   DIR/result.json                how the run ended; apply reads it

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetplan {

// How one agent run ended.
struct AgentResult {
  std::string node;
  int status = 0;        // the agent's exit status
  int failed_rank = -1;  // the lowest failing rank, -1 when none failed
  int restarts = 0;      // restarts used
  std::string run_id;
};

// "20250102T030405Z-1234": UTC time and pid, unique per agent on a node
// and sorted by time.
std::string MakeRunId(absl::Time now, int pid);

// Creates DIR/<run_id> and points DIR/latest at it (replaced atomically).
// Returns the run directory.
absl::StatusOr<std::string> CreateRunDir(const std::string& log_dir,
                                         const std::string& run_id);

// DIR/<run_id>/rank-<rank>.log
std::string RankLogPath(const std::string& run_dir, int rank);

// {"node": ..., "status": ..., "failed_rank": ..., "restarts": ...,
//  "run_id": ...}
std::string ResultToJson(const AgentResult& result);
absl::StatusOr<AgentResult> ResultFromJson(const std::string& json);

// Writes DIR/result.json atomically.
absl::Status WriteResult(const std::string& log_dir, const AgentResult& result);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_RUN_RECORD_H_
