#ifndef FLEETPLAN_PLUGINS_SSH_SSH_CONNECTION_H_
#define FLEETPLAN_PLUGINS_SSH_SSH_CONNECTION_H_

// One node over one libssh session: every command is a channel of that
// session, files go over one SFTP channel opened on first use.

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "plugins/ssh/sftp_client.h"
#include "plugins/ssh/ssh_session.h"
#include "plugins/transport.h"

namespace fleetplan {

struct SshRunOptions {
  // After a cancel sends EOF to a command that holds stdin: how long it
  // may take to exit by itself (the launch agent stops its ranks on EOF;
  // see StdinGraceFor), then how long after SIGTERM to its process group
  // before SIGKILL.
  absl::Duration stdin_grace = absl::Seconds(10);
  absl::Duration term_grace = absl::Seconds(5);
};

class SshConnection : public Connection {
 public:
  SshConnection(SshSessionPtr session, std::string node, SshRunOptions options = {})
      : session_(std::move(session)), node_(std::move(node)), options_(options) {}
  ~SshConnection() override;

  // Unavailable naming the node when the connection breaks;
  // InvalidArgument for an env name that is not a shell identifier.
  absl::StatusOr<int> Run(const CommandSpec& command, const OutputCallback& on_output,
                          const absl::Notification* cancel) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  // Pipelined on the SFTP channel: about two round trips for all of them.
  std::vector<absl::StatusOr<std::string>> ReadFiles(
      const std::vector<std::string>& paths) override;
  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override;
  // InvalidArgument for a path that is absolute or climbs out with "..".
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& remote_root) override;
  absl::Status RemoveFiles(const std::string& remote_root,
                           const std::vector<std::string>& paths) override;
  // A channel of the connection's session, the command run by the login
  // shell as given.
  absl::StatusOr<std::unique_ptr<CommandStream>> OpenStream(
      const std::string& command) override;

 private:
  absl::StatusOr<SftpClient*> Sftp();
  absl::Status Lost(absl::string_view doing) const;
  // Sends `signal` ("TERM") to the remote process group `pid` over a
  // channel of its own.
  absl::Status SignalGroup(long pid, const char* signal);

  SshSessionPtr session_;
  std::string node_;
  SshRunOptions options_;
  std::unique_ptr<SftpClient> sftp_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_SSH_CONNECTION_H_
