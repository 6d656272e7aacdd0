#include "tools/apply/node_channels.h"

#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tools/plan/plan.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {

NodeChannels::NodeChannels(const ClusterSpec& spec, const ConnectionFactory& factory)
    : spec_(spec), factory_(factory) {
  cancels_[std::string(kControllerNode)] = std::make_unique<absl::Notification>();
  for (const NodeSpec& node : spec_.nodes) {
    cancels_[node.name] = std::make_unique<absl::Notification>();
  }
}

absl::Status NodeChannels::Open(const TransportOptions& options, int parallelism,
                                bool tolerate_not_there, bool sessions) {
  // Connected already: every node has its connection, or (where tolerated)
  // is known not to be there yet.
  const size_t known = connections_.size() + (tolerate_not_there ? not_there_.size() : 0);
  if (known == spec_.nodes.size()) return absl::OkStatus();
  connections_.clear();
  not_there_.clear();
  sessions_.clear();
  absl::Mutex sessions_mu;
  AfterConnect open_session = [&](const NodeSpec& node, std::unique_ptr<Connection> connection) {
    // Through a connection holder whose session on the node is the node's
    // agent already: that session serves (no channel, shell and agent
    // started on the node for this command).
    if (auto* held = dynamic_cast<AgentSessionConnection*>(connection.get());
        held != nullptr && held->agent_behind()) {
      absl::MutexLock lock(&sessions_mu);
      sessions_[node.name] = held;
      return connection;
    }
    // Where the node has no agent that speaks it (the first apply ships
    // one; an upgrade ships a new one) or the transport has no streams,
    // every step runs as its own command.
    absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session =
        AgentSessionConnection::Open(connection, node.name, AgentPath(node),
                                     absl::Seconds(options.connect_timeout_s));
    if (!session.ok()) return connection;
    absl::MutexLock lock(&sessions_mu);
    sessions_[node.name] = session->get();
    return std::unique_ptr<Connection>(*std::move(session));
  };
  absl::StatusOr<NodeConnections> opened =
      ConnectNodes(factory_, spec_, options, parallelism,
                   tolerate_not_there ? Tolerate::kNotThere : Tolerate::kNothing,
                   sessions ? open_session : nullptr);
  if (!opened.ok()) {
    sessions_.clear();
    return opened.status();
  }
  connections_ = std::move(opened->open);
  not_there_ = std::move(opened->not_there);
  return absl::OkStatus();
}

AgentSessionConnection* NodeChannels::SessionOf(const std::string& node) const {
  auto it = sessions_.find(node);
  return it == sessions_.end() ? nullptr : it->second;
}

std::vector<std::string> NodeChannels::NotThereYet() const {
  std::vector<std::string> names;
  for (const NodeSpec& node : spec_.nodes) {
    if (NotThere(node.name)) names.push_back(node.name);
  }
  return names;
}

const absl::Notification* NodeChannels::CancelFor(const std::string& node) const {
  auto it = cancels_.find(node);
  return it == cancels_.end() ? cancels_.at(std::string(kControllerNode)).get()
                              : it->second.get();
}

void NodeChannels::CancelAll() {
  // Notify() twice is fatal, and the launch phase and an interrupt may race.
  static absl::Mutex cancel_mu(absl::kConstInit);
  absl::MutexLock lock(&cancel_mu);
  for (auto& [node, cancel] : cancels_) {
    if (!cancel->HasBeenNotified()) cancel->Notify();
  }
}

}  // namespace fleetplan
