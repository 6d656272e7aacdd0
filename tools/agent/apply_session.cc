#include "tools/agent/apply_session.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "plugins/relative_path.h"
#include "tools/process/files.h"
#include "tools/protocol/check_line.h"
#include "tools/protocol/session_wire.h"
#include "tools/sync/manifest.h"
#include "tools/sync/tree_check.h"

namespace fleetplan {
namespace {

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// A stopped command's process group: TERM after `term_at`, KILL after
// `kill_at` (set once TERM went).
struct RunningCommand {
  pid_t pid = -1;
  int output_fd = -1;
  int stdin_fd = -1;  // held open until a cancel (hold_stdin), else -1
  absl::Duration stdin_grace;
  absl::Duration term_grace;
  std::optional<absl::Time> term_at;
  std::optional<absl::Time> kill_at;
};

class ApplySession {
 public:
  ApplySession(int in_fd, int out_fd) : in_(in_fd), out_(out_fd) {}

  int Serve() {
    Send(FrameType::kHello, {kSessionGreeting});
    while (true) {
      absl::StatusOr<std::optional<Frame>> frame = NextFrame();
      if (!frame.ok()) return Broken(frame.status().message());
      if (!frame->has_value()) return 0;  // apply closed the session
      if (absl::Status handled = Handle(**frame); !handled.ok()) {
        return Broken(handled.message());
      }
      if (ended_) return 0;
    }
  }

 private:
  int Broken(absl::string_view why) {
    std::fprintf(stderr, "fleetplan-agent: apply session: %s\n", std::string(why).c_str());
    return 1;
  }

  void Send(FrameType type, const std::vector<std::string>& fields = {}) {
    WriteFully(out_, EncodeFrame(type, fields));
  }

  // Reads what is there (waiting for it); false at the end of input.
  bool Fill() {
    char buffer[64 * 1024];
    ssize_t n;
    do {
      n = read(in_, buffer, sizeof(buffer));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    reader_.Feed(absl::string_view(buffer, n));
    return true;
  }

  // The next frame, waiting for it; nullopt at a clean end of input.
  absl::StatusOr<std::optional<Frame>> NextFrame() {
    while (true) {
      absl::StatusOr<std::optional<Frame>> frame = reader_.Next();
      if (!frame.ok() || frame->has_value()) return frame;
      if (!Fill()) {
        if (reader_.pending() != 0) return absl::DataLossError("the stream ended inside a frame");
        return std::optional<Frame>();
      }
    }
  }

  absl::Status Handle(const Frame& frame) {
    switch (frame.type) {
      case FrameType::kRead:
        return Read(frame);
      case FrameType::kWrite:
        return Write(frame);
      case FrameType::kPut:
        return Put(frame);
      case FrameType::kRemove:
        return Remove(frame);
      case FrameType::kRun:
        return Run(frame);
      case FrameType::kVerify:
        return Verify(frame);
      case FrameType::kWorkdir:
        return Workdir(frame);
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("unexpected frame '", std::string(1, static_cast<char>(frame.type)),
                         "'"));
    }
  }

  absl::Status Read(const Frame& frame) {
    std::vector<std::string> answer;
    for (const std::string& path : frame.fields) {
      absl::StatusOr<std::string> content = ReadFileToString(path);
      if (content.ok()) {
        answer.push_back("ok");
        answer.push_back(*std::move(content));
      } else {
        answer.push_back(absl::IsNotFound(content.status()) ? "missing" : "error");
        answer.emplace_back(content.status().message());
      }
    }
    Send(FrameType::kContents, answer);
    return absl::OkStatus();
  }

  absl::Status Write(const Frame& frame) {
    if (frame.fields.size() != 3) return absl::InvalidArgumentError("write: 3 fields expected");
    absl::StatusOr<uint64_t> mode = FrameNumber(frame, 1, "write's mode");
    if (!mode.ok()) return mode.status();
    Answer(WriteFileAtomic(frame.fields[0], frame.fields[2], *mode));
    return absl::OkStatus();
  }

  void Answer(const absl::Status& status) {
    if (status.ok()) {
      Send(FrameType::kOk);
    } else {
      Send(FrameType::kError, {std::string(status.message())});
    }
  }

