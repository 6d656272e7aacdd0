#ifndef FLEETPLAN_TOOLS_HOLD_HELD_NODE_H_
#define FLEETPLAN_TOOLS_HOLD_HELD_NODE_H_

// One node's connection in the holder's pool, and the launch agent's apply
// session on it once the node's agent answers (tools/apply/agent_session.h):
// a command's run through the holder is then the agent's fork of /bin/sh,
// where the plain connection costs an sshd session (a channel) and a shell
// on the node for every command. Where no agent answers (exec before the
// first apply, an agent of another version) the plain connection serves,
// and the agent is looked for again only after a while or once files were
// written through the holder. The agent lasts as long as the holder may
// hold the node, and ends with the connection when the holder ends.

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/apply/agent_session.h"

namespace fleetplan {

struct HeldAgentOptions {
  // How long the holder stays idle (HoldSet::Persist): the agent waits
  // twice that for a request before it leaves on its own (the holder's
  // connection may have been cut without a word), and the session starts a
  // fresh agent before a request that comes after a pause of half of it.
  absl::Duration persist = absl::Minutes(10);
  // How long a node whose agent did not answer is served without one.
  absl::Duration retry_after = absl::Minutes(1);
};

class HeldNode : public Connection {
 public:
  HeldNode(std::string node, std::unique_ptr<Connection> plain, HeldAgentOptions options)
      : node_(std::move(node)), plain_(std::move(plain)), options_(options) {}

  // Before a command's requests: the agent at `agent_path` serves them if
  // its session runs, or starts within `hello_timeout` (when none runs,
  // the last one ended, or it ran another path); the plain connection
  // otherwise, and for an empty `agent_path`.
  void UseAgent(const std::string& agent_path, absl::Duration hello_timeout);

  // `paths` (absolute) were written or removed through the holder: an agent
  // may be there now, so the next command looks again; one that replaced
  // the file of the agent that serves ends that session (the next command
  // starts the new agent).
  void Changed(const std::vector<std::string>& paths);

  // The agent's session while it serves this node (UseAgent started or
  // kept it), for its own requests (the tree and workdir checks); null
  // while the plain connection serves.
  AgentSessionConnection* agent() const { return session_.get(); }

  // Agents started on this connection so far.
  int agents_started() const { return agents_started_; }

  absl::StatusOr<int> Run(const CommandSpec& command, const OutputCallback& on_output,
                          const absl::Notification* cancel) override {
    return Current().Run(command, on_output, cancel);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    return Current().ReadFile(path);
  }
  std::vector<absl::StatusOr<std::string>> ReadFiles(
      const std::vector<std::string>& paths) override {
    return Current().ReadFiles(paths);
  }
  absl::Status WriteFile(const std::string& path, absl::string_view content,
                         uint32_t mode) override {
    return Current().WriteFile(path, content, mode);
  }
  absl::Status PutFiles(const std::vector<FileToSend>& files,
                        const std::string& remote_root) override {
    return Current().PutFiles(files, remote_root);
  }
  absl::Status RemoveFiles(const std::string& remote_root,
                           const std::vector<std::string>& paths) override {
    return Current().RemoveFiles(remote_root, paths);
  }
  // Beside the agent, on the node's connection (a relayed stream).
  absl::StatusOr<std::unique_ptr<CommandStream>> OpenStream(const std::string& command) override {
    return Current().OpenStream(command);
  }

 private:
  Connection& Current() { return session_ != nullptr ? *session_ : *plain_; }
  // Back to the plain connection, the agent ended.
  void EndSession();

  std::string node_;
  // Null while the session holds it (it gives it back in EndSession).
  std::unique_ptr<Connection> plain_;
  std::unique_ptr<AgentSessionConnection> session_;
  std::string agent_path_;  // the session's agent
  HeldAgentOptions options_;
  absl::Time look_again_ = absl::InfinitePast();
  int agents_started_ = 0;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_HELD_NODE_H_
