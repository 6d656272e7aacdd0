// `logs`: the output of the spec's ranks, read from its nodes.

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "tools/cli/job_commands.h"
#include "tools/util/flags.h"

ABSL_FLAG(bool, follow, false,
          "Keep printing as the ranks write, until the job ends (Ctrl-C stops following, "
          "not the job).");
ABSL_FLAG(std::vector<std::string>, node, {}, "Only these nodes (comma-separated names).");
ABSL_FLAG(int, rank, -1, "Only this rank (global RANK).");
ABSL_FLAG(int, tail, -1, "Only the last N lines of each rank.");
ABSL_FLAG(std::string, run, "", "The run to print (default: the latest).");
ABSL_FLAG(bool, json, false,
          "Print one JSON object per line: {\"node\", \"rank\", \"line\"}.");
ABSL_FLAG(int, connect_timeout, 10, "Seconds to wait for a node to answer.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "prints the ranks' output of the spec's job, prefixed [node/rank], read from its "
      "nodes.\n"
      "usage: logs [--follow] [--node=NAME,...] [--rank=N] [--tail=N] [--run=ID] [--json] "
      "SPEC.toml\n"
      "exit codes: 0 printed (with --follow: the job's status once it ended), 1 a node "
      "could not be read, 2 bad input, 130 interrupted");
  absl::StatusOr<fleetplan::JobTarget> target =
      fleetplan::JobTargetFromCommandLine(argc, argv, __FILE__);
  if (!target.ok()) {
    fprintf(stderr, "logs: %s\n", std::string(target.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  target->transport.connect_timeout_s = absl::GetFlag(FLAGS_connect_timeout);
  target->json = absl::GetFlag(FLAGS_json);
  fleetplan::LogsCommandOptions options;
  options.follow = absl::GetFlag(FLAGS_follow);
  options.nodes = absl::GetFlag(FLAGS_node);
  options.rank = absl::GetFlag(FLAGS_rank);
  options.tail = absl::GetFlag(FLAGS_tail);
  options.run_id = absl::GetFlag(FLAGS_run);
  return fleetplan::RunLogsCommand(*target, options);
}
