#ifndef FLEETPLAN_BENCH_SSH_NODES_H_
#define FLEETPLAN_BENCH_SSH_NODES_H_

// The nodes an ssh benchmark talks to, from the flags every such benchmark
// takes: --nodes (host or host:port, comma-separated), --user, --key,
// --known_hosts, --accept_new_host_keys.

#include <string>

#include "absl/status/statusor.h"
#include "plugins/transport.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan::bench {

// A spec with one ssh node per --nodes entry, named node0, node1, ..., each
// with `workdir`.
absl::StatusOr<ClusterSpec> SshSpecFromFlags(const std::string& workdir = "");

// The transport options the flags ask for.
TransportOptions SshOptionsFromFlags();

}  // namespace fleetplan::bench

#endif  // FLEETPLAN_BENCH_SSH_NODES_H_
