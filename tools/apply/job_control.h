#ifndef FLEETPLAN_TOOLS_APPLY_JOB_CONTROL_H_
#define FLEETPLAN_TOOLS_APPLY_JOB_CONTROL_H_

// What apply (attached), status, logs and stop do with a job through open
// connections to its nodes: read each node's job.json, run the agent's
// `logs` on nodes, stop the job everywhere. Nothing runs on this machine
// between calls; the state is on the nodes.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "plugins/transport.h"
#include "tools/plan/node_scripts.h"
#include "tools/protocol/job_state.h"
#include "tools/protocol/peer_message.h"
#include "tools/protocol/top_report.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

class JobControl {
 public:
  // `connections` must hold a connection for every node of `spec` that is
  // used; both must outlive this.
  JobControl(const ClusterSpec& spec,
             const std::map<std::string, std::unique_ptr<Connection>>& connections)
      : spec_(spec), connections_(connections) {}

  // The node's job.json: nullopt when it has none; errors when it cannot
  // be read or is not the agent's.
  absl::StatusOr<std::optional<NodeJobState>> ReadState(const NodeSpec& node) const;
  // Every node's, read at once, in spec order (nullopt for a node with no
  // connection: one not there yet).
  std::vector<absl::StatusOr<std::optional<NodeJobState>>> ReadStates() const;
  // The chief's, nullopt when it has none or on any error.
  std::optional<NodeJobState> ChiefState() const;

  // Stops the job on every node at once and returns once no process of it
  // is left (the agent's `stop`; a node with no connection is not there
  // and runs nothing); the first node that failed is named.
  // What each node's agent said goes to `on_line` when given.
  absl::Status Stop(
      const std::function<void(const NodeSpec&, absl::string_view)>& on_line = nullptr) const;

  struct LogsCallbacks {
    // Each line of a node's output.
    std::function<void(const NodeSpec&, absl::string_view)> on_line;
    // What cancels a node's command (may be empty or return null: nothing).
    std::function<const absl::Notification*(const NodeSpec&)> cancel_for;
    // A node's command ended: its exit status, or why it could not run to
    // its end (a lost connection).
    std::function<void(const NodeSpec&, const absl::StatusOr<int>&)> on_end;
  };

  // Runs the agent's `logs` with `request` on `nodes` at once. Returns each
  // node's exit status (the job's, when following); NotFound for a node
  // with no connection (not there yet).
  std::vector<absl::StatusOr<int>> Logs(const LogsRequest& request,
                                        const std::vector<const NodeSpec*>& nodes,
                                        const LogsCallbacks& callbacks) const;

  // Follows the job (request.follow) on `nodes` until it ends, as apply
  // and `logs --follow` do (job_follow.cc). The chief's part ends last: its
  // agent decides the job's end. Once it has, the others get a moment to
  // drain, and a node cut off from the network is not waited for. A
  // worker's lost connection waits a moment for the chief's word (the
  // coordinator may be ending the job because of that very node). The
  // chief out of reach ends following at once. Each of these ends calls
  // `cancel_all`, which must cancel every node's command (callbacks'
  // cancel_for). Without the chief among `nodes`, each node is followed to
  // its own end.
  struct Followed {
    std::vector<absl::StatusOr<int>> results;  // per node of `nodes`
    // The chief's part ran to its end: the job's end is known.
    bool chief_to_the_end = false;
  };
  Followed Follow(const LogsRequest& request, const std::vector<const NodeSpec*>& nodes,
                  const LogsCallbacks& callbacks, const std::function<void()>& cancel_all) const;
  // Runs the agent's `stacks` on every node at once: where each node's
  // running ranks stand, in spec order. NotFound for a node with no
  // connection; an error naming what the node's agent said otherwise.
  std::vector<absl::StatusOr<StacksMessage>> Stacks() const;
  // Runs the agent's `top` on every node at once: each node's figures and
  // its ranks', as one report with that node alone (named as the spec
  // names it), in spec order. NotFound for a node with no connection; an
  // error naming what the node's agent said otherwise. `cancel` (may be
  // null) ends every node's command.
  std::vector<absl::StatusOr<TopReport>> Top(const absl::Notification* cancel = nullptr) const;

 private:
  // Runs `command_for(node)` on every node at once, each cancelled by
  // `cancel` or after `timeout`; the last line each printed, or why not
  // (`what` names the command).
  std::vector<absl::StatusOr<std::string>> AskAgents(
      const std::function<std::string(const NodeSpec&)>& command_for, absl::string_view what,
      absl::Duration timeout, const absl::Notification* cancel) const;

  const ClusterSpec& spec_;
  const std::map<std::string, std::unique_ptr<Connection>>& connections_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_JOB_CONTROL_H_
