// Runs apply's sync phase, and nothing else, to N nodes through the `ssh`
// transport: the spec is compiled as apply compiles it (a [sync] of
// --source, the workdir --dest on every node) and the plan's sync phase is
// run by apply's own executor (the workdir check before anything is sent,
// the tree with the launch agent, the agent checking what arrived, the step
// record). For bench/sync_bench.sh.
//
//   sync_fanout --nodes=10.0.0.2,10.0.0.3 --user=root --key=/path/key
//       --known_hosts=/path/known_hosts --source=/path/tree --dest=/srv/tree
//       --agent=/path/fleetplan-agent
//
// With --rounds=K the phase is run K times over the same connections and
// each round's time is printed (`round I MS`); rounds after the first are
// the unchanged re-sync of an apply whose connections are open.

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "bench/ssh_nodes.h"
#include "tools/apply/executor.h"
#include "tools/apply/progress.h"
#include "tools/cli/prepare.h"
#include "tools/plan/plan.h"

ABSL_FLAG(std::string, source, "", "local tree to sync");
ABSL_FLAG(std::string, dest, "", "destination root on every node (absolute)");
ABSL_FLAG(std::string, agent, "", "the fleetplan-agent binary to ship with the tree");
ABSL_FLAG(int, rounds, 1, "syncs over the same connections");
ABSL_FLAG(bool, verbose, false, "print the connect time and each node's sync step");

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int Fail(const absl::Status& status, int exit_code) {
  std::fprintf(stderr, "%s\n", status.ToString().c_str());
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "runs apply's sync phase alone to every node through the ssh transport\n"
      "  sync_fanout --nodes=HOST[:PORT],... --user=U --key=K --known_hosts=F\n"
      "      --source=DIR --dest=/ABS/DIR --agent=PATH [--rounds=K] [--verbose]");
  absl::ParseCommandLine(argc, argv);
  const std::string dest = absl::GetFlag(FLAGS_dest);
  const bool verbose = absl::GetFlag(FLAGS_verbose);
  if (absl::GetFlag(FLAGS_source).empty() || dest.empty() || dest[0] != '/' ||
      absl::GetFlag(FLAGS_agent).empty()) {
    std::fprintf(stderr, "--source, an absolute --dest and --agent are required\n");
    return 2;
  }
  absl::StatusOr<fleetplan::ClusterSpec> spec = fleetplan::bench::SshSpecFromFlags(dest);
  if (!spec.ok()) return Fail(spec.status(), 2);
  spec->nodes[0].chief = true;
  spec->sync.enabled = true;
  spec->sync.source = absl::GetFlag(FLAGS_source);
  spec->job.program = "/bin/true";  // compiled, never run: only sync runs

  // As apply does: the source's manifest, then the plan.
  absl::StatusOr<fleetplan::Prepared> prepared = fleetplan::PrepareFromSpec(*std::move(spec));
  if (!prepared.ok()) return Fail(prepared.status(), 2);
  fleetplan::Plan plan;
  plan.phases.push_back(*fleetplan::FindPhase(prepared->plan, fleetplan::PhaseKind::kSync));

  fleetplan::ApplyOptions options;
  options.parallelism = static_cast<int>(prepared->spec.nodes.size());
  options.transport = fleetplan::bench::SshOptionsFromFlags();
  options.agent_path = absl::GetFlag(FLAGS_agent);
  std::vector<std::string> names;
  for (const fleetplan::NodeSpec& node : prepared->spec.nodes) names.push_back(node.name);
  std::FILE* report_to = verbose ? stdout : std::fopen("/dev/null", "w");
  std::unique_ptr<fleetplan::ProgressReporter> reporter = fleetplan::MakeReporter(
      fleetplan::ReportStyle::kPlain, report_to, /*color=*/false, names);
  fleetplan::Executor executor(prepared->spec, plan, prepared->source, options, *reporter,
                               fleetplan::TransportConnections());

  Clock::time_point start = Clock::now();
  if (absl::Status connected = executor.Connect(); !connected.ok()) return Fail(connected, 1);
  if (verbose) std::printf("connect %.2f\n", MsSince(start));
  for (int round = 1; round <= absl::GetFlag(FLAGS_rounds); ++round) {
    start = Clock::now();
    fleetplan::ApplyResult result = executor.Run();
    if (result.exit_code != 0) {
      std::fprintf(stderr, "%s\n", result.message.c_str());
      return 1;
    }
    std::printf("round %d %.2f\n", round, MsSince(start));
  }
  return 0;
}
