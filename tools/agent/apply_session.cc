#include "tools/agent/apply_session.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tools/util/path_policy.h"
#include "tools/agent/sync_checks.h"
#include "tools/agent/workdir_check.h"
#include "tools/process/files.h"
#include "tools/process/subprocess.h"
#include "tools/protocol/session_wire.h"

namespace fleetplan {
namespace {

class ApplySession {
 public:
  ApplySession(int in_fd, int out_fd, absl::Duration idle_timeout)
      : in_(in_fd), out_(out_fd), idle_timeout_(idle_timeout) {}

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

  // Frames are gathered and written at once when the session waits (an
  // answer of several frames leaves as one packet: sshd leaves Nagle's
  // algorithm on for a command without a terminal, which would hold a
  // second small write behind the ACK of the first).
  void Send(FrameType type, const std::vector<std::string>& fields = {}) {
    pending_ += EncodeFrame(type, fields);
    if (pending_.size() >= kSessionChunk) Flush();
  }
  void Flush() {
    WriteFully(out_, pending_);
    pending_.clear();
  }

  // Reads what is there (waiting for it up to the idle timeout); false at
  // the end of input or after the idle timeout.
  bool Fill() {
    Flush();
    pollfd ready = {in_, POLLIN, 0};
    int waited;
    do {
      waited = poll(&ready, 1, static_cast<int>(absl::ToInt64Milliseconds(idle_timeout_)));
    } while (waited < 0 && errno == EINTR);
    if (waited == 0) return false;
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
            absl::StrCat("unexpected frame '", std::string(1, static_cast<char>(frame.type)), "'"));
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
      absl::Status made = MakeDirs(Dirname(*target));
      fd = made.ok() ? open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
      if (!made.ok())
        *failure = made;
      else if (fd < 0)
        *failure = absl::InternalError(absl::StrCat(temporary, ": ", strerror(errno)));
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
      if (absl::Status recorded = WriteFileAtomic(frame.fields[2], frame.fields[3], 0600);
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
    Send(FrameType::kOutput, {CheckWorkdirBeforeSync(frame.fields[0], frame.fields[1], *bytes, &status)});
    Send(FrameType::kStatus, {absl::StrCat(status)});
    return absl::OkStatus();
  }

  // Runs `/bin/sh -c command` (tools/process/subprocess.h: its own process
  // group, stopped with this process), its output sent as it comes.
  absl::Status Run(const Frame& frame);
  // Takes the frames received while a command runs: a cancel sets
  // `*cancel`; anything else breaks the session, which stops the command.
  void TakeCancels(bool* cancel);

  const int in_;
  const int out_;
  const absl::Duration idle_timeout_;
  FrameReader reader_;
  std::string pending_;  // frames not yet written
  bool ended_ = false;   // apply left during a command
};

void ApplySession::TakeCancels(bool* cancel) {
  while (true) {
    absl::StatusOr<std::optional<Frame>> next = reader_.Next();
    if (next.ok() && !next->has_value()) return;
    // Anything but a cancel breaks the session: stop the command, then end.
    if (!next.ok() || (*next)->type != FrameType::kCancel) ended_ = true;
    *cancel = true;
    if (!next.ok()) return;
  }
}

absl::Status ApplySession::Run(const Frame& frame) {
  if (frame.fields.size() < 5) return absl::InvalidArgumentError("run: 5 fields expected");
  absl::StatusOr<uint64_t> hold = FrameNumber(frame, 2, "run's hold_stdin");
  absl::StatusOr<uint64_t> stdin_grace = FrameNumber(frame, 3, "run's stdin grace");
  absl::StatusOr<uint64_t> term_grace = FrameNumber(frame, 4, "run's term grace");
  for (const auto* number : {&hold, &stdin_grace, &term_grace}) {
    if (!number->ok()) return number->status();
  }
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", frame.fields[0]};
  options.cwd = frame.fields[1];
  options.stdin_pipe = *hold != 0;
  for (size_t i = 5; i < frame.fields.size(); ++i) {
    std::pair<std::string, std::string> variable =
        absl::StrSplit(frame.fields[i], absl::MaxSplits('=', 1));
    options.env.push_back(std::move(variable));
  }
  absl::StatusOr<std::unique_ptr<Subprocess>> started = Subprocess::Start(options);
  if (!started.ok()) {
    // The stream is fine; the node could not start it (a missing cwd).
    Send(FrameType::kOutput, {absl::StrCat(started.status().message(), "\n")});
    Send(FrameType::kStatus, {absl::IsNotFound(started.status()) ? "127" : "1"});
    return absl::OkStatus();
  }
  Subprocess& process = **started;
  Subprocess* processes[] = {&process};
  auto forward = [this](size_t, absl::string_view chunk) {
    Send(FrameType::kOutput, {std::string(chunk)});
  };
  bool cancel = false, input_open = true;
  std::optional<absl::Time> stop_at;
  // A cancel may have come with the request itself.
  TakeCancels(&cancel);
  while (!process.TryWait().has_value()) {
    if (cancel && !stop_at.has_value()) {
      // As a transport does: EOF on stdin first, the agent stops its ranks on it.
      process.CloseStdin();
      stop_at =
          absl::Now() + (*hold != 0 ? absl::Milliseconds(*stdin_grace) : absl::ZeroDuration());
    }
    if (stop_at.has_value() && absl::Now() >= *stop_at) {
      StopAll(processes, absl::Milliseconds(*term_grace), forward);
      break;
    }
    Flush();
    std::vector<int> watched;
    if (input_open) watched.push_back(in_);
    if (!PumpOutput(processes, watched, absl::Milliseconds(20), forward).empty()) {
      input_open = Fill();
      if (!input_open) cancel = ended_ = true;  // apply is gone
    }
    TakeCancels(&cancel);
  }
  // What it printed last; a process it left behind (the detached agent)
  // may hold the pipe, so only what is there now.
  if (process.output_open())
    process.ReadOutput([&](absl::string_view chunk) { forward(0, chunk); });
  Send(FrameType::kStatus, {absl::StrCat(*process.exit_status())});
  return absl::OkStatus();
}

}  // namespace

int ServeApplySession(int in_fd, int out_fd, absl::Duration idle_timeout) {
  // A closed stdout is the end of the session, not of the process.
  signal(SIGPIPE, SIG_IGN);
  return ApplySession(in_fd, out_fd, idle_timeout).Serve();
}

}  // namespace fleetplan
