#ifndef FLEETPLAN_TOOLS_CLI_EXEC_COMMAND_H_
#define FLEETPLAN_TOOLS_CLI_EXEC_COMMAND_H_

// exec: an ad-hoc command on every node of a spec (or the named ones), in
// parallel, in the node's activated environment and workdir, through the
// spec's transports; like pdsh, `ansible all -a` or `sky exec`.

#include <string>
#include <vector>

#include "tools/cli/spec_target.h"

namespace fleetplan {

struct ExecOptions {
  std::vector<std::string> nodes;    // empty: every node
  std::vector<std::string> command;  // one argument: a shell command line
  int parallelism = 64;              // nodes connected to and run on at once
};

// Runs `options.command` on the nodes, printing each line of their output
// prefixed `[node]` as it comes, then a summary of exit statuses on stderr;
// with `target.json`, one JSON object at the end instead (command,
// exit_status, nodes: node, exit_status or error, output). Ctrl-C stops the
// commands on every node (exit 130). Exit 0 when every node's command
// exited 0, else the lowest failing status (255 for a node that could not
// be reached, as ssh says), 2 for bad input.
int RunExecCommand(const JobTarget& target, const ExecOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_EXEC_COMMAND_H_
