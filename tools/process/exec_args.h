#ifndef FLEETPLAN_TOOLS_PROCESS_EXEC_ARGS_H_
#define FLEETPLAN_TOOLS_PROCESS_EXEC_ARGS_H_

// What a child is started with, built before fork (the child may only make
// async-signal-safe calls): its environment, the PATH its program is
// searched in, and the null-terminated arrays execve takes. Pure.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace fleetplan {

// `base` ("NAME=value" entries, in order) with `overrides` replacing or
// adding keys; overrides come last, and of a key given twice the last one
// wins, as in a shell.
std::vector<std::string> MergeEnv(
    const std::vector<std::string>& base,
    const std::vector<std::pair<std::string, std::string>>& overrides);

// The value of the last PATH entry in `env`, else the default search path
// "/usr/local/bin:/usr/bin:/bin".
std::string SearchPath(const std::vector<std::string>& env);

// Where `name` is run from, as the launch agent starts a program: a name
// with a '/' is itself, else the first executable regular file named so in
// a directory of `path` (':'-separated, empty entries skipped). NotFound
// saying which, and the PATH searched.
absl::StatusOr<std::string> FindProgram(const std::string& name, const std::string& path);

// A pointer to each string's characters, then a null: execve's argv or
// envp. Valid while `strings` lives unchanged.
std::vector<char*> NullTerminated(const std::vector<std::string>& strings);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROCESS_EXEC_ARGS_H_
