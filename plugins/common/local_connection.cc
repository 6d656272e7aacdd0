#include "plugins/common/local_connection.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/process/files.h"
#include "tools/process/subprocess.h"
#include "tools/util/path_policy.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// How long to wait for output still buffered in the pipe after the shell
// exits; only a process that left the shell's group can hold it longer.
constexpr absl::Duration kDrainAfterExit = absl::Seconds(1);
constexpr absl::Duration kPollInterval = absl::Milliseconds(20);

}  // namespace

absl::StatusOr<int> LocalConnection::Run(const CommandSpec& command,
                                         const OutputCallback& on_output,
                                         const absl::Notification* cancel) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", command.command};
  options.env = command.env;
  options.cwd = command.cwd;
  options.stdin_pipe = command.hold_stdin;
  auto started = Subprocess::Start(options);
  if (!started.ok()) {
    return absl::Status(started.status().code(),
                        absl::StrCat("local: ", started.status().message()));
  }
  Subprocess& process = **started;
  Subprocess* processes[] = {&process};
  auto forward = [&](size_t, absl::string_view chunk) { on_output(chunk); };

  std::optional<absl::Time> stop_at;
  while (!process.TryWait().has_value()) {
    if (!stop_at.has_value() && cancel != nullptr && cancel->HasBeenNotified()) {
      // First the polite way: EOF on stdin; the agent stops its ranks on it.
      process.CloseStdin();
      stop_at = absl::Now() + StdinGraceFor(command, options_.stdin_grace);
    }
    if (stop_at.has_value() && absl::Now() >= *stop_at) {
      StopAll(processes, options_.term_grace, forward);
      break;
    }
    PumpOutput(processes, {}, kPollInterval, forward);
  }
  absl::Time drain_until = absl::Now() + kDrainAfterExit;
  while (process.output_open() && absl::Now() < drain_until) {
    PumpOutput(processes, {}, kPollInterval, forward);
  }
  return *process.exit_status();
}

absl::StatusOr<std::string> LocalConnection::ReadFile(const std::string& path) {
  return ReadFileToString(path);
}

absl::Status LocalConnection::WriteFile(const std::string& path,
                                        absl::string_view content, uint32_t mode) {
  return WriteFileAtomic(path, content, mode);
}

absl::Status LocalConnection::PutFiles(const std::vector<FileToSend>& files,
                                       const std::string& remote_root) {
  for (const FileToSend& file : files) {
    FP_ASSIGN_OR_RETURN(std::string destination, JoinUnderRoot(remote_root, file.path));
    FP_RETURN_IF_ERROR(CopyFileAtomic(file.local_path, destination, file.mode));
  }
  return absl::OkStatus();
}

absl::Status LocalConnection::RemoveFiles(const std::string& remote_root,
                                          const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    FP_ASSIGN_OR_RETURN(std::string target, JoinUnderRoot(remote_root, path));
    if (unlink(target.c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(
          absl::StrCat("cannot remove \"", target, "\": ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

}  // namespace fleetplan
