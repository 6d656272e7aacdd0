#include "tools/apply/pipe_stream_testing.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"

namespace fleetplan {

PipeStream::PipeStream(const std::string& command) {
  signal(SIGPIPE, SIG_IGN);  // an agent that left is an error, not the test's end
  int in[2], out[2], err[2];
  if ((pipe2(in, O_CLOEXEC) | pipe2(out, O_CLOEXEC) | pipe2(err, O_CLOEXEC)) != 0) abort();
  pid_ = fork();
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]), close(out[1]), close(err[1]);
  stdin_ = in[1], stdout_ = out[0], stderr_ = err[0];
}

PipeStream::~PipeStream() {
  close(stdin_), close(stdout_), close(stderr_);
  waitpid(pid_, nullptr, 0);
}

absl::Status PipeStream::Write(absl::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write(stdin_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::UnavailableError(strerror(errno));
    bytes.remove_prefix(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PipeStream::Read(absl::Duration timeout) {
  pollfd fds[2] = {{stdout_, POLLIN, 0}, {stderr_, POLLIN, 0}};
  poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  char buffer[65536];
  if (fds[1].revents != 0) {
    ssize_t n = read(stderr_, buffer, sizeof(buffer));
    if (n > 0) errors_.append(buffer, n);
  }
  if (fds[0].revents == 0) return std::string();
  ssize_t n = read(stdout_, buffer, sizeof(buffer));
  if (n <= 0) {
    // Its stderr too, for the message (what is there: another process
    // may hold it open).
    pollfd err = {stderr_, POLLIN, 0};
    while (poll(&err, 1, 0) > 0 && (n = read(stderr_, buffer, sizeof(buffer))) > 0) {
      errors_.append(buffer, n);
    }
    return absl::OutOfRangeError("ended");
  }
  return std::string(buffer, n);
}

}  // namespace fleetplan
