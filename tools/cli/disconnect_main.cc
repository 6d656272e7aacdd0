// `fleetplan disconnect SPEC`: ends the connection holder of SPEC's nodes.

#include <cstdio>
#include <string>
#include <vector>

#include "tools/cli/spec_target.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/hold_folder.h"
#include "tools/hold/holder_start.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int DisconnectMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"SPEC.toml"};
  doc.description =
      "Closes the connections that earlier commands left open to SPEC's nodes (see `persist` "
      "in [ssh.<group>]) and ends the process that held them. Nothing held: nothing to do.";
  doc.examples = {{"fleetplan disconnect cluster.toml", "close the spec's held connections"}};
  doc.exit_codes = {kExitOk, kExitApplyFailed, kExitBadInput};
  FlagSet flags(std::move(doc));
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  JobTarget target;
  target.spec = operands[0];
  absl::StatusOr<ClusterSpec> spec = LoadTarget(target);
  if (!spec.ok()) return FailWith("disconnect", spec.status());
  HoldSet set = HoldSetOf(*spec, target.transport);
  if (set.nodes.empty()) {
    std::printf("no connections of %s are kept (persist = \"0\", or no ssh nodes)\n",
                operands[0].c_str());
    return kExitOk;
  }
  absl::Status ended = EndHolder(set);
  if (absl::IsNotFound(ended)) {
    std::printf("no connections of %s were held\n", operands[0].c_str());
    return kExitOk;
  }
  if (!ended.ok()) return FailWith("disconnect", ended);
  std::printf("closed the connections held for %zu node%s of %s\n", set.nodes.size(),
              set.nodes.size() == 1 ? "" : "s", operands[0].c_str());
  return kExitOk;
}

}  // namespace fleetplan
