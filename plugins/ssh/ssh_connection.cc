#include "plugins/ssh/ssh_connection.h"

#include <csignal>

#include <libssh/callbacks.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "plugins/ssh/libssh_api.h"
#include "tools/util/path_policy.h"
#include "plugins/ssh/remote_command.h"
#include "plugins/ssh/remote_paths.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// How long one read waits before cancellation is looked at again.
constexpr int kPollMs = 20;

// The signal number for an SSH exit-signal name ("TERM"), or 0.
int SignalNumber(const char* name) {
  static const struct {
    const char* name;
    int number;
  } kSignals[] = {{"ABRT", SIGABRT}, {"ALRM", SIGALRM}, {"FPE", SIGFPE},   {"HUP", SIGHUP},
                  {"ILL", SIGILL},   {"INT", SIGINT},   {"KILL", SIGKILL}, {"PIPE", SIGPIPE},
                  {"QUIT", SIGQUIT}, {"SEGV", SIGSEGV}, {"TERM", SIGTERM}, {"USR1", SIGUSR1},
                  {"USR2", SIGUSR2}, {"BUS", SIGBUS}};
  for (const auto& signal : kSignals) {
    if (std::string(name) == signal.name) return signal.number;
  }
  return 0;
}

struct ExitState {
  int status = -1;
  int signal = -1;  // 0 for a signal without a known number
};

void OnExitStatus(ssh_session, ssh_channel, int status, void* userdata) {
  static_cast<ExitState*>(userdata)->status = status;
}

void OnExitSignal(ssh_session, ssh_channel, const char* signal, int, const char*, const char*,
                  void* userdata) {
  static_cast<ExitState*>(userdata)->signal = SignalNumber(signal);
}

struct ChannelCloser {
  void operator()(ssh_channel channel) const {
    Libssh().channel_close(channel);
    Libssh().channel_free(channel);
  }
};

// Takes the pid line that RemoteCommandLine(..., true) writes first on
// stderr out of the stream.
struct RemotePid {
  bool pending = false;
  std::string line;
  long pid = 0;

  absl::string_view Consume(absl::string_view chunk) {
    if (!pending) return chunk;
    size_t newline = chunk.find('\n');
    line.append(chunk.data(), std::min(newline, chunk.size()));
    if (newline == absl::string_view::npos) return {};
    pending = false;
    absl::string_view digits(line);
    if (absl::ConsumePrefix(&digits, kPidMarker)) absl::SimpleAtoi(digits, &pid);
    return chunk.substr(newline + 1);
  }
};

// A command's stdin and stdout over a channel of its own.
class SshCommandStream : public CommandStream {
 public:
  SshCommandStream(std::unique_ptr<ssh_channel_struct, ChannelCloser> channel,
                   std::string node, ssh_session session)
      : channel_(std::move(channel)), node_(std::move(node)), session_(session) {}

