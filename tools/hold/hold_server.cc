#include "tools/hold/hold_server.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/synchronization/notification.h"
#include "tools/hold/unix_socket.h"
#include "tools/protocol/hold_wire.h"
#include "tools/protocol/session_message.h"
#include "tools/util/overloaded.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

// The largest number of files one put may announce.
constexpr uint64_t kMaxPutFiles = 1u << 20;
// How long the first frame may take to arrive.
constexpr absl::Duration kAttachTimeout = absl::Seconds(10);
// How long a relayed stream waits on the node before looking at the socket.
constexpr absl::Duration kRelayPoll = absl::Milliseconds(2);
// How long the agent's tree or workdir check may take here: the command
// bounds it with its own step timeout (and leaves, ending this connection,
// when that passes); this bound only keeps a node's agent that never
// answers from holding the node for good.
constexpr absl::Duration kAgentCheckBound = absl::Hours(6);

// One command's socket connection: frames in, frames out.
class Wire {
 public:
  explicit Wire(int fd) : stream_(fd) {}

  // The next frame within `timeout`: DeadlineExceeded after it, OutOfRange
  // once the command closed its end, DataLoss for a broken frame.
  absl::StatusOr<Frame> Next(absl::Duration timeout = absl::InfiniteDuration()) {
    absl::Time deadline = absl::Now() + timeout;
    for (bool looked = false;; looked = true) {
      absl::StatusOr<std::optional<Frame>> next = reader_.Next();
      if (!next.ok()) return next.status();
      if (next->has_value()) return **next;
      absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
      // The socket is looked at once even with no time left.
      if (left == absl::ZeroDuration() && looked) {
        return absl::DeadlineExceededError("no request in time");
      }
      FP_ASSIGN_OR_RETURN(std::string bytes, stream_.Read(std::min(left, absl::Seconds(1))));
      reader_.Feed(bytes);
    }
  }
  // A frame if one is whole already or arrives within `timeout`; nullopt
  // otherwise.
  absl::StatusOr<std::optional<Frame>> Poll(absl::Duration timeout) {
    absl::StatusOr<Frame> frame = Next(timeout);
    if (absl::IsDeadlineExceeded(frame.status())) return std::nullopt;
    if (!frame.ok()) return frame.status();
    return *std::move(frame);
  }
  absl::Status Send(FrameType type, const std::vector<std::string>& fields = {}) {
    return stream_.Write(EncodeFrame(type, fields));
  }
  absl::Status SendRaw(const std::string& bytes) { return stream_.Write(bytes); }
  int fd() const { return stream_.fd(); }

 private:
  SocketStream stream_;
  FrameReader reader_;
};

