// `fleetplan __complete-nodes SPEC`: the spec's node names, one a line,
// for the shell completions of --node. Unlisted in help.

#include <cstdio>
#include <string>
#include <vector>

#include "tools/cli/paths.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int CompleteNodesMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"SPEC.toml"};
  doc.description = "Prints the spec's node names, one a line (for shell completion).";
  doc.exit_codes = {kExitOk, kExitBadInput};
  FlagSet flags(std::move(doc));
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  absl::StatusOr<ClusterSpec> spec = LoadSpecFile(ResolveUserPath(operands[0]));
  if (!spec.ok()) return kExitBadInput;  // nothing to offer; the shell shows nothing
  for (const NodeSpec& node : spec->nodes) std::printf("%s\n", node.name.c_str());
  return kExitOk;
}

}  // namespace fleetplan
