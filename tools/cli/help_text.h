#ifndef FLEETPLAN_TOOLS_CLI_HELP_TEXT_H_
#define FLEETPLAN_TOOLS_CLI_HELP_TEXT_H_

// A command's CommandDoc as people read it: the --help text and the man
// page (roff), from the same data, so the two cannot disagree.

#include <string>
#include <vector>

#include "tools/cli/command_doc.h"

namespace fleetplan {

// One row of `fleetplan help`: a subcommand and its summary.
struct CommandSummary {
  std::string name;
  std::string summary;
};

// `fleetplan CMD --help`: usage, description, flags under their group
// headings, examples, exit codes; wrapped to 80 columns.
std::string RenderHelpText(const CommandDoc& doc);

// `fleetplan help`: what fleetplan is, its commands, examples, exit codes.
std::string RenderOverviewText(const std::vector<CommandSummary>& commands);

// The man page fleetplan-CMD(1) of `doc`, for fleetplan `version`.
std::string RenderManPage(const CommandDoc& doc, const std::string& version);

// The man page fleetplan(1): the overview and the commands' pages named.
std::string RenderOverviewManPage(const std::vector<CommandSummary>& commands,
                                  const std::string& version);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_HELP_TEXT_H_
