#ifndef FLEETPLAN_TOOLS_APPLY_LOCAL_BUILD_H_
#define FLEETPLAN_TOOLS_APPLY_LOCAL_BUILD_H_

// The build phase runs on the machine that runs apply, in the Bazel
// workspace, before anything is synced.

#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "plugins/transport.h"

namespace fleetplan {

// Runs `/bin/sh -c command` in `cwd` as a child in its own process group,
// passing output to `on_output`; stops it (SIGTERM, then SIGKILL) once
// `cancel` (may be null) is notified. Returns its exit status. Errors:
// InvalidArgument for a missing cwd, Internal when it cannot start.
absl::StatusOr<int> RunLocalCommand(const std::string& command,
                                    const std::string& cwd,
                                    const OutputCallback& on_output,
                                    const absl::Notification* cancel);

// Where `label`'s output file is after `bazel build`: <bazel-bin>/<pkg>/<name>,
// with bazel-bin from `bazel info bazel-bin` run in `workspace` (falling back
// to <workspace>/bazel-bin). NotFound when the file is not there.
absl::StatusOr<std::string> BuiltBinaryPath(const std::string& workspace,
                                            const std::string& label);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_LOCAL_BUILD_H_
