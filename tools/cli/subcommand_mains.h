#ifndef FLEETPLAN_TOOLS_CLI_SUBCOMMAND_MAINS_H_
#define FLEETPLAN_TOOLS_CLI_SUBCOMMAND_MAINS_H_

// The subcommands' mains, one per file (tools/cli/NAME_main.cc): each
// declares its flags and help on a FlagSet, parses its command line into
// the options of its command (commands.h, job_commands.h, exec_command.h)
// and runs it, returning the exit code. The table in subcommands.cc names
// them.

#include "tools/cli/flag_set.h"

namespace fleetplan {

int PlanMain(const CommandLine& line);
int ApplyMain(const CommandLine& line);
int StatusMain(const CommandLine& line);
int LogsMain(const CommandLine& line);
int StopMain(const CommandLine& line);
int ExecMain(const CommandLine& line);
int StacksMain(const CommandLine& line);
int TopMain(const CommandLine& line);
int DashboardMain(const CommandLine& line);
int DisconnectMain(const CommandLine& line);
// The connection holder (tools/hold), started by the commands.
int HoldMain(const CommandLine& line);
// The node names of a spec, one a line, for shell completion.
int CompleteNodesMain(const CommandLine& line);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_SUBCOMMAND_MAINS_H_
