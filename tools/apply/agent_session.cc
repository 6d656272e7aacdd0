#include "tools/apply/agent_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tools/protocol/agent_command.h"
#include "tools/protocol/hold_wire.h"
#include "tools/util/shell_quote.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// How often a running command looks at its cancel.
constexpr absl::Duration kPoll = absl::Milliseconds(20);

}  // namespace

absl::StatusOr<std::unique_ptr<AgentSessionConnection>> AgentSessionConnection::Open(
    std::unique_ptr<Connection>& base, const std::string& node, const std::string& agent_path,
    absl::Duration hello_timeout, SessionRunOptions options) {
  // The agent is started on `base`, which the session keeps once it greeted.
  Connection* node_connection = base.get();
  AgentSession agent_session;
  agent_session.idle_timeout = options.agent_idle_timeout;
  SessionEndpoint endpoint;
  endpoint.open = [node_connection, command = AgentCommandLine(agent_path, agent_session)] {
    return node_connection->OpenStream(absl::StrCat("exec ", command));
  };
  endpoint.greeting = kSessionGreeting;
  endpoint.name = agent_path;
  endpoint.session = "the agent's apply session";
  endpoint.open_command = [node_connection](const std::string& command) {
    return node_connection->OpenStream(command);
  };
  std::unique_ptr<AgentSessionConnection> session(
      new AgentSessionConnection(std::move(endpoint), node, hello_timeout, options));
  FP_RETURN_IF_ERROR(session->Start());
  session->base_ = std::move(base);
  return session;
}

absl::StatusOr<std::unique_ptr<AgentSessionConnection>> AgentSessionConnection::Attach(
    SessionEndpoint endpoint, const std::string& node, absl::Duration hello_timeout,
    SessionRunOptions options) {
  options.restart_after_idle = absl::InfiniteDuration();  // it does not leave when idle
  std::unique_ptr<AgentSessionConnection> session(
      new AgentSessionConnection(std::move(endpoint), node, hello_timeout, options));
  FP_RETURN_IF_ERROR(session->Start());
  return session;
}

absl::Status AgentSessionConnection::Start() {
  stream_.reset();  // an earlier agent ends with its input
  reader_ = FrameReader();
  pending_.clear();
  broken_ = absl::OkStatus();
  ended_ = false;
  FP_ASSIGN_OR_RETURN(stream_, endpoint_.open());
  absl::StatusOr<Frame> hello = Receive(hello_timeout_);
  auto refused = [&](absl::string_view said) {
    std::string errors(absl::StripAsciiWhitespace(stream_->ErrorOutput()));
    return absl::FailedPreconditionError(absl::StrCat("node '", node_, "': ", endpoint_.name,
                                                      " serves no apply session (", said,
                                                      errors.empty() ? "" : ": ", errors, ")"));
  };
  if (!hello.ok()) {
    // It ended (missing, or an agent without the flag): what it said.
    if (!ended_ && absl::IsUnavailable(hello.status())) return hello.status();
    return refused(ended_ ? "it ended" : hello.status().message());
  }
  if (hello->type == FrameType::kError && hello->fields.size() == 2) {
    return ParseStatusFrame(*hello);  // the far end's refusal, as it said it
  }
  // The holder's hello says, second, whether the node's agent serves.
  if (hello->type != FrameType::kHello || hello->fields.empty() || hello->fields.size() > 2 ||
      hello->fields[0] != endpoint_.greeting) {
    return refused(
        absl::StrCat("it greeted with something else than \"", endpoint_.greeting, "\""));
  }
  agent_behind_ = hello->fields.size() == 2 && hello->fields[1] == kHoldAgentServes;
  return absl::OkStatus();
}

bool AgentSessionConnection::Serving() {
  if (!broken_.ok() || stream_ == nullptr) return false;
  if (!pending_.empty() || reader_.pending() != 0) return false;
  absl::StatusOr<std::string> bytes = stream_->Read(absl::ZeroDuration());
  if (bytes.ok() && bytes->empty()) return true;
  Broken("waiting for a request", bytes.ok() ? absl::DataLossError("bytes nobody asked for")
                                             : bytes.status())
      .IgnoreError();  // kept in broken_
  return false;
}

