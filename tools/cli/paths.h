#ifndef FLEETPLAN_TOOLS_CLI_PATHS_H_
#define FLEETPLAN_TOOLS_CLI_PATHS_H_

// Paths the user typed, and the files apply needs beside itself.

#include <string>

#include "absl/status/statusor.h"

namespace fleetplan {

// `path` made absolute against where the user ran the command:
// BUILD_WORKING_DIRECTORY under `bazel run`, else the current directory.
std::string ResolveUserPath(const std::string& path);

// The Bazel workspace the build phase runs in: BUILD_WORKSPACE_DIRECTORY,
// else `flag_value` (resolved), else the current directory.
std::string WorkspaceDirectory(const std::string& flag_value);

// The launch agent binary: `flag_value` when given, else
// fleetplan/tools/agent/fleetplan-agent in this binary's runfiles (beside
// argv[0] or /proc/self/exe, or under $RUNFILES_DIR). NotFound listing the
// places looked at.
absl::StatusOr<std::string> FindAgent(const std::string& argv0,
                                      const std::string& flag_value);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_PATHS_H_
