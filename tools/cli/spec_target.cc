#include "tools/cli/spec_target.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/apply/executor.h"
#include "tools/cli/paths.h"
#include "tools/cli/prepare.h"
#include "tools/spec/spec_parser.h"
#include "tools/util/flags.h"

namespace fleetplan {

absl::StatusOr<ClusterSpec> LoadTarget(const JobTarget& target) {
  absl::StatusOr<ClusterSpec> spec = LoadSpecFile(ResolveUserPath(target.spec));
  if (!spec.ok()) return spec.status();
  if (absl::Status valid = ValidateNodes(*spec); !valid.ok()) return valid;
  // The hosts an earlier apply obtained (a Slurm allocation); none: as written.
  TransportOptions find = target.transport;
  find.read_only = true;
  if (absl::Status resolved = ResolveSpecNodes(*spec, find); !resolved.ok()) return resolved;
  return spec;
}

absl::StatusOr<std::unique_ptr<OpenedTarget>> OpenTarget(const JobTarget& target) {
  absl::StatusOr<ClusterSpec> spec = LoadTarget(target);
  if (!spec.ok()) return spec.status();
  auto opened = std::make_unique<OpenedTarget>();
  opened->spec = *std::move(spec);
  TransportOptions transport = target.transport;
  transport.read_only = true;  // these commands create or start nothing
  absl::StatusOr<NodeConnections> connections = ConnectNodes(
      *target.connections, opened->spec, transport, static_cast<int>(opened->spec.nodes.size()),
      target.tolerate_unreachable ? Tolerate::kUnreachable : Tolerate::kNotThere);
  if (!connections.ok()) return connections.status();
  opened->connections = *std::move(connections);
  return opened;
}

absl::StatusOr<std::vector<const NodeSpec*>> SelectNodes(const ClusterSpec& spec,
                                                         const std::vector<std::string>& names) {
  std::vector<const NodeSpec*> nodes;
  for (const std::string& name : names) {
    const NodeSpec* found = spec.FindNode(name);
    if (found == nullptr) {
      std::vector<std::string> all;
      for (const NodeSpec& node : spec.nodes) all.push_back(node.name);
      return absl::InvalidArgumentError(absl::StrCat("no node named '", name, "' (the spec has ",
                                                     absl::StrJoin(all, ", "), ")"));
    }
    nodes.push_back(found);
  }
  if (names.empty()) {
    for (const NodeSpec& node : spec.nodes) nodes.push_back(&node);
  }
  return nodes;
}

int Fail(absl::string_view command, absl::string_view message, int code) {
  std::fprintf(stderr, "%.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
  return code;
}

int FailWith(absl::string_view command, const absl::Status& status) {
  return Fail(command, status.message(),
              absl::IsInvalidArgument(status) || absl::IsNotFound(status) ? kExitBadInput
                                                                          : kExitApplyFailed);
}

}  // namespace fleetplan
