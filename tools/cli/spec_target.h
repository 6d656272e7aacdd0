#ifndef FLEETPLAN_TOOLS_CLI_SPEC_TARGET_H_
#define FLEETPLAN_TOOLS_CLI_SPEC_TARGET_H_

// What the commands that act on a spec's nodes (status, logs, stop, exec)
// share: the spec as typed, loading it, picking nodes by name, connecting,
// and saying why not.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/apply/connect_nodes.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// The spec as typed and how to reach its nodes.
struct JobTarget {
  std::string spec;  // as typed
  bool json = false;
  std::string color = "auto";
  TransportOptions transport;
  // stop: how long to wait for the spec's lock (tools/apply/state_lock.h).
  absl::Duration lock_timeout = absl::ZeroDuration();
  // How the command reaches the nodes.
  const ConnectionFactory* connections = &TransportConnections();
  // status, logs, top: a node that cannot be reached is marked and the
  // others read (OpenedTarget::connections.unreachable).
  bool tolerate_unreachable = false;
};

// How long status, logs and top wait for a node before marking it
// unreachable (--connect-timeout sets it).
inline constexpr int kReadConnectTimeoutS = 5;

// The spec, parsed and checked against its transports. InvalidArgument or
// NotFound for a bad or missing spec.
absl::StatusOr<ClusterSpec> LoadTarget(const JobTarget& target);

// The spec and a connection to each of its nodes.
struct OpenedTarget {
  ClusterSpec spec;
  NodeConnections connections;
};

// Loads the spec and connects to all its nodes read-only (a node that apply
// would create and has not: no connection, nothing to read there; with
// `tolerate_unreachable`, one that cannot be reached: none either).
absl::StatusOr<std::unique_ptr<OpenedTarget>> OpenTarget(const JobTarget& target);

// The nodes of `spec` named `names`, in the order given; every node when
// `names` is empty. InvalidArgument naming an unknown one and the spec's.
absl::StatusOr<std::vector<const NodeSpec*>> SelectNodes(const ClusterSpec& spec,
                                                         const std::vector<std::string>& names);

// Prints "command: message" on stderr and returns `code`.
int Fail(absl::string_view command, absl::string_view message, int code);

// Fail() with the exit code for `status`: bad input (2) for InvalidArgument
// and NotFound, 1 otherwise.
int FailWith(absl::string_view command, const absl::Status& status);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_SPEC_TARGET_H_
