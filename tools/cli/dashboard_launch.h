#ifndef FLEETPLAN_TOOLS_CLI_DASHBOARD_LAUNCH_H_
#define FLEETPLAN_TOOLS_CLI_DASHBOARD_LAUNCH_H_

// `dashboard`'s HTTP server links cpp-httplib, and through it libssl,
// libcrypto, zlib and brotli, which no other command needs: linked into
// `fleetplan`, every command loaded them at start. So the server is a
// program of its own, fleetplan-dashboard, installed beside the launch
// agent (as git's helpers are in its libexec): `fleetplan dashboard`
// parses its command line (help, bad input) and then runs that program
// with the same arguments. The program is the same subcommand table with
// the server registered (dashboard_command.cc).

#include "tools/cli/flag_set.h"
#include "tools/cli/spec_target.h"

namespace fleetplan {

struct DashboardOptions {
  int port = 0;  // on 127.0.0.1; 0: any free port
};

// Serves the dashboard until interrupted; the exit code.
using DashboardServe = int (*)(const JobTarget& target, const DashboardOptions& options);

// Makes `serve` what `dashboard` runs in this binary (the server program's
// static registration); returns true, for use in a static initializer.
bool RegisterDashboardServer(DashboardServe serve);

// The registered server; nullptr in the binaries that run the program.
DashboardServe RegisteredDashboardServer();

// Runs the server program (paths.h's FindDashboard) in place of this
// process with `line`'s arguments. Returns only when it cannot: 1, with
// the reason on stderr.
int ExecDashboardProgram(const CommandLine& line);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_DASHBOARD_LAUNCH_H_
