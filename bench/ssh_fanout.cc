// Runs one command on N nodes in parallel through the `ssh` transport, as
// apply's fan-out does: connect, run, report. For bench/ssh_bench.sh.
//
//   ssh_fanout --nodes=127.0.0.1:2201,127.0.0.1:2202 --user=root
//       --key=/path/key --known_hosts=/path/known_hosts -- true

#include <cstdio>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_join.h"
#include "bench/ssh_nodes.h"
#include "tools/apply/parallel_for.h"
#include "plugins/transport.h"

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "runs one command on every node through the ssh transport\n"
      "  ssh_fanout --nodes=HOST[:PORT],... --user=U --key=K --known_hosts=F -- COMMAND");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  std::string command = absl::StrJoin(args.begin() + 1, args.end(), " ");
  absl::StatusOr<fleetplan::ClusterSpec> spec = fleetplan::bench::SshSpecFromFlags();
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", spec.status().ToString().c_str());
    return 2;
  }
  auto transport = fleetplan::TransportRegistry::Global().Find("ssh");
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    return 1;
  }
  const fleetplan::TransportOptions options = fleetplan::bench::SshOptionsFromFlags();
  std::vector<std::string> errors(spec->nodes.size());
  // A thread per node, as apply's fan-out with parallelism at least the
  // node count.
  const size_t n = spec->nodes.size();
  fleetplan::ParallelFor(n, static_cast<int>(n), [&](size_t i) {
    const fleetplan::NodeSpec& node = spec->nodes[i];
    auto connection = (*transport)->Connect(*spec, node, options);
    if (!connection.ok()) {
      errors[i] = connection.status().ToString();
      return;
    }
    auto exit = (*connection)->Run({command}, [](absl::string_view) {}, nullptr);
    if (!exit.ok()) errors[i] = exit.status().ToString();
    else if (*exit != 0) errors[i] = node.address + ": exit " + std::to_string(*exit);
  });
  int failed = 0;
  for (const std::string& error : errors) {
    if (!error.empty()) std::fprintf(stderr, "%s\n", error.c_str()), ++failed;
  }
  return failed == 0 ? 0 : 1;
}
