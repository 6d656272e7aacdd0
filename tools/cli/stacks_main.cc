// `fleetplan stacks`: where every rank of the spec's running job stands now.

#include <string>
#include <vector>

#include "tools/cli/stacks_command.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int StacksMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"[--json] [--connect-timeout=SECONDS] SPEC.toml"};
  doc.description =
      "Shows where every rank of the spec's running job stands, grouped by the innermost "
      "frame of the user's own code: gdb's py-bt and eu-stack attach to each rank for a "
      "moment on its node, no signal is sent, and the job runs on. A node or a tool that "
      "cannot look is named as a skip with why.";
  doc.examples = {{"fleetplan stacks cluster.toml", "ranks 0-4,6,7 on a,b,c: barrier (train.py:41)"},
                  {"fleetplan stacks cluster.toml --json", "groups, skips and lines as JSON"}};
  doc.exit_codes = {kExitOk, kExitApplyFailed, kExitBadInput};
  doc.exit_note = "1: a node could not be read";
  JobTarget target;
  target.connections = &HeldConnections();
  FlagSet flags(std::move(doc));
  flags.Switch("json", &target.json, "Print one JSON object: groups, skips, lines.");
  flags.Number("connect-timeout", "SECONDS", &target.transport.connect_timeout_s,
               "How long to wait for a node to answer.");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  target.spec = operands[0];
  return RunStacksCommand(target);
}

}  // namespace fleetplan
