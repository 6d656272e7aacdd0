#include "tools/hold/held_node.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace fleetplan {

void HeldNode::UseAgent(const std::string& agent_path, absl::Duration hello_timeout) {
  if (session_ != nullptr && (agent_path != agent_path_ || !session_->Serving())) EndSession();
  if (session_ != nullptr || agent_path.empty() || absl::Now() < look_again_) return;
  SessionRunOptions run;
  run.agent_idle_timeout =
      std::clamp(2 * options_.persist, 2 * kSessionIdleTimeout, absl::Hours(24));
  run.restart_after_idle = run.agent_idle_timeout / 2;
  absl::StatusOr<std::unique_ptr<AgentSessionConnection>> session =
      AgentSessionConnection::Open(plain_, node_, agent_path, hello_timeout, run);
  if (!session.ok()) {
    // No agent that answers (or a broken connection, found by the
    // command's first request): not tried for every command.
    look_again_ = absl::Now() + options_.retry_after;
    return;
  }
  session_ = *std::move(session);
  agent_path_ = agent_path;
  ++agents_started_;
}

void HeldNode::Changed(const std::vector<std::string>& paths) {
  look_again_ = absl::InfinitePast();
  if (session_ != nullptr && std::find(paths.begin(), paths.end(), agent_path_) != paths.end()) {
    EndSession();
  }
}

void HeldNode::EndSession() {
  plain_ = session_->ReleaseBase();
  session_.reset();
}

}  // namespace fleetplan
