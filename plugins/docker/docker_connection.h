#ifndef FLEETPLAN_PLUGINS_DOCKER_DOCKER_CONNECTION_H_
#define FLEETPLAN_PLUGINS_DOCKER_DOCKER_CONNECTION_H_

// A Connection to one container through the Engine API: commands are
// execs, files travel as tar streams through the archive endpoints.

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "plugins/docker/docker_client.h"
#include "plugins/transport.h"

namespace fleetplan {

struct DockerOptions {
  // After a cancel closes the stdin of a command that holds it: how long
  // it may take to exit by itself (the launch agent stops its ranks on
  // EOF; see StdinGraceFor), then how long after SIGTERM before SIGKILL.
  absl::Duration stdin_grace = absl::Seconds(10);
  absl::Duration term_grace = absl::Seconds(5);
};

// Every exec carries this variable (a token unique to the run) so that a
// cancel can find and signal the command and whatever it started.
inline constexpr char kExecTokenVariable[] = "FLEETPLAN_DOCKER_EXEC";

class DockerConnection : public Connection {
 public:
  // `container` is the node's address: the container's name.
  DockerConnection(std::shared_ptr<const DockerClient> client,
                   std::string container, DockerOptions options = {})
      : client_(std::move(client)),
        container_(std::move(container)),
        options_(options) {}

  // An exec of ["/bin/sh", "-c", command] with `env` and WorkingDir `cwd`
  // (empty: the image's). A cancel closes stdin, then signals (TERM, then
  // KILL) every process of the container that carries this run's token.
  // Unavailable naming the node when the container is gone or stops.
  absl::StatusOr<int> Run(const CommandSpec& command,
                          const OutputCallback& on_output,
                          const absl::Notification* cancel) override;
  // GET archive of `path`; NotFound when it does not exist,
  // InvalidArgument when it is not a regular file.
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  // PUT archive of a temporary file beside `path` (parents created by the
  // daemon), then an exec of `mv -f`: a rename within the directory, so
  // readers see the old or the new content. `path` must be absolute.
  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override;
  // One tar stream for the whole batch, extracted at `remote_root`
  // (created with mkdir -p when missing).
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& remote_root) override;
  // `rm -f --` of the quoted paths in `remote_root`, in batches.
  absl::Status RemoveFiles(const std::string& remote_root,
                           const std::vector<std::string>& paths) override;

 private:
  // Runs `argv` to the end, output collected; returns the exit status.
  absl::StatusOr<int> RunArgv(const std::vector<std::string>& argv,
                              std::string* output);
  // Runs `script` with `sh -c`; Internal naming `what` and carrying the
  // output when it fails.
  absl::Status RunScript(const std::string& script, absl::string_view what);
  // Signals every process that carries `token`.
  void SignalRun(const std::string& token, const char* signal);
  // The exit status of a finished exec; Unavailable when the container
  // went away under it.
  absl::StatusOr<int> ExitStatus(const std::string& exec_id);

  std::shared_ptr<const DockerClient> client_;
  std::string container_;
  DockerOptions options_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_DOCKER_DOCKER_CONNECTION_H_