  // One file of a put: its data frames go to a temporary file beside the
  // target, renamed over it once complete. A failure is kept (the first
  // one) and the data still read, so the stream stays in step.
  absl::Status PutOne(const std::string& root, absl::Status* failure) {
    absl::StatusOr<std::optional<Frame>> header = NextFrame();
    if (!header.ok()) return header.status();
    if (!header->has_value() || (*header)->type != FrameType::kFile ||
        (*header)->fields.size() != 3) {
      return absl::DataLossError("put: a file header expected");
    }
    const Frame& file = **header;
    absl::StatusOr<uint64_t> mode = FrameNumber(file, 1, "a file's mode");
    absl::StatusOr<uint64_t> size = FrameNumber(file, 2, "a file's size");
    if (!mode.ok() || !size.ok()) return mode.ok() ? size.status() : mode.status();
    absl::StatusOr<std::string> target = JoinUnderRoot(root, file.fields[0]);
    int fd = -1;
    std::string temporary;
    if (target.ok() && failure->ok()) {
      temporary = absl::StrCat(*target, ".fleetplan-tmp");
      absl::Status made = MakeDirs(ParentOf(*target));
      fd = made.ok() ? open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)
                     : -1;
      if (!made.ok()) *failure = made;
      else if (fd < 0) *failure = absl::InternalError(absl::StrCat(temporary, ": ", strerror(errno)));
    } else if (!target.ok() && failure->ok()) {
      *failure = target.status();
    }
    uint64_t left = *size;
    while (left > 0) {
      absl::StatusOr<std::optional<Frame>> data = NextFrame();
      if (!data.ok()) return data.status();
      if (!data->has_value() || (*data)->type != FrameType::kData || (*data)->fields.size() != 1 ||
          (*data)->fields[0].size() > left) {
        if (fd >= 0) close(fd), unlink(temporary.c_str());
        return absl::DataLossError("put: a file's data does not match its size");
      }
      const std::string& bytes = (*data)->fields[0];
      if (fd >= 0 && write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
        *failure = absl::InternalError(absl::StrCat(temporary, ": ", strerror(errno)));
        close(fd), unlink(temporary.c_str());
        fd = -1;
      }
      left -= bytes.size();
    }
    if (fd < 0) return absl::OkStatus();
    bool done = fchmod(fd, *mode & 07777) == 0;
    done = close(fd) == 0 && done;
    done = done && rename(temporary.c_str(), target->c_str()) == 0;
    if (!done) {
      *failure = absl::InternalError(absl::StrCat(*target, ": ", strerror(errno)));
      unlink(temporary.c_str());
    }
    return absl::OkStatus();
  }

  absl::Status Put(const Frame& frame) {
    if (frame.fields.size() != 2) return absl::InvalidArgumentError("put: 2 fields expected");
    absl::StatusOr<uint64_t> count = FrameNumber(frame, 1, "put's count");
    if (!count.ok()) return count.status();
    absl::Status failure;
    for (uint64_t i = 0; i < *count; ++i) {
      if (absl::Status read = PutOne(frame.fields[0], &failure); !read.ok()) return read;
    }
    Answer(failure);
    return absl::OkStatus();
  }

  absl::Status Remove(const Frame& frame) {
    if (frame.fields.empty()) return absl::InvalidArgumentError("remove: a root expected");
    absl::Status failure;
    for (size_t i = 1; i < frame.fields.size() && failure.ok(); ++i) {
      absl::StatusOr<std::string> target = JoinUnderRoot(frame.fields[0], frame.fields[i]);
      if (!target.ok()) {
        failure = target.status();
      } else if (unlink(target->c_str()) != 0 && errno != ENOENT) {
        failure = absl::InternalError(absl::StrCat(*target, ": ", strerror(errno)));
      }
    }
    Answer(failure);
    return absl::OkStatus();
  }

  absl::Status Verify(const Frame& frame) {
    if (frame.fields.size() != 4) return absl::InvalidArgumentError("verify: 4 fields expected");
    TreeCheckReport report = CheckSyncedTree(frame.fields[0], frame.fields[1]);
    if (report.status == 0 && !frame.fields[2].empty()) {
      if (absl::Status recorded = WriteFileAtomic(frame.fields[2], frame.fields[3], 0644);
          !recorded.ok()) {
        report = {2, absl::StrCat("recording ", frame.fields[2], ": ", recorded.message())};
      }
    }
    Send(FrameType::kOutput, {absl::StrCat(report.message, "\n")});
    Send(FrameType::kStatus, {absl::StrCat(report.status)});
    return absl::OkStatus();
  }

  absl::Status Workdir(const Frame& frame) {
    if (frame.fields.size() != 3) return absl::InvalidArgumentError("workdir: 3 fields expected");
    absl::StatusOr<uint64_t> bytes = FrameNumber(frame, 2, "the sync's bytes");
    if (!bytes.ok()) return bytes.status();
    int status = 0;
    Send(FrameType::kOutput, {CheckWorkdir(frame.fields[0], frame.fields[1], *bytes, &status)});
    Send(FrameType::kStatus, {absl::StrCat(status)});
    return absl::OkStatus();
  }

