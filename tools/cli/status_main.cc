// `fleetplan status`: the state of the spec's job, read from its nodes.

#include <string>
#include <vector>

#include "tools/cli/job_commands.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int StatusMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"[--json] [--connect-timeout=SECONDS] SPEC.toml"};
  doc.description =
      "Prints one line per node (state, generation, ranks alive, exit statuses, last "
      "heartbeat) and the job's state, read through the spec's transports. A node that does "
      "not answer within the connect timeout is marked unreachable and the others are read. "
      "Exit code 0 means the job's state was read (from its chief) and every node reached "
      "was read, whatever the job's state.";
  doc.examples = {{"fleetplan status cluster.toml", "the job on every node"},
                  {"fleetplan status cluster.toml --json", "the same as one JSON object"}};
  doc.exit_codes = {kExitOk, kExitApplyFailed, kExitBadInput};
  JobTarget target;
  target.connections = &HeldConnections();
  FlagSet flags(std::move(doc));
  flags.Switch("json", &target.json,
               "Print one JSON object: state (none, running, succeeded, failed, stopped; "
               "unknown when the chief cannot be read), run_id, generation, nodes (each "
               "unreachable one with its error); printed whatever could be read.");
  // A node that does not answer is marked unreachable, and what the
  // others know is printed.
  target.tolerate_unreachable = true;
  target.transport.connect_timeout_s = kReadConnectTimeoutS;
  flags.Number("connect-timeout", "SECONDS", &target.transport.connect_timeout_s,
               "How long to wait for a node before marking it unreachable (default 5).");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  target.spec = operands[0];
  return RunStatusCommand(target);
}

}  // namespace fleetplan