std::unique_ptr<Connection> AgentSessionConnection::ReleaseBase() {
  stream_.reset();
  return std::move(base_);
}

absl::Status AgentSessionConnection::Begin() {
  // The agent leaves after kSessionIdleTimeout without a request (apply
  // may be gone without a word); a session idle for half of it starts a
  // fresh agent rather than risk talking to one on its way out.
  if (broken_.ok() && absl::Now() - last_heard_ > options_.restart_after_idle) {
    absl::Status started = Start();
    if (!started.ok()) return Broken("starting the agent again after a pause", started);
  }
  return broken_;
}

absl::Status AgentSessionConnection::Broken(absl::string_view doing, const absl::Status& why) {
  if (broken_.ok()) {
    std::string errors(
        absl::StripAsciiWhitespace(stream_ != nullptr ? stream_->ErrorOutput() : ""));
    broken_ = absl::UnavailableError(
        absl::StrCat("node '", node_, "': ", endpoint_.session, " broke while ", doing, ": ",
                     why.message(), errors.empty() ? "" : " (", errors, errors.empty() ? "" : ")"));
  }
  return broken_;
}

absl::Status AgentSessionConnection::Send(FrameType type, const std::vector<std::string>& fields) {
  return Queue(EncodeFrame(type, fields));
}

absl::Status AgentSessionConnection::Queue(const std::string& frame) {
  if (!broken_.ok()) return broken_;
  // A request's frames leave together, when its answer is awaited.
  pending_ += frame;
  return pending_.size() >= kSessionChunk ? Flush() : absl::OkStatus();
}

absl::Status AgentSessionConnection::Flush() {
  if (!broken_.ok()) return broken_;
  absl::Status sent = stream_->Write(pending_);
  pending_.clear();
  return sent.ok() ? sent : Broken("sending a request", sent);
}

absl::StatusOr<Frame> AgentSessionConnection::Receive(absl::Duration timeout) {
  if (!pending_.empty()) FP_RETURN_IF_ERROR(Flush());
  if (!broken_.ok()) return broken_;
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<std::optional<Frame>> next = reader_.Next();
    if (!next.ok()) return Broken("reading an answer", next.status());
    if (next->has_value()) {
      last_heard_ = absl::Now();
      return **next;
    }
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError("no answer in time");
    }
    absl::StatusOr<std::string> bytes = stream_->Read(std::min(left, absl::Seconds(1)));
    if (absl::IsOutOfRange(bytes.status())) {
      ended_ = true;
      return Broken("reading an answer", absl::DataLossError("the agent ended"));
    }
    if (!bytes.ok()) return Broken("reading an answer", bytes.status());
    reader_.Feed(*bytes);
  }
}

absl::StatusOr<Frame> AgentSessionConnection::ReceiveAnswerFrame(absl::string_view doing,
                                                                 absl::Duration timeout) {
  absl::StatusOr<Frame> answer = Receive(timeout);
  if (absl::IsDeadlineExceeded(answer.status())) {
    Broken(doing, absl::DeadlineExceededError(
                      absl::StrCat("no answer within ", absl::FormatDuration(timeout))))
        .IgnoreError();  // kept in broken_
    return absl::DeadlineExceededError(broken_.message());
  }
  return answer;
}

absl::Status AgentSessionConnection::ReceiveAnswer(absl::string_view doing) {
  FP_ASSIGN_OR_RETURN(Frame answer, ReceiveAnswerFrame(doing, options_.reply_timeout));
  if (answer.type == FrameType::kOk) return absl::OkStatus();
  if (answer.type == FrameType::kError && answer.fields.size() == 1) {
    return absl::InternalError(absl::StrCat(doing, ": ", answer.fields[0]));
  }
  if (answer.type == FrameType::kError && answer.fields.size() == 2) {
    return Broken(doing, ParseStatusFrame(answer));  // the far end's own failure
  }
  return Broken(doing, absl::DataLossError("an answer of another kind"));
}

