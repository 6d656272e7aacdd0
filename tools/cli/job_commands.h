#ifndef FLEETPLAN_TOOLS_CLI_JOB_COMMANDS_H_
#define FLEETPLAN_TOOLS_CLI_JOB_COMMANDS_H_

// status, logs and stop: a job's life after apply started it, read and
// acted on through the spec's transports. The state is on the nodes
// (job.json, rank logs); nothing runs on this machine between calls.

#include <string>
#include <vector>

#include "tools/cli/spec_target.h"

namespace fleetplan {

// One line per node (state, generation, ranks alive, exit statuses, last
// heartbeat) and the job's overall state; with `json`, one object with
// "state" (none, running, succeeded, failed, stopped), "run_id",
// "generation" and "nodes". Exit 0 when every node was read, 1 when one
// could not be, 2 for bad input.
int RunStatusCommand(const JobTarget& target);

struct LogsCommandOptions {
  std::vector<std::string> nodes;  // empty: every node
  int rank = -1;
  int tail = -1;
  std::string run_id;  // empty: the latest
  bool follow = false;
  // The trainer's metric lines rendered for people (HumanMetricLine); the
  // main asks for it on a terminal, unless --raw.
  bool human = false;
};

// The ranks' output prefixed `[node/rank]`: each node's in turn, or, with
// `follow`, merged as it comes until the job ends (exit: the job's status;
// Ctrl-C stops following, not the job: 130). 1 when a node could not be
// read, 2 for bad input.
int RunLogsCommand(const JobTarget& target, const LogsCommandOptions& options);

// Stops the job on every node; exit 0 once no process of it is left
// anywhere, 1 naming the node where that could not be done.
int RunStopCommand(const JobTarget& target);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_JOB_COMMANDS_H_
