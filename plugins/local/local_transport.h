#ifndef FLEETPLAN_PLUGINS_LOCAL_LOCAL_TRANSPORT_H_
#define FLEETPLAN_PLUGINS_LOCAL_LOCAL_TRANSPORT_H_

// The `local` transport: every node is this machine. Commands run under
// /bin/sh as children of apply, files are copied on the local filesystem.
// Registered as "local"; core code reaches it through TransportRegistry.

#include <memory>

#include "plugins/common/local_connection.h"
#include "plugins/transport.h"

namespace fleetplan {

class LocalTransport : public Transport {
 public:
  // Any address names this machine; the workdir must be absolute.
  absl::Status ValidateNode(const ClusterSpec& spec,
                            const NodeSpec& node) const override;
  absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const ClusterSpec& spec, const NodeSpec& node,
      const TransportOptions& options) override;
  bool SharesLocalFilesystem() const override { return true; }
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_LOCAL_LOCAL_TRANSPORT_H_