absl::StatusOr<int> AgentSessionConnection::ReceiveStatus(const OutputCallback& on_output,
                                                          const absl::Notification* cancel,
                                                          absl::Duration timeout) {
  bool cancel_sent = false;
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (cancel != nullptr && !cancel_sent && cancel->HasBeenNotified()) {
      FP_RETURN_IF_ERROR(Send(FrameType::kCancel));
      cancel_sent = true;
    }
    absl::Duration left = deadline - absl::Now();
    absl::StatusOr<Frame> frame =
        Receive(cancel_sent || cancel == nullptr ? left : std::min(left, kPoll));
    if (absl::IsDeadlineExceeded(frame.status())) {
      if (absl::Now() < deadline) continue;  // a look at the cancel
      Broken("awaiting a command's end", absl::DeadlineExceededError(absl::StrCat(
                                             "no answer within ", absl::FormatDuration(timeout))))
          .IgnoreError();  // kept in broken_
      return absl::DeadlineExceededError(broken_.message());
    }
    if (!frame.ok()) return frame.status();
    if (frame->type == FrameType::kOutput && frame->fields.size() == 1) {
      if (on_output) on_output(frame->fields[0]);
      continue;
    }
    if (frame->type == FrameType::kError && frame->fields.size() == 2) {
      return Broken("running a command", ParseStatusFrame(*frame));  // the far end's own failure
    }
    if (frame->type == FrameType::kStatus) {
      absl::StatusOr<uint64_t> status = FrameNumber(*frame, 0, "a command's exit status");
      if (!status.ok()) return Broken("running a command", status.status());
      return static_cast<int>(*status);
    }
    return Broken("running a command", absl::DataLossError("an answer of another kind"));
  }
}

absl::StatusOr<int> AgentSessionConnection::Run(const CommandSpec& command,
                                                const OutputCallback& on_output,
                                                const absl::Notification* cancel) {
  RunRequest run{command.command, command.cwd, command.hold_stdin, options_.stdin_grace,
                 options_.term_grace, {}};
  for (const auto& [name, value] : command.env) {
    if (name.empty() || absl::StrContains(name, '=')) {
      return absl::InvalidArgumentError(
          absl::StrCat("environment name \"", name, "\" is not a shell identifier"));
    }
    run.env.emplace_back(name, value);
  }
  FP_RETURN_IF_ERROR(Begin());
  FP_RETURN_IF_ERROR(Send(run));
  return ReceiveStatus(on_output, cancel);
}

absl::StatusOr<std::string> AgentSessionConnection::ReadFile(const std::string& path) {
  return std::move(ReadFiles({path})[0]);
}

std::vector<absl::StatusOr<std::string>> AgentSessionConnection::ReadFiles(
    const std::vector<std::string>& paths) {
  std::vector<absl::StatusOr<std::string>> contents;
  absl::Status sent = Begin();
  if (sent.ok()) sent = Send(ReadRequest{paths});
  absl::StatusOr<Frame> frame =
      sent.ok() ? ReceiveAnswerFrame("reading files", options_.reply_timeout) : sent;
  absl::StatusOr<ContentsAnswer> answer =
      frame.ok() ? ParseContents(*frame) : absl::StatusOr<ContentsAnswer>(frame.status());
  if (frame.ok() && (!answer.ok() || answer->files.size() != paths.size())) {
    answer = Broken("reading files", absl::DataLossError("an answer of another kind"));
  }
  if (!answer.ok()) return std::vector<absl::StatusOr<std::string>>(paths.size(), answer.status());
  for (size_t i = 0; i < paths.size(); ++i) {
    FileContent& file = answer->files[i];
    if (file.kind == FileContent::Kind::kOk) {
      contents.push_back(std::move(file.text));
    } else if (file.kind == FileContent::Kind::kMissing) {
      contents.push_back(absl::NotFoundError(file.text));
    } else {
      contents.push_back(absl::InternalError(absl::StrCat("reading ", paths[i], ": ", file.text)));
    }
  }
  return contents;
}

