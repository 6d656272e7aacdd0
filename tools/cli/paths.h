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
// else `flag_value` (resolved), else the workspace the current directory is
// in (the nearest folder above holding a WORKSPACE file); "" for none.
std::string WorkspaceDirectory(const std::string& flag_value);

// The nearest of `dir` and the folders above it that holds a WORKSPACE or
// WORKSPACE.bazel file; "" for none.
std::string EnclosingWorkspace(const std::string& dir);

// How the user runs fleetplan's `command` with `args`, for messages that
// name the next command: `bazel run //tools:CMD -- ARGS` under `bazel run`,
// else `fleetplan CMD ARGS`.
std::string CommandHint(const std::string& command, const std::string& args);

// The launch agent binary: `flag_value` when given, else the installed one
// (../lib/fleetplan/fleetplan-agent from this binary's folder, as
// `bazel run //:install` and the .deb lay it out), else
// fleetplan/tools/agent/fleetplan-agent in this binary's runfiles (beside
// argv[0] or /proc/self/exe, or under $RUNFILES_DIR). NotFound listing the
// places looked at.
absl::StatusOr<std::string> FindAgent(const std::string& argv0,
                                      const std::string& flag_value);

// The dashboard's server program, which `fleetplan dashboard` runs (it
// alone links cpp-httplib): ../lib/fleetplan/fleetplan-dashboard from this
// binary's folder, else fleetplan/tools/fleetplan-dashboard in the
// runfiles, looked for as FindAgent does.
absl::StatusOr<std::string> FindDashboard(const std::string& argv0);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_PATHS_H_
