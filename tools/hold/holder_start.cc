#include "tools/hold/holder_start.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/hold/unix_socket.h"
#include "tools/protocol/hold_wire.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

bool Listens(const std::string& socket) {
  absl::StatusOr<int> fd = ConnectUnix(socket);
  if (!fd.ok()) return false;
  close(*fd);
  return true;
}

// Runs this executable as the holder, twice forked so that it is nobody's
// child here, in a session of its own, its output to `log`. Only
// async-signal-safe calls between fork and exec: the command has threads.
absl::Status Spawn(const std::vector<std::string>& args, const std::string& log) {
  int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log_fd < 0 || null_fd < 0) {
    absl::Status failed = absl::InternalError(absl::StrCat(log, ": ", std::strerror(errno)));
    if (log_fd >= 0) close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return failed;
  }
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  sigset_t none;
  sigemptyset(&none);
  pid_t child = fork();
  if (child == 0) {
    if (fork() != 0) _exit(0);
    setsid();
    dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    close_range(3, ~0U, 0);  // nothing of the command's (its node sockets) goes along
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the command blocks signals for its threads
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(log_fd);
  close(null_fd);
  if (child < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  waitpid(child, nullptr, 0);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> FindHolder(const HoldSet& set) {
  FP_ASSIGN_OR_RETURN(std::string folder, HoldFolder());
  std::string socket = HoldSocketPath(folder, set.Identity());
  if (!Listens(socket)) return absl::NotFoundError("no connection holder for these nodes");
  return socket;
}

absl::Status EndHolder(const HoldSet& set) {
  FP_ASSIGN_OR_RETURN(std::string socket, FindHolder(set));
  FP_ASSIGN_OR_RETURN(int fd, ConnectUnix(socket));
  SocketStream stream(fd);
  FP_RETURN_IF_ERROR(
      stream.Write(EncodeFrame(FrameType::kQuit, {kHoldGreeting, set.Identity()})));
  FrameReader reader;
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    absl::StatusOr<std::optional<Frame>> answer = reader.Next();
    if (!answer.ok()) return answer.status();
    if (answer->has_value()) {
      if ((*answer)->type != FrameType::kOk) {
        return absl::InternalError("the connection holder refused to end");
      }
      // It removes its socket as it ends.
      while (Listens(socket) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
      return absl::OkStatus();
    }
    FP_ASSIGN_OR_RETURN(std::string bytes, stream.Read(deadline - absl::Now()));
    reader.Feed(bytes);
  }
  return absl::DeadlineExceededError("the connection holder did not answer within 10s");
}

absl::StatusOr<std::string> FindOrStartHolder(const HoldSet& set, const std::string& spec_path,
                                              absl::Duration wait) {
  FP_ASSIGN_OR_RETURN(std::string folder, HoldFolder());
  const std::string identity = set.Identity();
  const std::string socket = HoldSocketPath(folder, identity);
  if (Listens(socket)) return socket;
  // One command starts it; the others find it started.
  int lock = open(HoldLockPath(folder, identity).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX) != 0) {
    if (lock >= 0) close(lock);
    return absl::InternalError(absl::StrCat("cannot lock ", folder, ": ", std::strerror(errno)));
  }
  absl::Status started = absl::OkStatus();
  if (!Listens(socket)) {
    unlink(socket.c_str());  // a dead holder's
    started = Spawn({"fleetplan", "__hold", absl::StrCat("--identity=", identity), spec_path},
                    HoldLogPath(folder, identity));
    absl::Time deadline = absl::Now() + wait;
    while (started.ok() && !Listens(socket)) {
      if (absl::Now() > deadline) {
        started = absl::DeadlineExceededError(absl::StrCat(
            "the connection holder did not listen within ", absl::FormatDuration(wait), " (see ",
            HoldLogPath(folder, identity), ")"));
      }
      absl::SleepFor(absl::Milliseconds(2));
    }
  }
  close(lock);
  if (!started.ok()) return started;
  return socket;
}

}  // namespace fleetplan
