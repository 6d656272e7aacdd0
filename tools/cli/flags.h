#ifndef FLEETPLAN_TOOLS_CLI_FLAGS_H_
#define FLEETPLAN_TOOLS_CLI_FLAGS_H_

// Command-line conveniences shared by the mains: dashed flag names, exit
// code 2 for unknown flags, and --color.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetplan {

// Exit code for bad input: spec errors, stale plans, unknown flags.
inline constexpr int kExitBadInput = 2;

// argv with `--connect-timeout=5` spelled `--connect_timeout=5` (Abseil's
// spelling); values and everything after `--` are left alone.
std::vector<std::string> NormalizeFlagNames(int argc, char** argv);

// InvalidArgument naming the first flag in `args` (argv[0] excluded) that
// is not defined, so the main can exit with kExitBadInput rather than
// Abseil's 1.
absl::Status CheckFlagsDefined(const std::vector<std::string>& args);

// --color=auto|always|never → whether to colour output on `fd`
// (auto: when it is a terminal and TERM is not "dumb").
absl::StatusOr<bool> UseColor(const std::string& flag_value, int fd);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_FLAGS_H_
