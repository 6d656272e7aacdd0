#include "plugins/ssh/ssh_session.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "plugins/ssh/host_key_check.h"
#include "plugins/ssh/libssh_api.h"
#include "plugins/ssh/ssh_groups.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

absl::Status SetOption(ssh_session session, const SshSettings& settings,
                       ssh_options_e option, const void* value, const char* name) {
  if (Libssh().options_set(session, option, value) != SSH_OK) {
    return absl::InvalidArgumentError(absl::StrCat("node \"", settings.node, "\": bad ssh ",
                                                   name, ": ", Libssh().get_error(session)));
  }
  return absl::OkStatus();
}

// Order matters: the config file is read for the host set before it, and
// the group's values set after it take precedence over it.
absl::Status Configure(ssh_session session, const SshSettings& settings) {
  FP_RETURN_IF_ERROR(
      SetOption(session, settings, SSH_OPTIONS_HOST, settings.host.c_str(), "host"));
  const char* config = settings.config_file.empty() ? nullptr : settings.config_file.c_str();
  if (Libssh().options_parse_config(session, config) != SSH_OK) {
    return absl::InvalidArgumentError(absl::StrCat("node \"", settings.node,
                                                   "\": cannot read ssh config: ",
                                                   Libssh().get_error(session)));
  }
  if (!settings.user.empty()) {
    FP_RETURN_IF_ERROR(
        SetOption(session, settings, SSH_OPTIONS_USER, settings.user.c_str(), "user"));
  }
  if (settings.port != 0) {
    unsigned int port = settings.port;
    FP_RETURN_IF_ERROR(SetOption(session, settings, SSH_OPTIONS_PORT, &port, "port"));
  }
  if (!settings.known_hosts.empty()) {
    FP_RETURN_IF_ERROR(SetOption(session, settings, SSH_OPTIONS_KNOWNHOSTS,
                                 settings.known_hosts.c_str(), "known_hosts"));
  }
  long timeout = settings.connect_timeout_s;
  FP_RETURN_IF_ERROR(SetOption(session, settings, SSH_OPTIONS_TIMEOUT, &timeout, "timeout"));
  // Requests and answers are small packets, one after the other (the agent
  // session, SFTP): Nagle's algorithm would hold each behind the ACK of the
  // last, which the node delays.
  int nodelay = 1;
  return SetOption(session, settings, SSH_OPTIONS_NODELAY, &nodelay, "nodelay");
}

std::string UserOf(ssh_session session) {
  char* user = nullptr;
  if (Libssh().options_get(session, SSH_OPTIONS_USER, &user) != SSH_OK || user == nullptr) {
    return "?";
  }
  std::string result(user);
  Libssh().string_free_char(user);
  return result;
}

absl::Status Authenticate(ssh_session session, const SshSettings& settings) {
  int rc;
  std::string offered;
  if (settings.key_file.empty()) {
    rc = Libssh().userauth_publickey_auto(session, nullptr, nullptr);
    offered = "ssh-agent and default keys";
  } else {
    ssh_key key = nullptr;
    if (Libssh().pki_import_privkey_file(settings.key_file.c_str(), nullptr, nullptr, nullptr,
                                    &key) != SSH_OK) {
      return absl::FailedPreconditionError(
          absl::StrCat("node \"", settings.node, "\": cannot read key file ",
                       settings.key_file, " (missing, or protected by a passphrase)"));
    }
    rc = Libssh().userauth_publickey(session, nullptr, key);
    Libssh().key_free(key);
    offered = absl::StrCat("key ", settings.key_file);
  }
  if (rc == SSH_AUTH_SUCCESS) return absl::OkStatus();
  if (rc == SSH_AUTH_ERROR) {
    return absl::UnavailableError(absl::StrCat("node \"", settings.node,
                                               "\": authentication failed: ",
                                               Libssh().get_error(session)));
  }
  return absl::PermissionDeniedError(absl::StrCat("node \"", settings.node, "\": user \"",
                                                  UserOf(session), "\" refused with ",
                                                  offered));
}

}  // namespace

void SshSessionDeleter::operator()(ssh_session session) const {
  if (Libssh().is_connected(session)) Libssh().disconnect(session);
  Libssh().free_session(session);
}

std::string ExpandHome(const std::string& path) {
  const char* home = std::getenv("HOME");
  if (home == nullptr) return path;
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return absl::StrCat(home, path.substr(1));
  return path;
}

SshSettings SettingsForNode(const ClusterSpec& spec, const NodeSpec& node,
                            const TransportOptions& options, const std::string& config_file) {
  SshSettings settings;
  settings.node = node.name.empty() ? node.address : node.name;
  settings.host = node.address;
  settings.config_file = config_file;
  settings.connect_timeout_s = options.connect_timeout_s;
  settings.accept_new_host_keys = options.accept_new_host_keys;
  if (const SshGroup* group = FindSshGroup(spec, node)) {
    settings.user = group->user;
    settings.port = group->port;
    settings.key_file = ExpandHome(group->key_file);
    settings.known_hosts = ExpandHome(group->known_hosts);
  }
  return settings;
}

namespace {

// A node that drops off the network mid-apply (powered off, partitioned)
// answers nothing, not even a reset; without this, a quiet job's connection
// would wait on it for hours. The kernel probes an idle connection and
// gives up on it, or on data left unacknowledged, after 30 s.
void DetectDeadPeer(socket_t fd) {
  constexpr int kIdleS = 10, kIntervalS = 5, kProbes = 4;
  constexpr unsigned kDeadPeerMs = (kIdleS + kIntervalS * kProbes) * 1000;
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kIdleS, sizeof(kIdleS));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kIntervalS, sizeof(kIntervalS));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kProbes, sizeof(kProbes));
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &kDeadPeerMs, sizeof(kDeadPeerMs));
}

}  // namespace

absl::StatusOr<SshSessionPtr> OpenSshSession(const SshSettings& settings) {
  FP_RETURN_IF_ERROR(OpenLibssh().status());
  SshSessionPtr session(Libssh().new_session());
  if (session == nullptr) return absl::InternalError("ssh_new failed");
  FP_RETURN_IF_ERROR(Configure(session.get(), settings));
  if (Libssh().connect(session.get()) != SSH_OK) {
    return absl::UnavailableError(absl::StrCat("node \"", settings.node, "\" (", settings.host,
                                               "): cannot connect: ",
                                               Libssh().get_error(session.get())));
  }
  DetectDeadPeer(Libssh().get_fd(session.get()));
  FP_RETURN_IF_ERROR(
      VerifyHostKey(session.get(), settings.node, settings.accept_new_host_keys));
  FP_RETURN_IF_ERROR(Authenticate(session.get(), settings));
  return session;
}

}  // namespace fleetplan
