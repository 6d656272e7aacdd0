#ifndef FLEETPLAN_TOOLS_APPLY_AGENT_SESSION_H_
#define FLEETPLAN_TOOLS_APPLY_AGENT_SESSION_H_

// Apply's side of the launch agent's apply session
// (tools/agent/apply_session.h, tools/protocol/session_wire.h): once a node
// holds an agent that speaks it, every read, write, upload, removal and
// command of the apply goes through that one agent process over one
// command stream of the node's connection (one ssh channel), instead of a
// program (a shell, an SFTP server, df, mkdir, mv ...) started on the node
// for each. The sync's workdir and tree checks run inside the agent.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/protocol/session_message.h"
#include "tools/protocol/session_wire.h"

namespace fleetplan {

// How long a command run through the session may take to end after a
// cancel closed its stdin, then after SIGTERM (as the ssh transport's).
struct SessionRunOptions {
  absl::Duration stdin_grace = absl::Seconds(10);
  absl::Duration term_grace = absl::Seconds(5);
  // How long a read, write, upload or removal may wait for its answer (as
  // the SFTP path's replies); past it the session breaks.
  absl::Duration reply_timeout = absl::Seconds(120);
  // A session idle this long starts a fresh agent before its next request
  // (the agent leaves after kSessionIdleTimeout without one).
  absl::Duration restart_after_idle = kSessionIdleTimeout / 2;
  // The agent's own idle timeout (`session --idle-timeout`): the
  // connection holder's sessions last as long as it holds the node.
  absl::Duration agent_idle_timeout = kSessionIdleTimeout;
};

// Where a session's far end is when it is not an agent started on the
// node: how to reach it (a fresh stream each time), what it greets with, and
// how the session's Connection opens a command stream beside it.
struct SessionEndpoint {
  std::function<absl::StatusOr<std::unique_ptr<CommandStream>>()> open;
  std::string greeting;
  std::string name;     // for errors: "the connection holder"
  std::string session;  // for errors: "the connection holder's session"
  std::function<absl::StatusOr<std::unique_ptr<CommandStream>>(const std::string& command)>
      open_command;
};

class AgentSessionConnection : public Connection {
 public:
  // Starts `agent_path session` on `base`'s node and waits up to
  // `hello_timeout` for its greeting. FailedPrecondition when that agent
  // cannot serve one (missing, or another version: what it said);
  // Unimplemented when the transport has no command streams; Unavailable
  // when the connection broke. On success the session takes `base` (kept
  // for its command streams); on failure `base` is left as it was.
  static absl::StatusOr<std::unique_ptr<AgentSessionConnection>> Open(
      std::unique_ptr<Connection>& base, const std::string& node, const std::string& agent_path,
      absl::Duration hello_timeout, SessionRunOptions options = {});

  // A session with `endpoint` (the connection holder, tools/hold) for
  // `node`, never restarted: an error answer instead of the greeting is
  // returned as it says (its code and message); FailedPrecondition for
  // another greeting; what `endpoint.open` returned when it failed.
  static absl::StatusOr<std::unique_ptr<AgentSessionConnection>> Attach(
      SessionEndpoint endpoint, const std::string& node, absl::Duration hello_timeout,
      SessionRunOptions options = {});

  // Unavailable naming the node once the session broke (then for good).
  absl::StatusOr<int> Run(const CommandSpec& command, const OutputCallback& on_output,
                          const absl::Notification* cancel) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  // One request for all of them.
  std::vector<absl::StatusOr<std::string>> ReadFiles(
      const std::vector<std::string>& paths) override;
  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override;
  // Each file in data frames as it is read here.
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& remote_root) override;
  absl::Status RemoveFiles(const std::string& remote_root,
                           const std::vector<std::string>& paths) override;
  ~AgentSessionConnection() override { stream_.reset(); }

  // False once the session broke or its agent ended, looked at without
  // waiting (bytes nobody asked for break it): the connection holder
  // starts another agent then, before a command's request meets the end.
  bool Serving();

  // For an Attach: the connection holder said the node's agent serves this
  // session, the tree and workdir checks too (no agent of the command's
  // own is needed then).
  bool agent_behind() const { return agent_behind_; }

  // Ends the agent (with its input) and gives back the node's connection
  // it ran on (Open's `base`); null for an Attach.
  std::unique_ptr<Connection> ReleaseBase();

  absl::StatusOr<std::unique_ptr<CommandStream>> OpenStream(const std::string& command) override {
    return endpoint_.open_command(command);
  }

  // The tree check after a sync, in the agent (`verify-tree`'s exit
  // status and report), recording `record_content` at `record_path`
  // (empty: nothing) when it passed. DeadlineExceeded (and the session
  // broken) when it takes longer than `timeout`.
  absl::StatusOr<int> VerifyTree(const std::string& root, const std::string& manifest_path,
                                 const std::string& record_path, const std::string& record_content,
                                 absl::Duration timeout, std::string* output);

  // The workdir check before a sync, in the agent: its check line in
  // `output`, 1 when it failed. Bound as VerifyTree.
  absl::StatusOr<int> CheckWorkdir(const std::string& workdir, const std::string& state_dir,
                                   uint64_t bytes, absl::Duration timeout, std::string* output);

 private:
  AgentSessionConnection(SessionEndpoint endpoint, std::string node, absl::Duration hello_timeout,
                         SessionRunOptions options)
      : endpoint_(std::move(endpoint)),
        node_(std::move(node)),
        hello_timeout_(hello_timeout),
        options_(options) {}

  // Opens a stream to the endpoint and reads its greeting.
  absl::Status Start();
  // Before a request: a fresh agent after a pause; the session's error
  // once it broke.
  absl::Status Begin();

  // Adds a frame to the request being sent; Receive sends it.
  absl::Status Send(FrameType type, const std::vector<std::string>& fields = {});
  // Queues a request's frame (session_message.h); sent with the others.
  absl::Status Send(const SessionRequest& request) { return Queue(EncodeSessionRequest(request)); }
  absl::Status Queue(const std::string& frame);
  absl::Status Flush();
  // The next frame, waiting up to `timeout` (DeadlineExceeded after it).
  absl::StatusOr<Frame> Receive(absl::Duration timeout = absl::InfiniteDuration());
  // The answer to a request, within `timeout`; past it the session is
  // broken (the answer may still come, out of step).
  absl::StatusOr<Frame> ReceiveAnswerFrame(absl::string_view doing, absl::Duration timeout);
  // An ok or error answer, within the reply timeout.
  absl::Status ReceiveAnswer(absl::string_view doing);
  // Output frames to `on_output` until the status frame; cancel sends a
  // cancel once, and past `timeout` the session is broken.
  absl::StatusOr<int> ReceiveStatus(const OutputCallback& on_output,
                                    const absl::Notification* cancel,
                                    absl::Duration timeout = absl::InfiniteDuration());
  // Breaks the session for good, saying what went wrong.
  absl::Status Broken(absl::string_view doing, const absl::Status& why);
  absl::Status SendFile(const FileToSend& file);

  // The stream is closed (its command's stdin ended) before `base_` goes.
  std::unique_ptr<Connection> base_;  // the node's, for an agent's session
  std::unique_ptr<CommandStream> stream_;
  SessionEndpoint endpoint_;
  std::string node_;
  absl::Duration hello_timeout_;
  SessionRunOptions options_;
  absl::Time last_heard_ = absl::Now();
  FrameReader reader_;
  std::string pending_;  // frames of the request not yet sent
  absl::Status broken_;
  bool ended_ = false;  // the agent's output ended
  bool agent_behind_ = false;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_AGENT_SESSION_H_
