#ifndef FLEETPLAN_TOOLS_APPLY_NODE_CHANNELS_H_
#define FLEETPLAN_TOOLS_APPLY_NODE_CHANNELS_H_

// What one apply holds open to a spec's nodes: a connection per node (the
// launch agent's apply session where the node has an agent that speaks
// it), the nodes not there yet, a cancel per node and one for this machine
// (`kControllerNode`) that stop what runs there, and the job's key as
// written to each node. Opened once, before the phases run; read-only
// while they run, except for cancelling and the key.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "plugins/transport.h"
#include "tools/apply/agent_session.h"
#include "tools/apply/connect_nodes.h"
#include "tools/apply/job_key_delivery.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

class NodeChannels {
 public:
  // `spec` and `factory` must outlive this.
  NodeChannels(const ClusterSpec& spec, const ConnectionFactory& factory);

  // Connects to every node, `parallelism` at once; the first node that
  // cannot be reached is named. With `tolerate_not_there`, a node whose
  // transport says it is not there yet (NotFound: a read-only connect to a
  // container apply would create) gets no connection and is noted instead.
  // With `sessions`, each node's agent session opens as soon as the node is
  // connected. Does nothing when every node is known already.
  absl::Status Open(const TransportOptions& options, int parallelism, bool tolerate_not_there,
                    bool sessions);

  // The node's connection; it must have one (Has).
  Connection& Of(const std::string& node) const { return *connections_.at(node); }
  bool Has(const std::string& node) const { return connections_.count(node) != 0; }
  // Every open connection by node name (JobControl's view).
  const std::map<std::string, std::unique_ptr<Connection>>& all() const { return connections_; }
  // The node's agent session, or null when it has none.
  AgentSessionConnection* SessionOf(const std::string& node) const;

  // Whether the node's transport said it is not there yet, and what it said.
  bool NotThere(const std::string& node) const { return not_there_.count(node) != 0; }
  const std::string& WhyNotThere(const std::string& node) const { return not_there_.at(node); }
  // Those nodes, in spec order.
  std::vector<std::string> NotThereYet() const;

  // What cancels the commands of `node` (this machine's for a name that is
  // no node's, such as kControllerNode).
  const absl::Notification* CancelFor(const std::string& node) const;
  // Cancels every node's commands and this machine's. Thread-safe.
  void CancelAll();

  // Whether the node's transport wants a relayed sync.
  bool RelaysSync(const NodeSpec& node) const { return factory_.RelaysSync(node); }

  // Writes this apply's job key to `node` unless it did already.
  absl::Status DeliverJobKey(const NodeSpec& node) { return job_key_.EnsureOn(Of(node.name), node); }

 private:
  const ClusterSpec& spec_;
  const ConnectionFactory& factory_;
  std::map<std::string, std::unique_ptr<Connection>> connections_;
  std::map<std::string, AgentSessionConnection*> sessions_;  // owned by connections_
  std::map<std::string, std::string> not_there_;  // node → what its transport said
  std::map<std::string, std::unique_ptr<absl::Notification>> cancels_;
  JobKeyDelivery job_key_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_NODE_CHANNELS_H_
