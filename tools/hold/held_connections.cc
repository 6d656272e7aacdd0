#include "tools/hold/held_connections.h"

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tools/apply/agent_session.h"
#include "tools/hold/held_stream.h"
#include "tools/hold/holder_start.h"
#include "tools/hold/unix_socket.h"
#include "tools/protocol/hold_wire.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {
namespace {

// How long the holder may take past the node's own connect timeout to
// answer an attach (it connects when it holds no idle connection).
constexpr absl::Duration kAttachSlack = absl::Seconds(5);

SessionEndpoint HolderEndpoint(const std::string& socket, const HoldAttach& attach) {
  SessionEndpoint endpoint;
  endpoint.open = [socket, attach]() -> absl::StatusOr<std::unique_ptr<CommandStream>> {
    absl::StatusOr<int> fd = ConnectUnix(socket);
    // Aborted: the holder cannot be reached, and the node is connected directly.
    if (!fd.ok()) return absl::AbortedError(fd.status().message());
    auto stream = std::make_unique<SocketStream>(*fd);
    if (absl::Status sent = stream->Write(EncodeAttach(attach)); !sent.ok()) {
      return absl::AbortedError(sent.message());
    }
    return std::unique_ptr<CommandStream>(std::move(stream));
  };
  endpoint.greeting = kHoldGreeting;
  endpoint.name = "the connection holder";
  endpoint.session = "the connection holder's session";
  endpoint.open_command = [socket, attach](const std::string& command) {
    return OpenHeldStream(socket, attach, command);
  };
  return endpoint;
}

class Held : public ConnectionFactory {
 public:
  absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const ClusterSpec& spec, const NodeSpec& node,
      const TransportOptions& options) const override {
    absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
    std::optional<HoldKey> key;
    if (transport.ok()) key = (*transport)->Holding(spec, node, options);
    if (!key.has_value()) return ConnectNode(spec, node, options);
    absl::StatusOr<std::string> socket = HolderOf(spec, options);
    if (!socket.ok()) return ConnectNode(spec, node, options);
    HoldAttach attach{node.name, key->identity, options.connect_timeout_s,
                      options.accept_new_host_keys, AgentPath(node)};
    absl::StatusOr<std::unique_ptr<AgentSessionConnection>> held =
        AgentSessionConnection::Attach(HolderEndpoint(*socket, attach), node.name,
                                       absl::Seconds(options.connect_timeout_s) + kAttachSlack);
    // Aborted: no holder to speak to, or one made for other connections.
    if (absl::IsAborted(held.status())) return ConnectNode(spec, node, options);
    if (!held.ok()) return held.status();
    return std::unique_ptr<Connection>(*std::move(held));
  }

  bool RelaysSync(const NodeSpec& node) const override {
    return TransportConnections().RelaysSync(node);
  }

 private:
  // The socket of `spec`'s holder, found or started once per command.
  absl::StatusOr<std::string> HolderOf(const ClusterSpec& spec,
                                       const TransportOptions& options) const {
    HoldSet set = HoldSetOf(spec, options);
    std::string identity = set.Identity();
    absl::MutexLock lock(&mu_);
    auto found = holders_.find(identity);
    if (found == holders_.end()) {
      found = holders_.emplace(identity, FindOrStartHolder(set, spec.spec_path)).first;
    }
    return found->second;
  }

  mutable absl::Mutex mu_;
  mutable std::map<std::string, absl::StatusOr<std::string>> holders_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

const ConnectionFactory& HeldConnections() {
  static const Held* const kHeld = new Held();
  return *kHeld;
}

}  // namespace fleetplan
