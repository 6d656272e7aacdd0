#include "tools/spec/cluster_spec.h"

namespace fleetplan {

const NodeSpec& ClusterSpec::chief() const {
  for (const NodeSpec& node : nodes) {
    if (node.chief) return node;
  }
  return nodes.front();
}

const SshGroup* ClusterSpec::FindSshGroup(const std::string& name) const {
  for (const SshGroup& group : ssh_groups) {
    if (group.name == name) return &group;
  }
  return nullptr;
}

}  // namespace fleetplan
