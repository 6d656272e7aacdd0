// `fleetplan stop`: stops the spec's job on every node.

#include <string>
#include <vector>

#include "tools/cli/job_commands.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int StopMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"[--json] [--connect-timeout=SECONDS] [--lock-timeout=DURATION] SPEC.toml"};
  doc.description =
      "Each node's agent stops its ranks (SIGTERM, then SIGKILL after the grace period); stop "
      "returns once no process of the job is left. Exit code 0 means nothing of the job runs "
      "any more.";
  doc.examples = {{"fleetplan stop cluster.toml", "stop the job everywhere"}};
  doc.exit_codes = {kExitOk, kExitApplyFailed, kExitBadInput, kExitLocked};
  JobTarget target;
  target.connections = &HeldConnections();
  FlagSet flags(std::move(doc));
  flags.Switch("json", &target.json,
               "Print one JSON object: stopped (true or false), nodes (each with what its "
               "agent said), error.");
  flags.Number("connect-timeout", "SECONDS", &target.transport.connect_timeout_s,
               "How long to wait for a node to answer.");
  flags.Duration("lock-timeout", &target.lock_timeout,
                 "When an apply or destroy of the spec holds its lock, wait this long for it "
                 "(e.g. 30s) before giving up with exit code 73; 0: give up at once.");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  target.spec = operands[0];
  return RunStopCommand(target);
}

}  // namespace fleetplan
