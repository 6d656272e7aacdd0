#ifndef FLEETPLAN_TOOLS_AGENT_NODE_AGENT_H_
#define FLEETPLAN_TOOLS_AGENT_NODE_AGENT_H_

// The launch agent's core: runs this node's ranks as part of a job that
// the chief's agent coordinates (coordinator_agent.h; every other node's
// is a worker, worker_agent.h; both run their ranks as node_part.h says).
//
// The coordinator (the chief's agent) listens on the supervisor port;
// every other node's agent connects to it over TLS with the job's key, and
// a connection that does not prove the key within seconds is dropped
// before anything it sent is read. Messages are JSON lines
// (peer_channel.h), typed in tools/protocol/peer_message.h:
//   worker → coordinator: hello {node, nproc}, started {gen}, ended {gen, statuses,
//     failed, error}, stop (a stop was asked for on the worker), hb,
//     progress {gen}, stacks {gen, ranks}
//   coordinator → worker: welcome {run_id, node}, start {gen, why, members},
//     stop {gen}, end {state, exit_status, failure}, hb, collect {gen}
// A line that is no such message closes its connection.
// Both sides send hb a few times per heartbeat timeout; an agent that hears
// nothing from the coordinator for the timeout stops its ranks and exits,
// and a coordinator that loses a worker stops the job (job_coordinator.h
// decides the rest). The state is kept in job.json (tools/protocol).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/agent/stack_collector.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/launcher_contract.h"
#include "tools/secure/job_key.h"

namespace fleetplan {

// How long a worker of an elastic job tries to rejoin after losing the
// coordinator: long enough for a network to come back or a node to
// reboot, bounded so that nothing waits forever for a chief that is gone.
inline constexpr absl::Duration kRejoinWindow = absl::Minutes(10);

struct NodeAgentOptions {
  std::string node;     // for the [node/rank] prefix and job.json
  int first_rank = 0;   // RANK of LOCAL_RANK 0
  int nproc = 1;        // ranks to start
  int restarts = 0;     // whole-job restarts (the coordinator's budget)
  std::string log_dir;  // job.json, rank logs (see job_state.h)
  // The same on every node of one run; empty: the coordinator makes one
  // and tells the workers.
  std::string run_id;
  absl::Duration grace_period = absl::Seconds(10);  // SIGTERM → SIGKILL
  std::vector<std::string> program;                 // the job's argv
  // Whose contract the ranks see: its variables, and its local-rank
  // argument put into `program` (tools/protocol/launcher_contract.h).
  LauncherConfig launcher;

  // A coordinator lists every node of the job, its own included (empty:
  // this node alone) and listens on `supervisor_port` when there are
  // others; a worker names the coordinator as HOST:PORT instead.
  std::vector<std::string> nodes;
  int supervisor_port = 0;
  std::string coordinator;
  absl::Duration heartbeat_timeout = absl::Seconds(30);
  // The job's key, which every connection between agents proves (TLS with
  // it as pre-shared key, tools/secure/tls_channel.h); required unless
  // this node is the job's only one.
  std::optional<JobKey> job_key;
  absl::Duration restart_backoff = absl::Seconds(1);
  // Every agent samples its ranks' progress and says when they progressed;
  // the coordinator declares the job hung after this long without, and
  // every agent then reports its ranks' stacks (hang_watch.h). Zero: off.
  absl::Duration hang_timeout = absl::ZeroDuration();
  // The stack tools and their timeout (tests name missing ones).
  StackCollectorOptions stack_tools;
  // The spec's [job] progress pattern (rank_group.h).
  std::string progress_pattern;
  // An elastic job, on the coordinator: nodes in reserve, the fewest nodes
  // the job runs on (0: every node that is no spare), the node losses it
  // survives (nullopt: any), and whether a node that comes back grows the
  // job at once (else at the next restart): job_coordinator.h.
  std::vector<std::string> spares;
  int min_nodes = 0;
  std::optional<int> max_node_losses;
  bool rejoin_at_once = true;
  // An elastic job, on a worker: how long it tries to reach the
  // coordinator again after losing it, its ranks stopped (kRejoinWindow);
  // zero: it ends at once.
  absl::Duration rejoin_window = absl::ZeroDuration();

  // End-of-file here stops the job (a foreground agent whose caller went
  // away); -1: not watched.
  int stdin_fd = -1;
  // Readable means stop the job (a signal handler writes to it); -1: none.
  int stop_fd = -1;
  // Where prefixed rank output and the agent's own lines go; -1: nowhere
  // (a detached agent: the rank logs hold everything).
  int output_fd = 1;
  // Rank output goes to output_fd too (a foreground agent); the rank logs
  // get it either way.
  bool echo_rank_output = true;
  // Called once: with true when this node's ranks have first started, with
  // false when the job ended before they could.
  std::function<void(bool started)> on_started;
};

// Runs this node's part of the job to its end and returns the final state
// (also written to job.json). Its exit_status is the job's: 0 when every
// rank of every node succeeded, that of the first failing rank, 1 for a
// lost node or coordinator, 143 when stopped. InvalidArgument for bad
// options; an error creating the log directory is returned too.
absl::StatusOr<NodeJobState> RunNodeAgent(const NodeAgentOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_NODE_AGENT_H_
