#include "tools/apply/connect_nodes.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/apply/parallel_for.h"

namespace fleetplan {

absl::StatusOr<NodeConnections> ConnectNodes(const ClusterSpec& spec,
                                             const TransportOptions& options, int parallelism,
                                             bool tolerate_not_there) {
  std::vector<absl::Status> errors(spec.nodes.size());
  std::vector<std::unique_ptr<Connection>> opened(spec.nodes.size());
  std::vector<char> not_yet(spec.nodes.size(), false);  // the transport said so
  ParallelFor(spec.nodes.size(), parallelism, [&](size_t i) {
    const NodeSpec& node = spec.nodes[i];
    absl::StatusOr<Transport*> transport = TransportRegistry::Global().Find(node.transport);
    if (!transport.ok()) {
      errors[i] = transport.status();
      return;
    }
    absl::StatusOr<std::unique_ptr<Connection>> connection =
        (*transport)->Connect(spec, node, options);
    if (!connection.ok()) {
      errors[i] = connection.status();
      not_yet[i] = absl::IsNotFound(connection.status());
    } else {
      opened[i] = *std::move(connection);
    }
  });
  NodeConnections connections;
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    if (tolerate_not_there && not_yet[i]) {
      connections.not_there[spec.nodes[i].name] = std::string(errors[i].message());
    } else if (!errors[i].ok()) {
      return absl::Status(errors[i].code(),
                          absl::StrCat("cannot connect to node '", spec.nodes[i].name, "' (",
                                       spec.nodes[i].transport, "): ", errors[i].message()));
    }
  }
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    if (opened[i] != nullptr) connections.open[spec.nodes[i].name] = std::move(opened[i]);
  }
  return connections;
}

}  // namespace fleetplan
