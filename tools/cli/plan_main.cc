// `fleetplan plan`: shows what apply would do to the cluster a spec
// describes, phase by phase and node by node, without touching any node
// (`--refresh` reads what the nodes hold to mark what is unchanged);
// `--check` connects to the nodes and runs the preflight checks alone,
// changing nothing.

#include <string>
#include <vector>

#include "tools/cli/commands.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {
namespace {

CommandDoc PlanDoc() {
  CommandDoc doc;
  doc.usage = {"[options] SPEC.toml", "--refresh [options] SPEC.toml",
               "--check [options] SPEC.toml"};
  doc.description =
      "Prints the steps apply would run, grouped by phase (build, keys, sync, environment, "
      "preflight, launch), a line per node. Nothing is changed and, without --refresh or "
      "--check, no node is contacted.";
  doc.examples = {
      {"fleetplan plan cluster.toml", "the plan, per phase and node"},
      {"fleetplan plan --refresh cluster.toml",
       "read the nodes: + runs, ~ changes, = unchanged"},
      {"fleetplan plan cluster.toml --out plan.json",
       "save the plan; `fleetplan apply plan.json` applies exactly it"},
  };
  doc.exit_codes = {kExitOk, kExitApplyFailed, kExitBadInput};
  return doc;
}

}  // namespace

int PlanMain(const CommandLine& line) {
  PlanCommand command;
  command.connections = &HeldConnections();
  FlagSet flags(PlanDoc());
  flags.Group("Output");
  flags.Switch("json", &command.json, "Print the plan as JSON instead of text.");
  flags.Text("out", "FILE", &command.out,
             "Also save the plan as JSON to FILE; `apply FILE` applies exactly that plan, and "
             "refuses it once the spec or the sources change.",
             ValueKind::kFile);
  flags.Choice("color", &command.color, {"auto", "always", "never"}, "Colour the text.");
  flags.Group("Reading the nodes");
  flags.Switch("refresh", &command.refresh,
               "Connect to the nodes (changing nothing), read what earlier applies left there, "
               "and mark each step: + runs (nothing recorded), ~ runs (something else "
               "recorded), = skipped, ? decided during apply. With --json, print these marks "
               "as JSON instead of the plan.");
  flags.Switch("check", &command.check,
               "Connect to the nodes and run the preflight checks alone (changing nothing), "
               "print their summary, and exit 1 when one fails.");
  flags.Number("parallelism", "N", &command.options.parallelism,
               "With --check or --refresh: read at most N nodes at once.");
  flags.Number("connect-timeout", "SECONDS", &command.options.transport.connect_timeout_s,
               "With --check or --refresh: how long to wait for a node to answer.");
  flags.Duration("step-timeout", &command.options.step_timeout,
                 "With --check: stop a check on a node that runs longer than this (e.g. 90s, "
                 "20m; 0: no limit) and fail it.");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  command.spec = operands[0];
  return RunPlanCommand(command);
}

}  // namespace fleetplan
