// `plan`: shows what apply would do to the cluster a spec describes, phase
// by phase and node by node, without touching any node.

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

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "shows what apply will do, per phase and node, without touching any node.\n"
      "usage: plan [--json] [--out plan.json] [--color=auto|always|never] SPEC.toml");
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
  return fleetplan::RunPlanCommand(command);
}
