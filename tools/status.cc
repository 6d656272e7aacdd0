// `status`: the state of the spec's job, read from its nodes.

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "tools/cli/job_commands.h"
#include "tools/util/flags.h"

ABSL_FLAG(bool, json, false,
          "Print one JSON object: state (none, running, succeeded, failed, stopped), run_id, "
          "generation, nodes.");
ABSL_FLAG(int, connect_timeout, 10, "Seconds to wait for a node to answer.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "shows the state of the spec's job, read from its nodes: one line per node (state, "
      "generation, ranks alive, exit statuses, last heartbeat) and the job's.\n"
      "usage: status [--json] [--connect-timeout=S] SPEC.toml\n"
      "exit codes: 0 read (whatever the job's state), 1 a node could not be read, "
      "2 bad input");
  absl::StatusOr<fleetplan::JobTarget> target =
      fleetplan::JobTargetFromCommandLine(argc, argv, __FILE__);
  if (!target.ok()) {
    fprintf(stderr, "status: %s\n", std::string(target.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  target->json = absl::GetFlag(FLAGS_json);
  target->transport.connect_timeout_s = absl::GetFlag(FLAGS_connect_timeout);
  return fleetplan::RunStatusCommand(*target);
}
