// Syncs a source tree to N nodes in parallel through the `ssh` transport,
// as apply's sync phase does: manifest of the source (with the launch agent
// added, as apply ships it), a connection per node, then on every node at
// once what a sync step does (the workdir check before anything is sent,
// SyncTree with the agent checking what arrived, then the step record).
// For bench/sync_bench.sh.
//
//   sync_fanout --nodes=10.0.0.2,10.0.0.3 --user=root --key=/path/key
//       --known_hosts=/path/known_hosts --source=/path/tree --dest=/srv/tree
//       --agent=/path/fleetplan-agent
//
// With --rounds=K the sync is repeated K times over the same connections
// and each round's time is printed (`round I MS`); rounds after the first
// are the unchanged re-sync of an apply whose connections are open.

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "bench/ssh_nodes.h"
#include "plugins/transport.h"
#include "tools/plan/node_scripts.h"
#include "tools/plan/preflight_script.h"
#include "tools/sync/manifest.h"
#include "tools/sync/sync_tree.h"

ABSL_FLAG(std::string, source, "", "local tree to sync");
ABSL_FLAG(std::string, dest, "", "destination root on every node (absolute)");
ABSL_FLAG(std::string, agent, "", "the fleetplan-agent binary to ship with the tree");
ABSL_FLAG(int, rounds, 1, "syncs over the same connections");
ABSL_FLAG(bool, verbose, false, "print phase times and what each round sent");

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dest = absl::GetFlag(FLAGS_dest);
  const bool verbose = absl::GetFlag(FLAGS_verbose);
  if (absl::GetFlag(FLAGS_source).empty() || dest.empty() || dest[0] != '/' ||
      absl::GetFlag(FLAGS_agent).empty()) {
    std::fprintf(stderr, "--source, an absolute --dest and --agent are required\n");
    return 2;
  }
  absl::StatusOr<fleetplan::ClusterSpec> parsed = fleetplan::bench::SshSpecFromFlags(dest);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.status().ToString().c_str());
    return 2;
  }
  const fleetplan::ClusterSpec& spec = *parsed;
  auto transport = fleetplan::TransportRegistry::Global().Find("ssh");
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    return 1;
  }

  // Apply builds the manifest before it connects; so does this.
  Clock::time_point start = Clock::now();
  absl::StatusOr<fleetplan::Manifest> manifest =
      fleetplan::BuildManifest(absl::GetFlag(FLAGS_source), {});
  if (manifest.ok()) {
    absl::Status added = fleetplan::AddExtraFiles(
        {{absl::GetFlag(FLAGS_agent), ".fleetplan/bin/fleetplan-agent"}}, &*manifest);
    if (!added.ok()) manifest = added;
  }
  if (!manifest.ok()) {
    std::fprintf(stderr, "%s\n", manifest.status().ToString().c_str());
    return 1;
  }
  if (verbose) std::printf("manifest %.2f\n", MsSince(start));

  const size_t n = spec.nodes.size();
  const fleetplan::TransportOptions options = fleetplan::bench::SshOptionsFromFlags();
  std::vector<std::unique_ptr<fleetplan::Connection>> connections(n);
  std::vector<std::string> errors(n);
  start = Clock::now();
  fleetplan::bench::ForEachNode(n, [&](size_t i) {
    auto connection = (*transport)->Connect(spec, spec.nodes[i], options);
    if (connection.ok()) connections[i] = *std::move(connection);
    else errors[i] = connection.status().ToString();
  });
  if (verbose) std::printf("connect %.2f\n", MsSince(start));

  std::vector<fleetplan::SyncResult> results(n);
  std::vector<double> node_ms(n);
  const std::string record = absl::StrCat(manifest->SourceDigest(), "\n");
  for (int round = 1; round <= absl::GetFlag(FLAGS_rounds); ++round) {
    start = Clock::now();
    fleetplan::bench::ForEachNode(n, [&](size_t i) {
      if (!errors[i].empty()) return;
      // The manifest path apply uses (SyncManifestPath in the executor).
      std::string manifest_path =
          absl::StrCat(dest, "/.fleetplan/nodes/", spec.nodes[i].name, "/manifest");
      const fleetplan::NodeSpec& node = spec.nodes[i];
      fleetplan::SyncOptions sync;
      sync.before_send = [&](uint64_t bytes) -> absl::Status {
        absl::StatusOr<int> exit = connections[i]->Run(
            {fleetplan::WorkdirCheckScript(node, bytes)}, [](absl::string_view) {}, nullptr);
        if (!exit.ok()) return exit.status();
        return *exit == 0 ? absl::OkStatus() : absl::InternalError("workdir check failed");
      };
      sync.verifier = fleetplan::AgentPath(node);
      absl::StatusOr<fleetplan::SyncResult> result =
          fleetplan::SyncTree(*connections[i], *manifest, dest, manifest_path, sync);
      if (!result.ok()) {
        errors[i] = result.status().ToString();
        return;
      }
      results[i] = *result;
      // The step record apply writes after every sync step.
      absl::Status recorded = connections[i]->WriteFile(
          absl::StrCat(dest, "/.fleetplan/nodes/", spec.nodes[i].name, "/steps/sync"),
          record, 0644);
      if (!recorded.ok()) errors[i] = recorded.ToString();
      node_ms[i] = MsSince(start);
    });
    std::printf("round %d %.2f\n", round, MsSince(start));
    if (verbose) {
      for (size_t i = 0; i < n; ++i) {
        std::printf("  %s: %.2f ms, %d sent (%llu bytes), %d removed\n",
                    spec.nodes[i].name.c_str(), node_ms[i], results[i].files_sent,
                    static_cast<unsigned long long>(results[i].bytes_sent),
                    results[i].files_removed);
      }
    }
  }
  int failed = 0;
  for (const std::string& error : errors) {
    if (!error.empty()) std::fprintf(stderr, "%s\n", error.c_str()), ++failed;
  }
  return failed == 0 ? 0 : 1;
}
