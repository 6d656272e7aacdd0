// `fleetplan __hold --identity=ID SPEC`: the connection holder of SPEC's
// nodes (tools/hold/holder.h), started detached by the first command that
// reaches them. Unlisted in help: people use `disconnect`.

#include <cstdio>
#include <string>
#include <vector>

#include "tools/apply/connect_nodes.h"
#include "tools/cli/spec_target.h"
#include "tools/cli/subcommand_mains.h"
#include "tools/hold/hold_folder.h"
#include "tools/hold/holder.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

int HoldMain(const CommandLine& line) {
  CommandDoc doc;
  doc.usage = {"--identity=ID SPEC.toml"};
  doc.description =
      "Keeps SPEC's node connections open for the commands that follow, until it was idle "
      "for the nodes' persist or `fleetplan disconnect SPEC`. The commands start it.";
  doc.exit_codes = {kExitOk, kExitApplyFailed, kExitBadInput};
  std::string identity;
  FlagSet flags(std::move(doc));
  flags.Text("identity", "ID", &identity, "What the starting command computed of the nodes.");
  std::vector<std::string> operands;
  if (std::optional<int> done = flags.Parse(line, &operands)) return *done;
  JobTarget target;
  target.spec = operands[0];
  absl::StatusOr<ClusterSpec> loaded = LoadTarget(target);
  if (!loaded.ok()) return FailWith("hold", loaded.status());
  auto spec = std::make_shared<const ClusterSpec>(*std::move(loaded));
  HolderOptions options;
  options.set = HoldSetOf(*spec, TransportOptions());
  // The spec changed since the command read it: that command connects
  // directly, and the next one starts the holder the spec now asks for.
  if (options.set.Identity() != identity) {
    return Fail("hold", "the spec's connections changed since the command that started it",
                kExitBadInput);
  }
  absl::StatusOr<std::string> folder = HoldFolder();
  if (!folder.ok()) return FailWith("hold", folder.status());
  options.folder = *folder;
  options.open = [spec](const std::string& name, const TransportOptions& transport)
      -> absl::StatusOr<std::unique_ptr<Connection>> {
    if (const NodeSpec* node = spec->FindNode(name); node != nullptr) {
      return ConnectNode(*spec, *node, transport);
    }
    return absl::NotFoundError(absl::StrCat("no node named '", name, "'"));
  };
  absl::Status ran = RunHolder(options);
  // Another holder of the same connections listens: this one is not needed.
  if (absl::IsAlreadyExists(ran)) return kExitOk;
  return FailWith("hold", ran);
}

}  // namespace fleetplan