absl::Status AgentSessionConnection::WriteFile(const std::string& path, absl::string_view content,
                                               uint32_t mode) {
  FP_RETURN_IF_ERROR(Begin());
  FP_RETURN_IF_ERROR(Send(WriteRequest{path, mode, std::string(content)}));
  return ReceiveAnswer(absl::StrCat("writing ", path));
}

absl::Status AgentSessionConnection::SendFile(const FileToSend& file) {
  int fd = open(file.local_path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd < 0 || fstat(fd, &info) != 0) {
    absl::Status missing =
        absl::NotFoundError(absl::StrCat(file.local_path, ": ", strerror(errno)));
    if (fd >= 0) close(fd);
    // A header the agent refuses keeps the stream in step.
    FP_RETURN_IF_ERROR(Queue(EncodePutFileHeader({"", file.mode, 0})));
    return missing;
  }
  uint64_t size = info.st_size;
  absl::Status sent = Queue(EncodePutFileHeader({file.path, file.mode, size}));
  std::string chunk;
  absl::Status local;
  for (uint64_t left = size; left > 0 && sent.ok();) {
    chunk.resize(std::min<uint64_t>(left, kSessionChunk));
    ssize_t n = local.ok() ? read(fd, chunk.data(), chunk.size()) : 0;
    if (n <= 0) {
      // It shrank or broke while read: what was promised still goes, and
      // the sync fails with why.
      if (local.ok())
        local = absl::DataLossError(absl::StrCat(file.local_path, ": changed while sent"));
      std::fill(chunk.begin(), chunk.end(), '\0');
      n = chunk.size();
    }
    chunk.resize(n);
    sent = Send(FrameType::kData, {chunk});
    left -= n;
  }
  close(fd);
  return sent.ok() ? local : sent;
}

absl::Status AgentSessionConnection::PutFiles(const std::vector<FileToSend>& files,
                                              const std::string& remote_root) {
  if (files.empty()) return absl::OkStatus();
  FP_RETURN_IF_ERROR(Begin());
  FP_RETURN_IF_ERROR(Send(PutRequest{remote_root, files.size()}));
  absl::Status local;
  for (const FileToSend& file : files) {
    absl::Status sent = SendFile(file);
    if (!broken_.ok()) return broken_;
    if (local.ok()) local = sent;
  }
  absl::Status answer = ReceiveAnswer(absl::StrCat("sending files to ", remote_root));
  return local.ok() ? answer : local;
}

absl::Status AgentSessionConnection::RemoveFiles(const std::string& remote_root,
                                                 const std::vector<std::string>& paths) {
  if (paths.empty()) return absl::OkStatus();
  FP_RETURN_IF_ERROR(Begin());
  FP_RETURN_IF_ERROR(Send(RemoveRequest{remote_root, paths}));
  return ReceiveAnswer(absl::StrCat("removing files under ", remote_root));
}

absl::StatusOr<int> AgentSessionConnection::VerifyTree(
    const std::string& root, const std::string& manifest_path, const std::string& record_path,
    const std::string& record_content, absl::Duration timeout, std::string* output) {
  FP_RETURN_IF_ERROR(Begin());
  FP_RETURN_IF_ERROR(Send(VerifyRequest{root, manifest_path, record_path, record_content}));
  return ReceiveStatus([output](absl::string_view chunk) { absl::StrAppend(output, chunk); },
                       nullptr, timeout);
}

absl::StatusOr<int> AgentSessionConnection::CheckWorkdir(const std::string& workdir,
                                                         const std::string& state_dir,
                                                         uint64_t bytes, absl::Duration timeout,
                                                         std::string* output) {
  FP_RETURN_IF_ERROR(Begin());
  FP_RETURN_IF_ERROR(Send(WorkdirRequest{workdir, state_dir, bytes}));
  return ReceiveStatus([output](absl::string_view chunk) { absl::StrAppend(output, chunk); },
                       nullptr, timeout);
}

}  // namespace fleetplan
