#include "tools/protocol/node_layout.h"

#include "absl/strings/str_cat.h"
#include "tools/util/path_policy.h"

namespace fleetplan {

std::string UnderWorkdir(const NodeSpec& node, absl::string_view relative) {
  return PathUnder(node.workdir, relative);
}

std::string BinRelativePath(absl::string_view file) {
  return absl::StrCat(kStateDirName, "/bin/", file);
}

std::string BinPath(const NodeSpec& node, absl::string_view file) {
  return UnderWorkdir(node, BinRelativePath(file));
}

std::string AgentPath(const NodeSpec& node) { return BinPath(node, kAgentFileName); }

std::string StateLockPath(const NodeSpec& chief) {
  return UnderWorkdir(chief, absl::StrCat(kStateDirName, "/apply.lock"));
}

std::string NodeStateDir(const NodeSpec& node) {
  return UnderWorkdir(node, absl::StrCat(kStateDirName, "/nodes/", node.name));
}

std::string NodeStatePath(const NodeSpec& node, absl::string_view file) {
  return absl::StrCat(NodeStateDir(node), "/", file);
}

std::string EnvScriptPath(const NodeSpec& node) { return NodeStatePath(node, "env.sh"); }

std::string PreflightEnvPath(const NodeSpec& node) {
  return NodeStatePath(node, "preflight.env");
}

std::string SecretsPath(const NodeSpec& node) { return NodeStatePath(node, "secrets.env"); }

std::string SyncManifestPath(const NodeSpec& node) {
  return NodeStatePath(node, "manifest");
}

std::string StepRecordName(absl::string_view phase) { return absl::StrCat("steps/", phase); }

std::string StepRecordPath(const NodeSpec& node, absl::string_view phase) {
  return NodeStatePath(node, StepRecordName(phase));
}

std::string NodeLogDir(const NodeSpec& node) { return NodeStatePath(node, "logs"); }

std::string JobKeyPath(const NodeSpec& node) { return NodeStatePath(node, "job.key"); }

}  // namespace fleetplan
