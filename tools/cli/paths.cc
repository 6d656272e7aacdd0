#include "tools/cli/paths.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetplan {
namespace {

constexpr char kAgentRunfile[] = "fleetplan/tools/agent/fleetplan-agent";

std::string CurrentDirectory() {
  char buffer[PATH_MAX];
  return getcwd(buffer, sizeof(buffer)) != nullptr ? buffer : ".";
}

std::string Env(const char* name) {
  const char* value = getenv(name);
  return value != nullptr ? value : "";
}

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

}  // namespace

std::string ResolveUserPath(const std::string& path) {
  if (path.empty() || absl::StartsWith(path, "/")) return path;
  std::string base = Env("BUILD_WORKING_DIRECTORY");
  if (base.empty()) base = CurrentDirectory();
  return absl::StrCat(base, "/", path);
}

std::string WorkspaceDirectory(const std::string& flag_value) {
  std::string workspace = Env("BUILD_WORKSPACE_DIRECTORY");
  if (!workspace.empty()) return workspace;
  if (!flag_value.empty()) return ResolveUserPath(flag_value);
  return CurrentDirectory();
}

absl::StatusOr<std::string> FindAgent(const std::string& argv0,
                                      const std::string& flag_value) {
  if (!flag_value.empty()) {
    std::string path = ResolveUserPath(flag_value);
    if (IsExecutable(path)) return path;
    return absl::NotFoundError(absl::StrCat("--agent ", path, " is not an executable"));
  }
  std::vector<std::string> candidates;
  if (!argv0.empty()) candidates.push_back(absl::StrCat(argv0, ".runfiles/", kAgentRunfile));
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    candidates.push_back(absl::StrCat(std::string(self, n), ".runfiles/", kAgentRunfile));
  }
  if (std::string runfiles = Env("RUNFILES_DIR"); !runfiles.empty()) {
    candidates.push_back(absl::StrCat(runfiles, "/", kAgentRunfile));
  }
  for (const std::string& candidate : candidates) {
    if (IsExecutable(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      "cannot find the launch agent (looked at ", absl::StrJoin(candidates, ", "),
      "); run apply through `bazel run //tools:apply` or pass --agent"));
}

}  // namespace fleetplan
