// `plan`: shows what apply would do to the cluster a spec describes, phase
// by phase and node by node, without touching any node (`--refresh` reads
// what the nodes hold to mark what is unchanged); `plan --check`
// connects to the nodes and runs the preflight checks alone, changing
// nothing.

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/cli/commands.h"
#include "tools/util/flags.h"

ABSL_FLAG(bool, json, false, "Print the plan as JSON instead of text.");
ABSL_FLAG(std::string, out, "",
          "Also save the plan as JSON to this file; `apply FILE` applies exactly "
          "that plan, and refuses it once the spec or the sources change.");
ABSL_FLAG(std::string, color, "auto", "Colour the text: auto, always or never.");
ABSL_FLAG(bool, check, false,
          "Connect to the nodes and run the preflight checks alone (changing "
          "nothing), print their summary, and exit 1 when one fails.");
ABSL_FLAG(bool, refresh, false,
          "Connect to the nodes (changing nothing), read what earlier applies left "
          "there, and mark each step: + runs (nothing recorded), ~ runs (something "
          "else recorded), = skipped, ? decided during apply. With --json, print "
          "these marks as JSON instead of the plan.");
ABSL_FLAG(int, parallelism, 10, "With --check or --refresh: read at most this many nodes at once.");
ABSL_FLAG(absl::Duration, step_timeout, absl::Minutes(10),
          "With --check: Stop a command of a step on a node that runs longer than this (e.g. "
          "90s, 20m; 0: no limit) and fail the step; the job itself is not bound.");
ABSL_FLAG(int, connect_timeout, 10, "With --check or --refresh: seconds to wait for a node to answer.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "shows what apply will do, per phase and node, without touching any node;\n"
      "with --check, runs the preflight checks on the nodes, changing nothing.\n"
      "usage: plan [--json] [--out plan.json] [--color=auto|always|never] [--refresh] SPEC.toml\n"
      "       plan --check [--json] [--parallelism=N] [--connect-timeout=S] [--step-timeout=D] SPEC.toml\n"
      "exit codes: 0 done (every check passed), 1 a check failed, 2 bad input");
  absl::StatusOr<std::vector<std::string>> positional =
      fleetplan::ParseMainFlags(argc, argv, __FILE__);
  if (!positional.ok()) {
    fprintf(stderr, "plan: %s\n", std::string(positional.status().message()).c_str());
    return fleetplan::kExitBadInput;
  }
  if (positional->size() != 2) {
    fprintf(stderr, "plan: expected one spec file (see --help)\n");
    return fleetplan::kExitBadInput;
  }
  fleetplan::PlanCommand command;
  command.spec = (*positional)[1];
  command.json = absl::GetFlag(FLAGS_json);
  command.out = absl::GetFlag(FLAGS_out);
  command.color = absl::GetFlag(FLAGS_color);
  command.check = absl::GetFlag(FLAGS_check);
  command.refresh = absl::GetFlag(FLAGS_refresh);
  command.options.parallelism = absl::GetFlag(FLAGS_parallelism);
  command.options.transport.connect_timeout_s = absl::GetFlag(FLAGS_connect_timeout);
  command.options.step_timeout = absl::GetFlag(FLAGS_step_timeout);
  return fleetplan::RunPlanCommand(command);
}
