#ifndef FLEETPLAN_PLUGINS_SSH_SSH_SESSION_H_
#define FLEETPLAN_PLUGINS_SSH_SSH_SESSION_H_

// Opening an authenticated libssh session to one node: settings resolved
// from the spec's ssh group, then ~/.ssh/config, then libssh's defaults;
// host key checked before any credential is offered.

#include <memory>
#include <string>

#include <libssh/libssh.h>

#include "absl/status/statusor.h"
#include "plugins/transport.h"

namespace fleetplan {

struct SshSessionDeleter {
  void operator()(ssh_session session) const;
};
using SshSessionPtr = std::unique_ptr<ssh_session_struct, SshSessionDeleter>;

// What one connection needs; empty or zero fields fall back to the ssh
// config file, then to libssh's defaults.
struct SshSettings {
  std::string node;         // for errors
  std::string host;         // may be a Host alias of the config file
  std::string user;
  int port = 0;
  std::string key_file;     // "~" expanded; empty: ssh-agent and default identities
  std::string known_hosts;  // "~" expanded; empty: ~/.ssh/known_hosts
  std::string config_file;  // empty: ~/.ssh/config and /etc/ssh/ssh_config
  int connect_timeout_s = 10;
  bool accept_new_host_keys = false;
};

// `path` with a leading "~/" (or a lone "~") replaced by $HOME.
std::string ExpandHome(const std::string& path);

// Settings for `node` from its ssh group in `spec` and `options`.
SshSettings SettingsForNode(const ClusterSpec& spec, const NodeSpec& node,
                            const TransportOptions& options, const std::string& config_file);

// Connects, checks the host key (host_key_check.h) and authenticates.
// Unavailable naming the node when it cannot be reached in time;
// PermissionDenied naming the node and user when the key is refused;
// FailedPrecondition for an unknown host key or an unreadable key file.
absl::StatusOr<SshSessionPtr> OpenSshSession(const SshSettings& settings);

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_SSH_SESSION_H_
