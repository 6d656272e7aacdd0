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
#include "tools/protocol/agent_command.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/launcher_contract.h"
#include "tools/secure/job_key.h"

namespace fleetplan {

// How long a worker of an elastic job tries to rejoin after losing the
// coordinator: long enough for a network to come back or a node to
// reboot, bounded so that nothing waits forever for a chief that is gone.
inline constexpr absl::Duration kRejoinWindow = absl::Minutes(10);

// A launch as the node parsed it, and what the agent's caller adds at run
// time: the key read from its file, the file descriptors it watches, its
// hooks.
struct NodeAgentOptions {
  // What apply asked for (tools/protocol/agent_command.h), checked by its
  // Check(). `request.run_id` empty: the coordinator makes one and tells
  // the workers.
  AgentLaunch request;
  // The job's key (read from `request.key_file`), which every connection
  // between agents proves (TLS with it as pre-shared key,
  // tools/secure/tls_channel.h); required unless this node is the job's
  // only one.
  std::optional<JobKey> job_key;
  absl::Duration restart_backoff = absl::Seconds(1);
  // The stack tools and their timeout (tests name missing ones); the
  // agent samples its ranks' progress for `request.hang_timeout`
  // (hang_watch.h).
  StackCollectorOptions stack_tools;
  // A worker whose request rejoins (an elastic job): how long it tries to
  // reach the coordinator again after losing it, its ranks stopped
  // (kRejoinWindow; tests shorten it); zero: it ends at once.
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
// options (the request's Check(), or no key where one is needed); an
// error creating the log directory is returned too.
absl::StatusOr<NodeJobState> RunNodeAgent(const NodeAgentOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_NODE_AGENT_H_
