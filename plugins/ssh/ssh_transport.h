#ifndef FLEETPLAN_PLUGINS_SSH_SSH_TRANSPORT_H_
#define FLEETPLAN_PLUGINS_SSH_SSH_TRANSPORT_H_

// The `ssh` transport: libssh, one session per node reused by every step,
// strict host key checking, SFTP for files. Registered as "ssh"; core code
// reaches it through TransportRegistry.

#include <memory>
#include <string>

#include "plugins/ssh/ssh_connection.h"
#include "plugins/transport.h"

namespace fleetplan {

struct SshTransportOptions {
  std::string config_file;  // empty: ~/.ssh/config and /etc/ssh/ssh_config
  SshRunOptions run;
};

class SshTransport : public Transport {
 public:
  SshTransport() = default;
  explicit SshTransport(SshTransportOptions options) : options_(std::move(options)) {}

  // The workdir must be absolute and a named ssh group must exist.
  absl::Status ValidateNode(const ClusterSpec& spec, const NodeSpec& node) const override;
  bool RelaysSync() const override { return true; }
  // The node's address, port, user, key file and its content, known_hosts
  // and its content, the ssh config files' content and the agent's socket;
  // persist from its group (nullopt for "0").
  std::optional<HoldKey> Holding(const ClusterSpec& spec, const NodeSpec& node,
                                 const TransportOptions& options) const override;
  // See OpenSshSession (ssh_session.h) for the errors.
  absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const ClusterSpec& spec, const NodeSpec& node,
      const TransportOptions& options) override;

 private:
  SshTransportOptions options_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_SSH_TRANSPORT_H_
