#ifndef FLEETPLAN_TOOLS_AGENT_JOB_FILES_H_
#define FLEETPLAN_TOOLS_AGENT_JOB_FILES_H_

// What the agent does on its node for `logs` and `stop` (and for apply
// while it stays attached): read the rank logs and job.json that a running
// or finished agent keeps, and stop a running one. The user's machine runs
// nothing between calls; these run on the node through the transport.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetplan {

struct LogsOptions {
  std::string log_dir;
  std::string node;    // for the [node/rank] prefix
  std::string run_id;  // empty: the latest run
  int rank = -1;       // -1: every rank of the node
  int tail = -1;       // the last N lines of each rank; -1: all
  // Keep printing what the ranks write until this node's part of the run
  // ends (job.json final, or its agent gone).
  bool follow = false;
  int output_fd = 1;
  absl::Duration poll_interval = absl::Milliseconds(100);
};

// Prints the ranks' output prefixed `[node/rank]`: each rank's log in turn,
// then, when following, new lines as they come, merged. Returns the job's
// exit status once a followed run ended (0 without --follow, or for a node
// that has no run yet). NotFound for a run id the node does not have;
// Unavailable when following a run whose agent died without a word.
absl::StatusOr<int> PrintRankLogs(const LogsOptions& options);

// Stops the job's agent on this node (SIGTERM: it stops its ranks and
// tells the coordinator), waits for it for `grace` plus a margin, then
// kills what is left of it and of its ranks' process groups. Returns what
// it did ("nothing running", "stopped run R (agent 123)"); Internal naming
// the pids still there if any process of the job survived.
absl::StatusOr<std::string> StopNodeJob(const std::string& log_dir, absl::Duration grace);

// True while `pid` is a live fleetplan-agent process (not a zombie, not a
// pid reused by something else).
bool AgentAlive(int pid);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_JOB_FILES_H_
