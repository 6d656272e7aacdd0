// `stacks`: where every rank of the spec's running job stands now, grouped
// by its innermost frame of the user's code; the job runs on unharmed.

#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "tools/cli/stacks_command.h"
#include "tools/util/flags.h"

ABSL_FLAG(bool, json, false, "Print one JSON object: groups, skips, lines.");
ABSL_FLAG(int, connect_timeout, 10, "Seconds to wait for a node to answer.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "shows where every rank of the spec's running job stands (gdb py-bt and eu-stack on each "
      "node attach for a moment; the job runs on), grouped by the innermost frame of the "
      "user's code.\n"
      "usage: stacks [--json] [--connect-timeout=S] SPEC.toml\n"
      "exit codes: 0 every node answered, 1 a node could not be read, 2 bad input");
  absl::StatusOr<fleetplan::JobTarget> target =
      fleetplan::JobTargetFromCommandLine(argc, argv, __FILE__);
  if (!target.ok()) {
    fprintf(stderr, "stacks: %s\n", std::string(target.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  target->json = absl::GetFlag(FLAGS_json);
  target->transport.connect_timeout_s = absl::GetFlag(FLAGS_connect_timeout);
  return fleetplan::RunStacksCommand(*target);
}