// An eventfd one thread signals and another waits on beside a socket.
class EventFd {
 public:
  EventFd() : fd_(eventfd(0, EFD_CLOEXEC)) {}
  ~EventFd() {
    if (fd_ >= 0) close(fd_);
  }
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;
  void Signal() {
    uint64_t one = 1;
    ssize_t ignored = write(fd_, &one, sizeof(one));  // a counter: it cannot be full here
    (void)ignored;
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Waits until `socket` has bytes (or its end) to read: true; false once
// `stop` was signalled (or cannot be waited on) first.
bool ReadableBefore(int socket, int stop) {
  if (stop < 0) return false;
  pollfd fds[2] = {{socket, POLLIN, 0}, {stop, POLLIN, 0}};
  while (poll(fds, 2, -1) < 0) {
    if (errno != EINTR) return false;
  }
  return (fds[1].revents & POLLIN) == 0;
}

// `paths` relative to `root`, as absolute paths.
std::vector<std::string> Under(const std::string& root, const std::vector<std::string>& paths) {
  std::vector<std::string> absolute;
  for (const std::string& path : paths) {
    absolute.push_back(absl::StrCat(absl::StripSuffix(root, "/"), "/", path));
  }
  return absolute;
}

// ok, or error {message}.
absl::Status Answer(Wire& wire, const absl::Status& status) {
  if (status.ok()) return wire.Send(FrameType::kOk);
  return wire.Send(FrameType::kError, {std::string(status.message())});
}

// Serves the requests of one attached command on `node`. False when the
// node's connection broke (it is not kept then).
class Session {
 public:
  Session(Wire& wire, HeldNode& node, const HoldAttach& attach, const std::string& spool)
      : wire_(wire), node_(node), attach_(attach), spool_(spool) {}

  bool Serve() {
    while (true) {
      absl::StatusOr<Frame> request = wire_.Next();
      if (!request.ok()) return healthy_;  // the command left (or broke its stream)
      absl::Status served = Dispatch(*request);
      if (!served.ok() || !healthy_) return healthy_;
    }
  }

 private:
  absl::Status Dispatch(const Frame& frame) {
    if (frame.type == FrameType::kOpenStream) return Relay(frame);
    absl::StatusOr<SessionRequest> request = ParseSessionRequest(frame);
    if (!request.ok()) return Refuse(request.status().message());
    return std::visit(
        Overloaded{
            [this](const ReadRequest& read) { return Read(read); },
            [this](const WriteRequest& write) {
              absl::Status written = Noted(node_.WriteFile(write.path, write.content, write.mode));
              node_.Changed({write.path});
              return Answer(wire_, written);
            },
            [this](const RemoveRequest& remove) {
              absl::Status removed = Noted(node_.RemoveFiles(remove.root, remove.paths));
              node_.Changed(Under(remove.root, remove.paths));
              return Answer(wire_, removed);
            },
            [this](const PutRequest& put) { return Put(put); },
            [this](const RunRequest& run) { return Run(run); },
            [this](const VerifyRequest& verify) {
              return AgentCheck([&](AgentSessionConnection& agent, std::string* output) {
                return agent.VerifyTree(verify.root, verify.manifest, verify.record_path,
                                        verify.record, kAgentCheckBound, output);
              });
            },
            [this](const WorkdirRequest& workdir) {
              return AgentCheck([&](AgentSessionConnection& agent, std::string* output) {
                return agent.CheckWorkdir(workdir.workdir, workdir.state_dir, workdir.bytes,
                                          kAgentCheckBound, output);
              });
            },
        },
        *request);
  }

  // The agent's own checks (verify, workdir), by the node's agent: the one
  // that served at the attach, or a new one where the sync replaced its
  // file. An error answer where none serves now.
  using Check = std::function<absl::StatusOr<int>(AgentSessionConnection&, std::string*)>;
  absl::Status AgentCheck(const Check& check) {
    node_.UseAgent(attach_.agent_path, absl::Seconds(attach_.connect_timeout_s));
    if (node_.agent() == nullptr) {
      return wire_.SendRaw(EncodeStatusFrame(absl::FailedPreconditionError(absl::StrCat(
          "no agent at ", attach_.agent_path, " serves node '", attach_.node, "' now"))));
    }
    std::string output;
    absl::StatusOr<int> status = check(*node_.agent(), &output);
    if (!output.empty()) FP_RETURN_IF_ERROR(wire_.Send(FrameType::kOutput, {output}));
    if (!status.ok()) return wire_.SendRaw(EncodeStatusFrame(Noted(status.status())));
    return wire_.Send(FrameType::kStatus, {absl::StrCat(*status)});
  }

  absl::Status Refuse(absl::string_view why) {
    wire_.Send(FrameType::kError, {std::string(why)}).IgnoreError();  // it closes anyway
    return absl::InvalidArgumentError(why);
  }

  // A node's Unavailable means its connection is gone: not kept.
  absl::Status Noted(absl::Status status) {
    if (absl::IsUnavailable(status)) healthy_ = false;
    return status;
  }

  absl::Status Read(const ReadRequest& request) {
    ContentsAnswer answer;
    for (absl::StatusOr<std::string>& content : node_.ReadFiles(request.paths)) {
      if (content.ok()) {
        answer.files.push_back({FileContent::Kind::kOk, *std::move(content)});
      } else {
        Noted(content.status()).IgnoreError();  // kept in healthy_
        answer.files.push_back({absl::IsNotFound(content.status()) ? FileContent::Kind::kMissing
                                                                   : FileContent::Kind::kError,
                                std::string(content.status().message())});
      }
    }
    return wire_.SendRaw(EncodeContents(answer));
  }

  // put {root, count}, count × (file {path, mode, size}, data...): into the
  // spool, then through the node's connection; the spool emptied after.
  absl::Status Put(const PutRequest& request) {
    if (request.count > kMaxPutFiles) return Refuse("a put of more files than a holder takes");
    std::string folder = absl::StrCat(spool_, "/spool.XXXXXX");
    if (mkdtemp(folder.data()) == nullptr) return Refuse("cannot make a spool folder");
    std::vector<FileToSend> files;
    absl::Status local, stream = ReceiveFiles(request.count, folder, &files, &local);
    if (stream.ok() && local.ok()) {
      local = Noted(node_.PutFiles(files, request.root));
      std::vector<std::string> paths;
      for (const FileToSend& file : files) paths.push_back(file.path);
      node_.Changed(Under(request.root, paths));
    }
    for (const FileToSend& file : files) unlink(file.local_path.c_str());
    rmdir(folder.c_str());
    if (!stream.ok()) return Refuse(stream.message());
    return Answer(wire_, local);
  }

  absl::Status ReceiveFiles(uint64_t count, const std::string& folder,
                            std::vector<FileToSend>* files, absl::Status* local) {
    for (uint64_t i = 0; i < count; ++i) {
      FP_ASSIGN_OR_RETURN(Frame frame, wire_.Next(absl::Seconds(120)));
      FP_ASSIGN_OR_RETURN(PutFileHeader header, ParsePutFileHeader(frame));
      FileToSend& file = files->emplace_back();
      file.local_path = absl::StrCat(folder, "/", i);
      file.path = header.path;
      file.mode = header.mode;
      file.size = header.size;
      if (file.path.empty() && local->ok()) {
        *local = absl::NotFoundError("a file could not be read on this machine");
      }
      int fd = open(file.local_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      for (uint64_t left = header.size; left > 0;) {
        FP_ASSIGN_OR_RETURN(Frame data, wire_.Next(absl::Seconds(120)));
        if (data.type != FrameType::kData || data.fields.size() != 1 ||
            data.fields[0].size() > left) {
          if (fd >= 0) close(fd);
          return absl::InvalidArgumentError("a file's data of another shape");
        }
        const std::string& bytes = data.fields[0];
        if (fd < 0 || write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
          if (local->ok()) *local = absl::InternalError("cannot spool a file on this machine");
        }
        left -= bytes.size();
      }
      if (fd >= 0) close(fd);
    }
    return absl::OkStatus();
  }

  // run {command, cwd, hold_stdin, graces, NAME=VALUE...}: output frames
  // as it prints, then status; a cancel (or the command leaving) while it
  // runs stops it.
  absl::Status Run(const RunRequest& request) {
    CommandSpec command;
    command.command = request.command;
    command.cwd = request.cwd;
    command.hold_stdin = request.hold_stdin;
    command.env = request.env;
    absl::Notification cancel;
    absl::Status watched;
    // The watcher sleeps until the command's socket speaks or the command
    // ended (`ended` is written then): no looks on a timer while the node
    // works, and no wait for the next look once it is done.
    EventFd ended;
    std::thread watcher([&] {
      while (true) {
        absl::StatusOr<std::optional<Frame>> frame = wire_.Poll(absl::ZeroDuration());
        if (frame.ok() && !frame->has_value()) {
          if (!ReadableBefore(wire_.fd(), ended.fd())) return;
          continue;
        }
        if (!frame.ok() || (*frame)->type != FrameType::kCancel) {
          watched = frame.ok() ? absl::InvalidArgumentError("a request while a command runs")
                               : frame.status();
        }
        if (!cancel.HasBeenNotified()) cancel.Notify();
        if (!watched.ok()) return;
      }
    });
    absl::Status sent;
    absl::StatusOr<int> status = node_.Run(
        command,
        [&](absl::string_view chunk) {
          if (sent.ok()) sent = wire_.Send(FrameType::kOutput, {std::string(chunk)});
        },
        &cancel);
    ended.Signal();
    watcher.join();
    if (!watched.ok()) return watched;
    FP_RETURN_IF_ERROR(sent);
    if (!status.ok()) return wire_.SendRaw(EncodeStatusFrame(Noted(status.status())));
    return wire_.Send(FrameType::kStatus, {absl::StrCat(*status)});
  }

  // open {command}: the socket carries the command's stream from now on.
  absl::Status Relay(const Frame& request) {
    if (request.fields.size() != 1) return Refuse("an open of another shape");
    absl::StatusOr<std::unique_ptr<CommandStream>> stream = node_.OpenStream(request.fields[0]);
    if (!stream.ok()) {
      Noted(stream.status()).IgnoreError();
      wire_.Send(FrameType::kStatus, {"1", std::string(stream.status().message())}).IgnoreError();
      return absl::CancelledError("no stream");  // this connection is done
    }
    while (true) {
      absl::StatusOr<std::string> out = (*stream)->Read(kRelayPoll);
      if (!out.ok()) {
        Noted(absl::IsOutOfRange(out.status()) ? absl::OkStatus() : out.status()).IgnoreError();
        std::string errors = (*stream)->ErrorOutput();
        if (!absl::IsOutOfRange(out.status())) absl::StrAppend(&errors, out.status().message());
        wire_.Send(FrameType::kStatus, {"0", errors}).IgnoreError();
        return absl::CancelledError("the stream ended");
      }
      if (!out->empty()) FP_RETURN_IF_ERROR(wire_.Send(FrameType::kOutput, {*out}));
      absl::StatusOr<std::optional<Frame>> in = wire_.Poll(absl::ZeroDuration());
      if (!in.ok()) return in.status();  // the command left: its stream ends with it
      if (!in->has_value()) continue;
      if ((*in)->type != FrameType::kData || (*in)->fields.size() != 1) {
        return absl::InvalidArgumentError("a stream's input of another shape");
      }
      FP_RETURN_IF_ERROR(Noted((*stream)->Write((*in)->fields[0])));
    }
  }

  Wire& wire_;
  HeldNode& node_;
  const HoldAttach& attach_;
  const std::string& spool_;
  bool healthy_ = true;
};

}  // namespace

bool HoldServer::Serve(int fd) {
  Wire wire(fd);
  // Nothing is read from a process of another user.
  if (absl::Status peer = CheckPeerUid(fd, uid_); !peer.ok()) {
    std::fprintf(stderr, "fleetplan hold: refused: %s\n", std::string(peer.message()).c_str());
    return false;
  }
  absl::StatusOr<Frame> first = wire.Next(kAttachTimeout);
  if (!first.ok()) return false;
  if (first->type == FrameType::kQuit) {
    bool mine = first->fields.size() == 2 && first->fields[0] == kHoldGreeting &&
                first->fields[1] == identity_;
    Answer(wire, mine ? absl::OkStatus()
                      : absl::AbortedError("this holder was made for other connections"))
        .IgnoreError();
    return mine;
  }
  absl::StatusOr<HoldAttach> attach = ParseAttach(*first);
  if (!attach.ok()) {
    wire.SendRaw(EncodeStatusFrame(absl::AbortedError(attach.status().message()))).IgnoreError();
    return false;
  }
  auto key = set_.nodes.find(attach->node);
  if (key == set_.nodes.end() || key->second.identity != attach->identity) {
    // Another address, user or key than the holder connects with.
    wire.SendRaw(EncodeStatusFrame(absl::AbortedError(absl::StrCat(
                     "the connection holder keeps no connection to node '", attach->node,
                     "' as this command would make it"))))
        .IgnoreError();
    return false;
  }
  TransportOptions options;
  options.connect_timeout_s = attach->connect_timeout_s;
  options.accept_new_host_keys = attach->accept_new_host_keys;
  absl::StatusOr<std::unique_ptr<HeldNode>> node = pool_.Take(attach->node, options);
  if (!node.ok()) {
    wire.SendRaw(EncodeStatusFrame(node.status())).IgnoreError();
    return false;
  }
  (*node)->UseAgent(attach->agent_path, absl::Seconds(attach->connect_timeout_s));
  // The hello says whether the node's agent serves: the command then asks
  // it for the agent's checks here rather than start an agent of its own.
  const char* served_by = (*node)->agent() != nullptr ? kHoldAgentServes : kHoldPlain;
  if (!wire.Send(FrameType::kHello, {kHoldGreeting, served_by}).ok()) {
    pool_.GiveBack(attach->node, *std::move(node));
    return false;
  }
  if (Session(wire, **node, *attach, spool_).Serve()) {
    pool_.GiveBack(attach->node, *std::move(node));
  }
  return false;
}

}  // namespace fleetplan
