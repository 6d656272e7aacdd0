#ifndef FLEETPLAN_TOOLS_HOLD_NODE_POOL_H_
#define FLEETPLAN_TOOLS_HOLD_NODE_POOL_H_

// The holder's open connections, per node: a command attached to a node
// takes one (an idle one, else a new one) for itself alone and gives it
// back when it detaches, so two commands at once (a followed job and a
// `status`) each have their own, and the next command finds them open,
// with the agent session each keeps (held_node.h).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "plugins/transport.h"
#include "tools/hold/held_node.h"

namespace fleetplan {

class NodePool {
 public:
  // Opens a new connection to the node named `node`.
  using Opener = std::function<absl::StatusOr<std::unique_ptr<Connection>>(
      const std::string& node, const TransportOptions& options)>;

  explicit NodePool(Opener open, HeldAgentOptions agent = {})
      : open_(std::move(open)), agent_(agent) {}

  // An idle connection to `node`, else a new one (what the opener said
  // when it failed).
  absl::StatusOr<std::unique_ptr<HeldNode>> Take(const std::string& node,
                                                 const TransportOptions& options);

  // Keeps `connection` for the next Take of `node`.
  void GiveBack(const std::string& node, std::unique_ptr<HeldNode> connection);

  // Connections opened since the pool was made (for tests: a second
  // command through the holder opens none).
  int opened() const;

  // Closes every idle connection.
  void Clear();

 private:
  Opener open_;
  HeldAgentOptions agent_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::vector<std::unique_ptr<HeldNode>>> idle_ ABSL_GUARDED_BY(mu_);
  int opened_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_HOLD_NODE_POOL_H_