  absl::Status Write(absl::string_view bytes) override {
    while (!bytes.empty()) {
      int n = Libssh().channel_write(channel_.get(), bytes.data(), bytes.size());
      if (n == SSH_ERROR) return Lost("writing to a command");
      bytes.remove_prefix(n);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Read(absl::Duration timeout) override {
    char buffer[32 * 1024];
    int n = Libssh().channel_read_timeout(channel_.get(), buffer, sizeof(buffer), 0,
                                     static_cast<int>(absl::ToInt64Milliseconds(timeout)));
    if (n == SSH_ERROR) return Lost("reading from a command");
    std::string out(buffer, n > 0 ? n : 0);
    while ((n = Libssh().channel_read_nonblocking(channel_.get(), buffer, sizeof(buffer), 0)) > 0) {
      out.append(buffer, n);
    }
    int e;
    while ((e = Libssh().channel_read_nonblocking(channel_.get(), buffer, sizeof(buffer), 1)) > 0) {
      errors_.append(buffer, e);
    }
    if (n == SSH_ERROR || e == SSH_ERROR) return Lost("reading from a command");
    if (out.empty() && Libssh().channel_is_eof(channel_.get())) {
      return absl::OutOfRangeError("the command's output ended");
    }
    return out;
  }

  std::string ErrorOutput() override { return errors_; }

 private:
  absl::Status Lost(absl::string_view doing) const {
    return absl::UnavailableError(absl::StrCat("node \"", node_, "\": connection lost while ",
                                               doing, ": ", Libssh().get_error(session_)));
  }

  std::unique_ptr<ssh_channel_struct, ChannelCloser> channel_;
  std::string node_;
  ssh_session session_;
  std::string errors_;
};

}  // namespace

SshConnection::~SshConnection() { sftp_.reset(); }

absl::Status SshConnection::Lost(absl::string_view doing) const {
  return absl::UnavailableError(absl::StrCat("node \"", node_, "\": connection lost while ",
                                             doing, ": ", Libssh().get_error(session_.get())));
}

absl::StatusOr<int> SshConnection::Run(const CommandSpec& command,
                                       const OutputCallback& on_output,
                                       const absl::Notification* cancel) {
  const bool cancellable = cancel != nullptr;
  FP_ASSIGN_OR_RETURN(std::string line, RemoteCommandLine(command, cancellable));
  // Declared before the channel: closing it may still call them.
  ExitState exit;
  ssh_channel_callbacks_struct callbacks{};
  ssh_callbacks_init(&callbacks);
  callbacks.userdata = &exit;
  callbacks.channel_exit_status_function = OnExitStatus;
  callbacks.channel_exit_signal_function = OnExitSignal;
  std::unique_ptr<ssh_channel_struct, ChannelCloser> channel(Libssh().channel_new(session_.get()));
  if (channel == nullptr || Libssh().channel_open_session(channel.get()) != SSH_OK) {
    return Lost("opening a channel");
  }
  Libssh().set_channel_callbacks(channel.get(), &callbacks);
  if (Libssh().channel_request_exec(channel.get(), line.c_str()) != SSH_OK) {
    return Lost("starting a command");
  }
  bool eof_sent = false;
  if (!command.hold_stdin) {
    Libssh().channel_send_eof(channel.get());
    eof_sent = true;
  }

  std::optional<absl::Time> term_at, kill_at;
  RemotePid remote_pid;
  remote_pid.pending = cancellable;
  char buffer[32 * 1024];
  while (!Libssh().channel_is_eof(channel.get())) {
    if (cancellable && cancel->HasBeenNotified() && !term_at.has_value()) {
      // First the polite way: EOF on stdin; the agent stops its ranks on it.
      if (!eof_sent) Libssh().channel_send_eof(channel.get());
      eof_sent = true;
      term_at = absl::Now() + StdinGraceFor(command, options_.stdin_grace);
    }
    // Signals go to the command's process group, known once its pid line
    // arrives; on a loaded node that can be after the stdin grace.
    if (term_at.has_value() && !kill_at.has_value() && absl::Now() >= *term_at &&
        !remote_pid.pending) {
      FP_RETURN_IF_ERROR(SignalGroup(remote_pid.pid, "TERM"));
      kill_at = absl::Now() + options_.term_grace;
    }
    if (kill_at.has_value() && absl::Now() >= *kill_at) {
      FP_RETURN_IF_ERROR(SignalGroup(remote_pid.pid, "KILL"));
      kill_at = absl::InfiniteFuture();
    }
    int n = Libssh().channel_read_timeout(channel.get(), buffer, sizeof(buffer), 0, kPollMs);
    if (n == SSH_ERROR) return Lost("running a command");
    if (n > 0) on_output(absl::string_view(buffer, n));
    while ((n = Libssh().channel_read_nonblocking(channel.get(), buffer, sizeof(buffer), 1)) > 0) {
      absl::string_view chunk = remote_pid.Consume(absl::string_view(buffer, n));
      if (!chunk.empty()) on_output(chunk);
    }
    if (n == SSH_ERROR) return Lost("running a command");
  }
  // ssh_channel_get_exit_status waits for either (an exit-signal is
  // followed by the channel's close).
  int status = Libssh().channel_get_exit_status(channel.get());
  if (exit.status >= 0) return exit.status;
  if (status >= 0) return status;
  if (exit.signal >= 0) return 128 + exit.signal;
  return Lost("awaiting an exit status");
}

absl::StatusOr<std::unique_ptr<CommandStream>> SshConnection::OpenStream(
    const std::string& command) {
  std::unique_ptr<ssh_channel_struct, ChannelCloser> channel(Libssh().channel_new(session_.get()));
  if (channel == nullptr || Libssh().channel_open_session(channel.get()) != SSH_OK) {
    return Lost("opening a channel");
  }
  // The login shell runs it: no sh -c between, so `exec` leaves one program.
  if (Libssh().channel_request_exec(channel.get(), command.c_str()) != SSH_OK) {
    return Lost("starting a command");
  }
  return std::make_unique<SshCommandStream>(std::move(channel), node_, session_.get());
}

absl::Status SshConnection::SignalGroup(long pid, const char* signal) {
  if (pid <= 1) return absl::OkStatus();  // never started, nothing to stop
  std::string command = absl::StrCat("kill -", signal, " -- -", pid, " 2>/dev/null");
  std::unique_ptr<ssh_channel_struct, ChannelCloser> channel(Libssh().channel_new(session_.get()));
  if (channel == nullptr || Libssh().channel_open_session(channel.get()) != SSH_OK ||
      Libssh().channel_request_exec(channel.get(), command.c_str()) != SSH_OK) {
    return Lost("stopping a command");
  }
  Libssh().channel_send_eof(channel.get());
  // Its output is nothing; only its end matters.
  Libssh().channel_get_exit_status(channel.get());
  return absl::OkStatus();
}

absl::StatusOr<SftpClient*> SshConnection::Sftp() {
  if (sftp_ == nullptr) {
    FP_ASSIGN_OR_RETURN(sftp_, SftpClient::Start(session_.get(), node_));
  }
  return sftp_.get();
}

absl::StatusOr<std::string> SshConnection::ReadFile(const std::string& path) {
  FP_ASSIGN_OR_RETURN(SftpClient * sftp, Sftp());
  return sftp->ReadFile(path);
}

std::vector<absl::StatusOr<std::string>> SshConnection::ReadFiles(
    const std::vector<std::string>& paths) {
  absl::StatusOr<SftpClient*> sftp = Sftp();
  if (!sftp.ok()) return std::vector<absl::StatusOr<std::string>>(paths.size(), sftp.status());
  return (*sftp)->ReadFiles(paths);
}

absl::Status SshConnection::WriteFile(const std::string& path, absl::string_view content,
                                      uint32_t mode) {
  FP_ASSIGN_OR_RETURN(SftpClient * sftp, Sftp());
  sftp->QueueMakeDirs(ParentDirs({path}));
  return sftp->Upload({SftpUpload{path, std::string(content), mode}});
}

absl::Status SshConnection::PutFiles(const std::vector<FileToSend>& files,
                                     const std::string& remote_root) {
  std::vector<std::string> targets;
  for (const FileToSend& file : files) {
    FP_ASSIGN_OR_RETURN(std::string target, JoinUnderRoot(remote_root, file.path));
    targets.push_back(std::move(target));
  }
  FP_ASSIGN_OR_RETURN(SftpClient * sftp, Sftp());
  sftp->QueueMakeDirs(ParentDirs(targets));
  // One stream, each file read as it is sent: memory and the pipeline do
  // not depend on the size of the tree.
  std::vector<SftpUpload> uploads;
  uploads.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    uploads.push_back(SftpUpload{std::move(targets[i]), "", files[i].mode, files[i].local_path});
  }
  return sftp->Upload(uploads);
}

absl::Status SshConnection::RemoveFiles(const std::string& remote_root,
                                        const std::vector<std::string>& paths) {
  std::vector<std::string> targets;
  for (const std::string& path : paths) {
    FP_ASSIGN_OR_RETURN(std::string target, JoinUnderRoot(remote_root, path));
    targets.push_back(std::move(target));
  }
  if (targets.empty()) return absl::OkStatus();
  FP_ASSIGN_OR_RETURN(SftpClient * sftp, Sftp());
  return sftp->Remove(targets);
}

}  // namespace fleetplan
