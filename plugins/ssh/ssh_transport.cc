#include "plugins/ssh/ssh_transport.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "plugins/ssh/ssh_groups.h"
#include "plugins/ssh/ssh_session.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

absl::Status SshTransport::ValidateNode(const ClusterSpec& spec, const NodeSpec& node) const {
  if (!absl::StartsWith(node.workdir, "/")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node \"", node.name, "\": workdir \"", node.workdir, "\" must be an absolute path"));
  }
  std::string group = node.GroupIn("ssh");
  if (!group.empty() && FindSshGroup(spec, node) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("node \"", node.name, "\": no [ssh.", group, "] group"));
  }
  if (node.address.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("node \"", node.name, "\": no address"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Connection>> SshTransport::Connect(
    const ClusterSpec& spec, const NodeSpec& node, const TransportOptions& options) {
  SshSettings settings = SettingsForNode(spec, node, options, options_.config_file);
  FP_ASSIGN_OR_RETURN(SshSessionPtr session, OpenSshSession(settings));
  return std::make_unique<SshConnection>(std::move(session), settings.node, options_.run);
}

FLEETPLAN_REGISTER_TRANSPORT("ssh", SshTransport);

}  // namespace fleetplan
