#include "tools/hold/node_pool.h"

namespace fleetplan {

absl::StatusOr<std::unique_ptr<HeldNode>> NodePool::Take(const std::string& node,
                                                         const TransportOptions& options) {
  {
    absl::MutexLock lock(&mu_);
    std::vector<std::unique_ptr<HeldNode>>& idle = idle_[node];
    if (!idle.empty()) {
      std::unique_ptr<HeldNode> connection = std::move(idle.back());
      idle.pop_back();
      return connection;
    }
  }
  // Connecting takes a while: other nodes' commands go on meanwhile.
  absl::StatusOr<std::unique_ptr<Connection>> opened = open_(node, options);
  if (!opened.ok()) return opened.status();
  {
    absl::MutexLock lock(&mu_);
    ++opened_;
  }
  return std::make_unique<HeldNode>(node, *std::move(opened), agent_);
}

void NodePool::GiveBack(const std::string& node, std::unique_ptr<HeldNode> connection) {
  absl::MutexLock lock(&mu_);
  idle_[node].push_back(std::move(connection));
}

int NodePool::opened() const {
  absl::MutexLock lock(&mu_);
  return opened_;
}

void NodePool::Clear() {
  std::map<std::string, std::vector<std::unique_ptr<HeldNode>>> closing;
  {
    absl::MutexLock lock(&mu_);
    closing.swap(idle_);
  }
}

}  // namespace fleetplan
