#ifndef FLEETPLAN_TOOLS_APPLY_CONNECT_NODES_H_
#define FLEETPLAN_TOOLS_APPLY_CONNECT_NODES_H_

// One connection per node of a spec, opened in parallel through each
// node's transport: what apply, status, logs and stop start with.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "plugins/transport.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

struct NodeConnections {
  std::map<std::string, std::unique_ptr<Connection>> open;  // node name → connection
  // Nodes whose transport said they are not there yet (NotFound: a
  // read-only connect to a container apply would create) → what it said.
  std::map<std::string, std::string> not_there;
  // Nodes that could not be reached (Tolerate::kUnreachable) → why.
  std::map<std::string, std::string> unreachable;
};

// Which nodes a command goes on without: none (apply), those not there
// yet, or also those it cannot reach now (status, logs and top say what the
// others know, the node marked).
enum class Tolerate { kNothing, kNotThere, kUnreachable };

// Opens a connection to `node` through its transport (Transport::Connect;
// InvalidArgument when the node names no registered transport).
absl::StatusOr<std::unique_ptr<Connection>> ConnectNode(const ClusterSpec& spec,
                                                        const NodeSpec& node,
                                                        const TransportOptions& options);

// How a command reaches nodes: handed to what connects (the executor,
// ConnectNodes) by the command's main, so that nothing below it reaches
// for the transport registry, and a unit test hands in a fake.
class ConnectionFactory {
 public:
  virtual ~ConnectionFactory() = default;
  virtual absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const ClusterSpec& spec, const NodeSpec& node, const TransportOptions& options) const = 0;
  // Whether the node's transport wants a relayed sync (Transport::RelaysSync).
  virtual bool RelaysSync(const NodeSpec& node) const = 0;
};

// Each node's own transport, found in the registry by name (ConnectNode).
const ConnectionFactory& TransportConnections();

// Connects to every node of `spec`, at most `parallelism` at once. The
// first node that cannot be reached is named ("cannot connect to node 'b'
// (ssh): ..."), except what `tolerate` lets go: a node not there yet, or
// also one that cannot be reached (any error but a bad spec's
// InvalidArgument). All or none: on an error no connection is kept.
// `then`, when given, runs on each node's connection as soon as it is open,
// in the same thread (apply opens the agent's session there), and returns
// the connection to keep.
using AfterConnect = std::function<std::unique_ptr<Connection>(const NodeSpec& node,
                                                               std::unique_ptr<Connection>)>;
absl::StatusOr<NodeConnections> ConnectNodes(const ConnectionFactory& factory,
                                             const ClusterSpec& spec,
                                             const TransportOptions& options, int parallelism,
                                             Tolerate tolerate, const AfterConnect& then = nullptr);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_CONNECT_NODES_H_
