// `fleetplan dashboard`: the spec's job in a browser, on this machine. The
// fleetplan binary runs the server program (dashboard_launch.h); that
// program serves.

#include <string>
#include <vector>

#include "tools/cli/dashboard_launch.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/held_connections.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int DashboardMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"[--port=N] [--connect-timeout=SECONDS] [--lock-timeout=DURATION] SPEC.toml"};
  doc.description =
      "Serves a page on 127.0.0.1 while it runs and prints its address: the nodes and ranks as "
      "top shows them, each rank's loss and throughput from the trainer's metric lines (every "
      "generation of the run, restarts marked), the ranks' output filtered by node and rank, "
      "and a button that stops the job as stop does, after a confirmation. Only this machine "
      "can reach it, and only with the address printed: it holds a token made for this run. "
      "Ctrl-C ends the dashboard; the job runs on.";
  doc.examples = {
      {"fleetplan dashboard cluster.toml", "serve on any free port; open the address printed"},
      {"fleetplan dashboard cluster.toml --port=8421", "on a port of your choice"},
  };
  doc.exit_codes = {kExitApplyFailed, kExitBadInput, kExitInterrupted};
  doc.exit_note = "130: ended by Ctrl-C or SIGTERM, its usual end";
  JobTarget target;
  target.connections = &HeldConnections();
  DashboardOptions options;
  FlagSet flags(std::move(doc));
  flags.Number("port", "N", &options.port,
               "The port on 127.0.0.1 to serve on (0: any free one, printed).");
  flags.Number("connect-timeout", "SECONDS", &target.transport.connect_timeout_s,
               "How long to wait for a node to answer.");
  flags.Duration("lock-timeout", &target.lock_timeout,
                 "The stop button: when an apply of the spec holds its lock, wait this long for "
                 "it (e.g. 30s); 0: give up at once.");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  if (options.port < 0 || options.port > 65535) {
    std::fprintf(stderr, "fleetplan dashboard: --port must be 0 to 65535, not %d\n",
                 options.port);
    return kExitBadInput;
  }
  target.spec = operands[0];
  if (DashboardServe serve = RegisteredDashboardServer()) return serve(target, options);
  return ExecDashboardProgram(line);
}

}  // namespace fleetplan
