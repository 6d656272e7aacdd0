#ifndef FLEETPLAN_TOOLS_CLI_DASHBOARD_COMMAND_H_
#define FLEETPLAN_TOOLS_CLI_DASHBOARD_COMMAND_H_

// `dashboard`: the job in a browser, served from this machine while the
// command runs. The page (dashboard_server.h) shows `top`'s nodes and ranks
// (ReadTopView), each rank's loss and throughput from the trainer's metric
// lines (every generation of the run, restarts marked), the ranks' output
// as `logs --follow` reads it, filtered by node and rank, and stops the job
// as `stop` does (StopJob). Nothing runs on the nodes but what those
// commands run there. Linked into the fleetplan-dashboard program only
// (dashboard_launch.h), which it registers itself in.

#include "tools/cli/dashboard_launch.h"
#include "tools/cli/spec_target.h"

namespace fleetplan {

// Prints the page's URL (with its token) and serves it until interrupted
// (Ctrl-C, SIGTERM: 130; the job runs on). 1 when the port cannot be
// bound or the nodes cannot be reached, 2 for bad input.
int RunDashboardCommand(const JobTarget& target, const DashboardOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_DASHBOARD_COMMAND_H_
