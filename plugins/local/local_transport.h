#ifndef FLEETPLAN_PLUGINS_LOCAL_LOCAL_TRANSPORT_H_
#define FLEETPLAN_PLUGINS_LOCAL_LOCAL_TRANSPORT_H_

// The `local` transport: every node is this machine. Commands run under
// /bin/sh as children of apply, files are copied on the local filesystem.
// Registered as "local"; core code reaches it through TransportRegistry.

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "plugins/transport.h"

namespace fleetplan {

struct LocalOptions {
  // After a cancel closes the stdin of a command that holds it: how long
  // it may take to exit by itself (the launch agent stops its ranks on
  // EOF; see StdinGraceFor), then how long after SIGTERM before SIGKILL.
  absl::Duration stdin_grace = absl::Seconds(10);
  absl::Duration term_grace = absl::Seconds(5);
};

class LocalConnection : public Connection {
 public:
  explicit LocalConnection(LocalOptions options = {}) : options_(options) {}

  // Runs `/bin/sh -c command` with `env` added to this process's
  // environment, in `cwd` (empty: this process's). InvalidArgument for a
  // missing cwd, Internal when the shell cannot start.
  absl::StatusOr<int> Run(const CommandSpec& command,
                          const OutputCallback& on_output,
                          const absl::Notification* cancel) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override;
  // InvalidArgument for a path that is absolute or climbs out with "..".
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& remote_root) override;
  absl::Status RemoveFiles(const std::string& remote_root,
                           const std::vector<std::string>& paths) override;

 private:
  LocalOptions options_;
};

class LocalTransport : public Transport {
 public:
  // Any address names this machine; the workdir must be absolute.
  absl::Status ValidateNode(const ClusterSpec& spec,
                            const NodeSpec& node) const override;
  absl::StatusOr<std::unique_ptr<Connection>> Connect(
      const ClusterSpec& spec, const NodeSpec& node,
      const TransportOptions& options) override;
  bool SharesLocalFilesystem() const override { return true; }
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_LOCAL_LOCAL_TRANSPORT_H_
