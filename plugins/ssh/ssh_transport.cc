#include "plugins/ssh/ssh_transport.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "plugins/ssh/ssh_groups.h"
#include "plugins/ssh/ssh_session.h"
#include "tools/util/digest.h"
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

namespace {

// A file's content digest, "absent" when it cannot be read: a key or
// known_hosts file that changes gives another identity.
std::string FileDigest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "absent";
  std::ostringstream content;
  content << in.rdbuf();
  return DigestHex(content.str());
}

}  // namespace

std::optional<HoldKey> SshTransport::Holding(const ClusterSpec& spec, const NodeSpec& node,
                                             const TransportOptions& options) const {
  const SshGroup* group = FindSshGroup(spec, node);
  absl::Duration persist = group != nullptr ? group->persist : SshGroup::kDefaultPersist;
  if (persist <= absl::ZeroDuration()) return std::nullopt;
  SshSettings settings = SettingsForNode(spec, node, options, options_.config_file);
  const char* agent = std::getenv("SSH_AUTH_SOCK");
  Digester identity;
  identity.Add("ssh").Add(settings.host).Add(absl::StrCat(settings.port)).Add(settings.user);
  identity.Add(settings.key_file).Add(settings.key_file.empty() ? "" : FileDigest(settings.key_file));
  std::string known_hosts =
      settings.known_hosts.empty() ? ExpandHome("~/.ssh/known_hosts") : settings.known_hosts;
  identity.Add(known_hosts).Add(FileDigest(known_hosts));
  std::string config = settings.config_file.empty() ? ExpandHome("~/.ssh/config")
                                                    : settings.config_file;
  identity.Add(config).Add(FileDigest(config)).Add(FileDigest("/etc/ssh/ssh_config"));
  identity.Add(agent != nullptr ? agent : "");
  return HoldKey{identity.Hex(), persist};
}

absl::StatusOr<std::unique_ptr<Connection>> SshTransport::Connect(
    const ClusterSpec& spec, const NodeSpec& node, const TransportOptions& options) {
  SshSettings settings = SettingsForNode(spec, node, options, options_.config_file);
  FP_ASSIGN_OR_RETURN(SshSessionPtr session, OpenSshSession(settings));
  return std::make_unique<SshConnection>(std::move(session), settings.node, options_.run);
}

FLEETPLAN_REGISTER_TRANSPORT("ssh", SshTransport);

}  // namespace fleetplan