  absl::Status Run(const Frame& frame);
  // Forks `/bin/sh -c command` in a session of its own.
  absl::Status Start(const Frame& frame, RunningCommand* command);
  // Apply cancelled (or left): close its stdin, then signal it on time.
  void Cancel(RunningCommand* command);
  void SignalOnTime(RunningCommand* command);
  // Takes the frames received while a command runs: a cancel; anything
  // else breaks the session, which stops the command.
  void TakeCancels(RunningCommand* command);

  const int in_;
  const int out_;
  FrameReader reader_;
  bool ended_ = false;  // apply left during a command
};

absl::Status ApplySession::Start(const Frame& frame, RunningCommand* command) {
  if (frame.fields.size() < 5) return absl::InvalidArgumentError("run: 5 fields expected");
  absl::StatusOr<uint64_t> hold = FrameNumber(frame, 2, "run's hold_stdin");
  absl::StatusOr<uint64_t> stdin_grace = FrameNumber(frame, 3, "run's stdin grace");
  absl::StatusOr<uint64_t> term_grace = FrameNumber(frame, 4, "run's term grace");
  if (!hold.ok() || !stdin_grace.ok() || !term_grace.ok()) {
    return !hold.ok() ? hold.status() : !stdin_grace.ok() ? stdin_grace.status() : term_grace.status();
  }
  command->stdin_grace = absl::Milliseconds(*stdin_grace);
  command->term_grace = absl::Milliseconds(*term_grace);
  int output[2], input[2] = {-1, -1};
  if (pipe2(output, O_CLOEXEC) != 0 || (*hold != 0 && pipe2(input, O_CLOEXEC) != 0)) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    setsid();
    int in = *hold != 0 ? input[0] : open("/dev/null", O_RDONLY);
    dup2(in, STDIN_FILENO);
    dup2(output[1], STDOUT_FILENO);
    dup2(output[1], STDERR_FILENO);
    signal(SIGPIPE, SIG_DFL);
    for (size_t i = 5; i < frame.fields.size(); ++i) putenv(strdup(frame.fields[i].c_str()));
    const std::string& cwd = frame.fields[1];
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      std::fprintf(stderr, "cd: %s: %s\n", cwd.c_str(), strerror(errno));
      _exit(2);
    }
    execl("/bin/sh", "sh", "-c", frame.fields[0].c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "/bin/sh: %s\n", strerror(errno));
    _exit(127);
  }
  close(output[1]);
  if (input[0] >= 0) close(input[0]);
  command->pid = pid;
  command->output_fd = output[0];
  command->stdin_fd = input[1];
  return absl::OkStatus();
}

void ApplySession::Cancel(RunningCommand* command) {
  if (command->term_at.has_value()) return;
  bool held = command->stdin_fd >= 0;
  if (held) close(command->stdin_fd);
  command->stdin_fd = -1;
  command->term_at = absl::Now() + (held ? command->stdin_grace : absl::ZeroDuration());
}

void ApplySession::SignalOnTime(RunningCommand* command) {
  absl::Time now = absl::Now();
  if (command->term_at.has_value() && !command->kill_at.has_value() && now >= *command->term_at) {
    kill(-command->pid, SIGTERM);
    command->kill_at = now + command->term_grace;
  } else if (command->kill_at.has_value() && now >= *command->kill_at) {
    kill(-command->pid, SIGKILL);
    command->kill_at = absl::InfiniteFuture();
  }
}

void ApplySession::TakeCancels(RunningCommand* command) {
  while (true) {
    absl::StatusOr<std::optional<Frame>> next = reader_.Next();
    if (next.ok() && !next->has_value()) return;
    if (!next.ok() || (*next)->type != FrameType::kCancel) ended_ = true;
    Cancel(command);
    if (!next.ok()) return;
  }
}

