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

// A program installed beside fleetplan (../lib/fleetplan/NAME from the
// folder holding `fleetplan`) and where it is in the runfiles.
struct HelperProgram {
  const char* what;
  const char* installed;
  const char* runfile;
};

constexpr HelperProgram kAgent = {"the launch agent", "../lib/fleetplan/fleetplan-agent",
                                  "fleetplan/tools/agent/fleetplan-agent"};
constexpr HelperProgram kDashboard = {"the dashboard's server",
                                      "../lib/fleetplan/fleetplan-dashboard",
                                      "fleetplan/tools/fleetplan-dashboard"};

std::string CurrentDirectory() {
  char buffer[PATH_MAX];
  return getcwd(buffer, sizeof(buffer)) != nullptr ? buffer : ".";
}

std::string Env(const char* name) {
  const char* value = getenv(name);
  return value != nullptr ? value : "";
}

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

bool IsFile(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string SelfPath() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  return n > 0 ? std::string(self, n) : "";
}

absl::StatusOr<std::string> FindHelper(const HelperProgram& helper, const std::string& argv0) {
  std::vector<std::string> candidates;
  std::string self = SelfPath();
  if (!self.empty()) {
    candidates.push_back(absl::StrCat(self.substr(0, self.find_last_of('/') + 1), helper.installed));
  }
  if (!argv0.empty()) candidates.push_back(absl::StrCat(argv0, ".runfiles/", helper.runfile));
  if (!self.empty()) candidates.push_back(absl::StrCat(self, ".runfiles/", helper.runfile));
  if (std::string runfiles = Env("RUNFILES_DIR"); !runfiles.empty()) {
    candidates.push_back(absl::StrCat(runfiles, "/", helper.runfile));
  }
  for (const std::string& candidate : candidates) {
    if (IsExecutable(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      "cannot find ", helper.what, " (looked at ", absl::StrJoin(candidates, ", "),
      "); install fleetplan (`bazel run //:install`) or run it through "
      "`bazel run //tools:fleetplan`"));
}

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
  return EnclosingWorkspace(CurrentDirectory());
}

std::string EnclosingWorkspace(const std::string& dir) {
  std::string current = dir;
  while (!current.empty()) {
    if (IsFile(current + "/WORKSPACE") || IsFile(current + "/WORKSPACE.bazel")) return current;
    size_t slash = current.find_last_of('/');
    if (slash == std::string::npos || current == "/") break;
    current = slash == 0 ? "/" : current.substr(0, slash);
  }
  return "";
}

std::string CommandHint(const std::string& command, const std::string& args) {
  if (!Env("BUILD_WORKSPACE_DIRECTORY").empty()) {
    return absl::StrCat("bazel run //tools:", command, " -- ", args);
  }
  return absl::StrCat("fleetplan ", command, " ", args);
}

absl::StatusOr<std::string> FindAgent(const std::string& argv0,
                                      const std::string& flag_value) {
  if (!flag_value.empty()) {
    std::string path = ResolveUserPath(flag_value);
    if (IsExecutable(path)) return path;
    return absl::NotFoundError(absl::StrCat("--agent ", path, " is not an executable"));
  }
  absl::StatusOr<std::string> found = FindHelper(kAgent, argv0);
  if (!found.ok()) return absl::NotFoundError(absl::StrCat(found.status().message(), ", or pass --agent"));
  return found;
}

absl::StatusOr<std::string> FindDashboard(const std::string& argv0) {
  return FindHelper(kDashboard, argv0);
}

}  // namespace fleetplan
