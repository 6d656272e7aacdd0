#ifndef FLEETPLAN_BENCH_SSH_NODES_H_
#define FLEETPLAN_BENCH_SSH_NODES_H_

// The nodes an ssh benchmark talks to, from the flags every such benchmark
// takes: --nodes (host or host:port, comma-separated), --user, --key,
// --known_hosts, --accept_new_host_keys.

#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "plugins/transport.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan::bench {

// A spec with one ssh node per --nodes entry, named node0, node1, ..., each
// with `workdir`.
absl::StatusOr<ClusterSpec> SshSpecFromFlags(const std::string& workdir = "");

// The transport options the flags ask for.
TransportOptions SshOptionsFromFlags();

// Runs fn(i) for i in [0, count) on a thread each, as apply's fan-out does
// with parallelism at least the node count.
template <typename Fn>
void ForEachNode(size_t count, Fn fn) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < count; ++i) threads.emplace_back(fn, i);
  for (std::thread& thread : threads) thread.join();
}

}  // namespace fleetplan::bench

#endif  // FLEETPLAN_BENCH_SSH_NODES_H_
