#ifndef FLEETPLAN_TOOLS_CLI_COMPLETION_H_
#define FLEETPLAN_TOOLS_CLI_COMPLETION_H_

// Shell completion scripts generated from the subcommands' CommandDocs:
// subcommand names, each one's flags, flag values by kind (files,
// directories, choices, the node names of the spec on the command line, as
// `fleetplan __complete-nodes SPEC` prints them) and operands (.toml
// specs, .json plans, command names).

#include <string>
#include <vector>

#include "tools/cli/command_doc.h"

namespace fleetplan {

// A bash script defining and registering `_fleetplan` (complete -F).
std::string RenderBashCompletion(const std::vector<CommandDoc>& docs);

// A zsh script (#compdef fleetplan) for a directory on $fpath as _fleetplan.
std::string RenderZshCompletion(const std::vector<CommandDoc>& docs);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_COMPLETION_H_
