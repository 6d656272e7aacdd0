#ifndef FLEETPLAN_TOOLS_AGENT_SUPERVISOR_H_
#define FLEETPLAN_TOOLS_AGENT_SUPERVISOR_H_

// The launch agent's core: starts a node's ranks, prefixes and logs their
// output, stops them all when one fails or when told to, restarts the set
// up to a limit (like torchrun --max-restarts), and records how it ended.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/agent/run_record.h"

namespace fleetplan {

struct SupervisorOptions {
  std::string node;     // for the [node/rank] prefix and result.json
  int first_rank = 0;   // RANK of LOCAL_RANK 0
  int nproc = 1;        // ranks to start
  int restarts = 0;     // restarts of the whole set after a failure
  std::string log_dir;  // see run_record.h
  absl::Duration grace_period = absl::Seconds(10);  // SIGTERM → SIGKILL
  std::vector<std::string> program;                 // argv of every rank
  // End-of-file here stops every rank (apply's channel closed); -1: not
  // watched. Bytes read from it are ignored.
  int stdin_fd = 0;
  // Readable means stop every rank (a signal handler writes to it); -1:
  // none.
  int stop_fd = -1;
  // Where prefixed output and the agent's own lines go.
  int output_fd = 1;
};

// Runs the ranks to the end and writes result.json. The result's status is
// 0 when every rank succeeded, else that of the lowest failing rank (128 +
// N for signal N). InvalidArgument for bad options; errors creating the log
// directory or writing result.json are returned too. A rank that cannot be
// started counts as failed with status 127.
absl::StatusOr<AgentResult> RunSupervisor(const SupervisorOptions& options);

// The lowest rank with a non-zero status in `statuses` (rank → status), or
// -1 when all are zero.
int LowestFailingRank(const std::map<int, int>& statuses);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_SUPERVISOR_H_
