#include "tools/apply/connect_nodes.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/apply/parallel_for.h"

namespace fleetplan {

absl::StatusOr<std::unique_ptr<Connection>> ConnectNode(const ClusterSpec& spec,
                                                        const NodeSpec& node,
                                                        const TransportOptions& options) {
  absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
  if (!transport.ok()) return absl::InvalidArgumentError(transport.status().message());
  return (*transport)->Connect(spec, node, options);
}

namespace {

class RegistryConnections : public ConnectionFactory {
 public:
  absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const ClusterSpec& spec, const NodeSpec& node,
      const TransportOptions& options) const override {
    return ConnectNode(spec, node, options);
  }
  bool RelaysSync(const NodeSpec& node) const override {
    absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
    return transport.ok() && (*transport)->RelaysSync();
  }
};

}  // namespace

const ConnectionFactory& TransportConnections() {
  static const RegistryConnections* const kConnections = new RegistryConnections();
  return *kConnections;
}

absl::StatusOr<NodeConnections> ConnectNodes(const ConnectionFactory& factory,
                                             const ClusterSpec& spec,
                                             const TransportOptions& options, int parallelism,
                                             Tolerate tolerate, const AfterConnect& then) {
  std::vector<absl::StatusOr<std::unique_ptr<Connection>>> opened(spec.nodes.size());
  ParallelFor(spec.nodes.size(), parallelism, [&](size_t i) {
    opened[i] = factory.Connect(spec, spec.nodes[i], options);
    if (opened[i].ok() && then) opened[i] = then(spec.nodes[i], *std::move(opened[i]));
  });
  NodeConnections connections;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    if (opened[i].ok()) continue;
    // NotFound: the transport says the node is not there yet.
    const absl::Status& error = opened[i].status();
    const NodeSpec& node = spec.nodes[i];
    if (tolerate != Tolerate::kNothing && absl::IsNotFound(error)) {
      connections.not_there[node.name] = std::string(error.message());
    } else if (tolerate == Tolerate::kUnreachable && !absl::IsInvalidArgument(error)) {
      connections.unreachable[node.name] = std::string(error.message());
    } else {
      return absl::Status(error.code(), absl::StrCat("cannot connect to node '", node.name, "' (",
                                                     node.transport, "): ", error.message()));
    }
  }
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    if (opened[i].ok()) connections.open[spec.nodes[i].name] = *std::move(opened[i]);
  }
  return connections;
}

}  // namespace fleetplan
