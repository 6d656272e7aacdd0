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
#include "tools/protocol/session_message.h"
#include "tools/protocol/session_wire.h"
#include "tools/util/overloaded.h"

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
    Queue(EncodeFrame(type, fields));
  }
  void Queue(const std::string& frame) {
    pending_ += frame;
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
    absl::StatusOr<SessionRequest> request = ParseSessionRequest(frame);
    if (!request.ok()) return request.status();
    return std::visit(
        Overloaded{
            [this](const ReadRequest& read) { return Read(read); },
            [this](const WriteRequest& write) {
              // What apply writes it writes again when it finds something else.
              Answer(WriteFileAtomic(write.path, write.content, write.mode, Durability::kProcess));
              return absl::OkStatus();
            },
            [this](const PutRequest& put) { return Put(put); },
            [this](const RemoveRequest& remove) { return Remove(remove); },
            [this](const RunRequest& run) { return Run(run); },
            [this](const VerifyRequest& verify) { return Verify(verify); },
            [this](const WorkdirRequest& workdir) { return Workdir(workdir); },
        },
        *request);
  }

  absl::Status Read(const ReadRequest& read) {
    ContentsAnswer answer;
    for (const std::string& path : read.paths) {
      absl::StatusOr<std::string> content = ReadFileToString(path);
      if (content.ok()) {
        answer.files.push_back({FileContent::Kind::kOk, *std::move(content)});
      } else {
        answer.files.push_back({absl::IsNotFound(content.status()) ? FileContent::Kind::kMissing
                                                                   : FileContent::Kind::kError,
                                std::string(content.status().message())});
      }
    }
    Queue(EncodeContents(answer));
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
    absl::StatusOr<std::optional<Frame>> next = NextFrame();
    if (!next.ok()) return next.status();
    if (!next->has_value()) return absl::DataLossError("put: a file header expected");
    absl::StatusOr<PutFileHeader> file = ParsePutFileHeader(**next);
    if (!file.ok()) return absl::DataLossError(file.status().message());
    absl::StatusOr<std::string> target = JoinUnderRoot(root, file->path);
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
    uint64_t left = file->size;
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
    bool done = fchmod(fd, file->mode) == 0;
    done = close(fd) == 0 && done;
    done = done && rename(temporary.c_str(), target->c_str()) == 0;
    if (!done) {
      *failure = absl::InternalError(absl::StrCat(*target, ": ", strerror(errno)));
      unlink(temporary.c_str());
    }
    return absl::OkStatus();
  }

  absl::Status Put(const PutRequest& put) {
    absl::Status failure;
    for (uint64_t i = 0; i < put.count; ++i) {
      if (absl::Status read = PutOne(put.root, &failure); !read.ok()) return read;
    }
    Answer(failure);
    return absl::OkStatus();
  }

  absl::Status Remove(const RemoveRequest& remove) {
    absl::Status failure;
    for (size_t i = 0; i < remove.paths.size() && failure.ok(); ++i) {
      absl::StatusOr<std::string> target = JoinUnderRoot(remove.root, remove.paths[i]);
      if (!target.ok()) {
        failure = target.status();
      } else if (unlink(target->c_str()) != 0 && errno != ENOENT) {
        failure = absl::InternalError(absl::StrCat(*target, ": ", strerror(errno)));
      }
    }
    Answer(failure);
    return absl::OkStatus();
  }

  absl::Status Verify(const VerifyRequest& verify) {
    TreeCheckReport report = CheckSyncedTree(verify.root, verify.manifest);
    if (report.status == 0 && !verify.record_path.empty()) {
      if (absl::Status recorded =
              WriteFileAtomic(verify.record_path, verify.record, 0600, Durability::kProcess);
          !recorded.ok()) {
        report = {2, absl::StrCat("recording ", verify.record_path, ": ", recorded.message())};
      }
    }
    Send(FrameType::kOutput, {absl::StrCat(report.message, "\n")});
    Send(FrameType::kStatus, {absl::StrCat(report.status)});
    return absl::OkStatus();
  }

  absl::Status Workdir(const WorkdirRequest& workdir) {
    int status = 0;
    Send(FrameType::kOutput, {CheckWorkdirBeforeSync(workdir.workdir, workdir.state_dir,
                                                     workdir.bytes, &status)});
    Send(FrameType::kStatus, {absl::StrCat(status)});
    return absl::OkStatus();
  }

  // Runs `/bin/sh -c command` (tools/process/subprocess.h: its own process
  // group, stopped with this process), its output sent as it comes.
  absl::Status Run(const RunRequest& run);
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

absl::Status ApplySession::Run(const RunRequest& run) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", run.command};
  options.cwd = run.cwd;
  options.stdin_pipe = run.hold_stdin;
  options.env = run.env;
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
      stop_at = absl::Now() + (run.hold_stdin ? run.stdin_grace : absl::ZeroDuration());
    }
    if (stop_at.has_value() && absl::Now() >= *stop_at) {
      StopAll(processes, run.term_grace, forward);
      break;
    }
    Flush();
    std::vector<int> watched;
    if (input_open) watched.push_back(in_);
    // Once its output ended only the exit is awaited: looked for often, as
    // the command's end is what a short command's caller waits on.
    absl::Duration wait = process.output_open() ? absl::Milliseconds(20) : absl::Milliseconds(1);
    if (!PumpOutput(processes, watched, wait, forward).empty()) {
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
