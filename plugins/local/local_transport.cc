#include "plugins/local/local_transport.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fleetplan {

absl::Status LocalTransport::ValidateNode(const ClusterSpec& spec,
                                          const NodeSpec& node) const {
  if (!absl::StartsWith(node.workdir, "/")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", node.name, "\": workdir \"", node.workdir,
        "\" must be an absolute path"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Connection>> LocalTransport::Connect(
    const ClusterSpec& spec, const NodeSpec& node, const TransportOptions& options) {
  return std::make_unique<LocalConnection>();
}

FLEETPLAN_REGISTER_TRANSPORT("local", LocalTransport);

}  // namespace fleetplan
