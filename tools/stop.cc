// `stop`: stops the spec's job on every node.

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "tools/cli/job_commands.h"
#include "tools/util/flags.h"

ABSL_FLAG(bool, json, false,
          "Print one JSON object: stopped (true or false), nodes (each with what its agent said), error.");
ABSL_FLAG(int, connect_timeout, 10, "Seconds to wait for a node to answer.");
ABSL_FLAG(absl::Duration, lock_timeout, absl::ZeroDuration(),
          "When an apply or destroy of the spec holds its lock, wait this long for it "
          "(e.g. 30s) before giving up with exit code 73; 0: give up at once.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "stops the spec's job on every node: each node's agent stops its ranks (SIGTERM, then "
      "SIGKILL after the grace period), and stop returns once no process of the job is "
      "left.\n"
      "usage: stop [--json] [--connect-timeout=S] SPEC.toml\n"
      "exit codes: 0 nothing of the job runs any more, 1 a node could not be stopped or "
      "reached, 2 bad input, 73 the spec is locked by an apply or destroy (named)");
  absl::StatusOr<fleetplan::JobTarget> target =
      fleetplan::JobTargetFromCommandLine(argc, argv, __FILE__);
  if (!target.ok()) {
    fprintf(stderr, "stop: %s\n", std::string(target.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  target->transport.connect_timeout_s = absl::GetFlag(FLAGS_connect_timeout);
  target->json = absl::GetFlag(FLAGS_json);
  target->lock_timeout = absl::GetFlag(FLAGS_lock_timeout);
  return fleetplan::RunStopCommand(*target);
}
