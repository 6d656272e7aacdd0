#include "tools/spec/cluster_spec.h"

#include <algorithm>

namespace fleetplan {

absl::string_view SecretSourceName(SecretSpec::Source source) {
  switch (source) {
    case SecretSpec::Source::kEnv:
      return "env";
    case SecretSpec::Source::kFile:
      return "file";
    case SecretSpec::Source::kCommand:
      return "command";
  }
  return "env";
}

std::string NodeSpec::GroupIn(absl::string_view table) const {
  auto it = groups.find(table);
  return it == groups.end() ? std::string() : it->second;
}

const NodeSpec& ClusterSpec::chief() const {
  for (const NodeSpec& node : nodes) {
    if (node.chief) return node;
  }
  return nodes.front();
}

bool ClusterSpec::Elastic() const {
  int regular = 0;
  for (const NodeSpec& node : nodes) {
    if (node.spare) return true;
    ++regular;
  }
  return job.min_nodes.has_value() && *job.min_nodes < regular;
}

const NodeSpec* ClusterSpec::FindNode(absl::string_view name) const {
  for (const NodeSpec& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

const TransportSettings* ClusterSpec::Settings(absl::string_view name) const {
  auto it = transport_settings.find(name);
  return it == transport_settings.end() ? nullptr : it->second.get();
}

bool ClusterSpec::DefinesGroup(absl::string_view table, absl::string_view group) const {
  const TransportSettings* settings = Settings(table);
  if (settings == nullptr) return false;
  std::vector<std::string> names = settings->GroupNames();
  return std::find(names.begin(), names.end(), group) != names.end();
}

EnvList ClusterSpec::GroupEnv(const NodeSpec& node) const {
  EnvList env;
  for (const auto& [table, group] : node.groups) {
    if (const TransportSettings* settings = Settings(table)) {
      EnvList more = settings->GroupEnv(group);
      env.insert(env.end(), more.begin(), more.end());
    }
  }
  return env;
}

}  // namespace fleetplan
