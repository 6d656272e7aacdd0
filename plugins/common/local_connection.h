#ifndef FLEETPLAN_PLUGINS_COMMON_LOCAL_CONNECTION_H_
#define FLEETPLAN_PLUGINS_COMMON_LOCAL_CONNECTION_H_

// A Connection to this machine: commands run under /bin/sh as children of
// this process, files are copied on the local filesystem. The local
// transport's connection, and how the slurm transport runs its client
// commands (srun, sbatch) on the login node.

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
  // InvalidArgument for a path that CheckStaysUnderRoot refuses.
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& remote_root) override;
  absl::Status RemoveFiles(const std::string& remote_root,
                           const std::vector<std::string>& paths) override;

 private:
  LocalOptions options_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_COMMON_LOCAL_CONNECTION_H_
