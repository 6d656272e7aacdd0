// Runs `true` on N containers at once through the docker transport, one
// thread per container, as apply's parallel phases do; prints the wall
// time of each round. bench/docker_exec_bench.sh compares it with
// `docker exec` started in parallel from a shell loop.
//
//   docker_exec_bench --prefix=fpbench --count=8 --rounds=1

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "plugins/transport.h"
#include "tools/apply/parallel_for.h"

ABSL_FLAG(std::string, prefix, "fpbench", "containers are PREFIX-0 .. PREFIX-(N-1)");
ABSL_FLAG(int, count, 8, "number of containers (N)");
ABSL_FLAG(int, rounds, 1, "rounds of one `true` per container");
ABSL_FLAG(std::string, command, "true", "the command each round runs");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "runs `true` on N containers at once through the docker transport\n"
      "  docker_exec_bench --prefix=P --count=N [--rounds=K]");
  absl::ParseCommandLine(argc, argv);
  auto transport = fleetplan::TransportRegistry::Global().Find("docker");
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    return 1;
  }
  fleetplan::ClusterSpec spec;
  for (int i = 0; i < absl::GetFlag(FLAGS_count); ++i) {
    fleetplan::NodeSpec node;
    node.address = node.name = absl::StrCat(absl::GetFlag(FLAGS_prefix), "-", i);
    node.index = i;
    spec.nodes.push_back(node);
  }
  const size_t n = spec.nodes.size();
  std::vector<std::unique_ptr<fleetplan::Connection>> connections(n);
  std::vector<absl::Status> errors(n);
  // A thread per container, as apply's phases with parallelism n.
  auto in_parallel = [&](auto&& body) { fleetplan::ParallelFor(n, static_cast<int>(n), body); };
  absl::Time start = absl::Now();
  in_parallel([&](size_t i) {
    auto connection = (*transport)->Connect(spec, spec.nodes[i], {});
    if (connection.ok()) connections[i] = *std::move(connection);
    else errors[i] = connection.status();
  });
  std::printf("connect %.2f ms\n", absl::ToDoubleMilliseconds(absl::Now() - start));
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    absl::Time begin = absl::Now();
    in_parallel([&](size_t i) {
      if (!errors[i].ok()) return;
      auto status = connections[i]->Run({absl::GetFlag(FLAGS_command)}, nullptr, nullptr);
      if (!status.ok()) errors[i] = status.status();
      else if (*status != 0) errors[i] = absl::InternalError(absl::StrCat("exit ", *status));
    });
    std::printf("round %.2f ms\n", absl::ToDoubleMilliseconds(absl::Now() - begin));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!errors[i].ok()) {
      std::fprintf(stderr, "%s: %s\n", spec.nodes[i].address.c_str(),
                   errors[i].ToString().c_str());
      return 1;
    }
  }
  return 0;
}