absl::Status ApplySession::Run(const Frame& frame) {
  RunningCommand command;
  if (absl::Status started = Start(frame, &command); !started.ok()) {
    // The stream is fine; the node could not start it.
    Send(FrameType::kOutput, {absl::StrCat(started.message(), "\n")});
    Send(FrameType::kStatus, {"127"});
    return absl::OkStatus();
  }
  int wait_status = 0;
  bool exited = false, input_open = true;
  char buffer[32 * 1024];
  // A cancel may have come with the request itself.
  TakeCancels(&command);
  while (!exited) {
    pollfd fds[2] = {{command.output_fd, POLLIN, 0}, {in_, static_cast<short>(input_open ? POLLIN : 0), 0}};
    poll(fds, 2, 20);
    if (fds[0].revents != 0) {
      ssize_t n = read(command.output_fd, buffer, sizeof(buffer));
      if (n > 0) Send(FrameType::kOutput, {std::string(buffer, n)});
    }
    if (input_open && fds[1].revents != 0) {
      input_open = Fill();
      if (!input_open) {
        ended_ = true;  // apply is gone: stop the command, then end
        Cancel(&command);
      }
    }
    TakeCancels(&command);
    SignalOnTime(&command);
    exited = waitpid(command.pid, &wait_status, WNOHANG) == command.pid;
  }
  // What it printed last; a process it left behind (the detached agent)
  // may hold the pipe, so only what is there now.
  fcntl(command.output_fd, F_SETFL, O_NONBLOCK);
  ssize_t n;
  while ((n = read(command.output_fd, buffer, sizeof(buffer))) > 0) {
    Send(FrameType::kOutput, {std::string(buffer, n)});
  }
  close(command.output_fd);
  if (command.stdin_fd >= 0) close(command.stdin_fd);
  int status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  Send(FrameType::kStatus, {absl::StrCat(status)});
  return absl::OkStatus();
}

}  // namespace

int ServeApplySession(int in_fd, int out_fd) {
  // A closed stdout is the end of the session, not of the process.
  signal(SIGPIPE, SIG_IGN);
  return ApplySession(in_fd, out_fd).Serve();
}

TreeCheckReport CheckSyncedTree(const std::string& root, const std::string& manifest_path) {
  absl::StatusOr<std::string> text = ReadFileToString(manifest_path);
  absl::StatusOr<Manifest> manifest = text.ok() ? ParseManifest(*text) : text.status();
  if (!manifest.ok()) {
    return {1, absl::StrCat("cannot check ", root, ": ", manifest_path, ": ",
                            manifest.status().message())};
  }
  std::vector<std::string> mismatches = CheckTree(root, *manifest, CheckRecordPath(manifest_path));
  if (mismatches.empty()) {
    return {0, absl::StrCat(manifest->entries.size(), " files as listed")};
  }
  constexpr size_t kNamed = 10;
  return {1, absl::StrCat(mismatches.size(), " of ", manifest->entries.size(),
                          " files differ from what was sent: ",
                          absl::StrJoin(mismatches.begin(),
                                        mismatches.begin() + std::min(kNamed, mismatches.size()),
                                        ", "),
                          mismatches.size() > kNamed ? ", ..." : "")};
}

std::string CheckWorkdir(const std::string& workdir, const std::string& state_dir,
                         uint64_t bytes, int* status) {
  std::string user;
  if (const char* logname = getenv("LOGNAME"); logname != nullptr && *logname != '\0') {
    user = logname;
  } else if (const passwd* entry = getpwuid(getuid()); entry != nullptr) {
    user = entry->pw_name;
  } else {
    user = absl::StrCat(getuid());
  }
  struct stat info;
  absl::Status made = stat(state_dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)
                          ? absl::OkStatus()
                          : MakeDirs(state_dir);
  CheckResult check{"workdir", CheckStatus::kOk, ""};
  *status = 0;
  if (!made.ok() || access(workdir.c_str(), W_OK) != 0) {
    check.status = CheckStatus::kFail;
    check.message = absl::StrCat(
        workdir, ": cannot be created or written by ", user, " (",
        made.ok() ? "not writable" : std::string(made.message()), "); expected a folder ", user,
        " can write at this absolute path on every node; fix: choose a workdir on a writable "
        "filesystem, or create it and give ", user, " write access to it");
    *status = 1;
    return FormatCheckLine(check) + "\n";
  }
  struct statvfs fs;
  if (statvfs(workdir.c_str(), &fs) != 0) {
    check.status = CheckStatus::kSkip;
    check.message = absl::StrCat(workdir, ": writable by ", user,
                                 "; free space not checked: statvfs failed: ", strerror(errno));
    return FormatCheckLine(check) + "\n";
  }
  uint64_t kb = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize / 1024;
  if (bytes > kb * 1024) {
    check.status = CheckStatus::kFail;
    check.message = absl::StrCat(workdir, ": ", kb / 1024, " MiB free, the sync needs ",
                                 (bytes + 1048575) / 1048576,
                                 " MiB; expected at least the sync's size free; fix: free space "
                                 "on the filesystem of ",
                                 workdir, ", or choose another workdir");
    *status = 1;
  } else {
    check.message = absl::StrCat(workdir, ": writable by ", user, ", ", kb / 1024, " MiB free");
  }
  return FormatCheckLine(check) + "\n";
}

}  // namespace fleetplan
