#ifndef FLEETPLAN_TOOLS_CLI_JOB_COMMANDS_H_
#define FLEETPLAN_TOOLS_CLI_JOB_COMMANDS_H_

// status, logs and stop: a job's life after apply started it, read and
// acted on through the spec's transports. The state is on the nodes
// (job.json, rank logs); nothing runs on this machine between calls.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
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

// What stopping the job did (StopJob).
struct StopOutcome {
  // OK once no process of the job is left and what held the nodes is
  // released; the spec's lock's error (LockExitCode) when it could not be
  // taken, the first node that failed otherwise.
  absl::Status status;
  bool locked = false;                     // the lock could not be taken
  std::map<std::string, std::string> said;  // node → what its agent said
};

// What `stop` does, on `opened`'s connections: takes the spec's lock
// (waiting up to `lock_timeout`), stops the job on every node at once and
// releases what holds the nodes (a Slurm allocation is cancelled).
StopOutcome StopJob(const OpenedTarget& opened, absl::Duration lock_timeout);

// `stop --json`'s object: {"stopped", "nodes": [{"node", "said"}], "error"}.
nlohmann::json StopJson(const ClusterSpec& spec, const StopOutcome& outcome);

// A line of `logs` as the agent prints it, "[node/rank] text": the rank and
// the text; rank nullopt (text the whole line) for a line of the agent
// itself.
struct LogLine {
  std::optional<int> rank;
  absl::string_view text;
};
LogLine SplitLogLine(absl::string_view node, absl::string_view line);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_JOB_COMMANDS_H_
