#ifndef FLEETPLAN_TOOLS_UTIL_FLAGS_H_
#define FLEETPLAN_TOOLS_UTIL_FLAGS_H_

// Command-line handling shared by every main: dashed flag names, exit code
// 2 for unknown flags, --help listing the main's own flags, and --color.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

// argv with `--connect-timeout=5` spelled `--connect_timeout=5` (Abseil's
// spelling); values and everything after `--` are left alone.
std::vector<std::string> NormalizeFlagNames(int argc, char** argv);

// InvalidArgument naming the first flag in `args` (argv[0] excluded) that
// is not defined, so the main can exit with kExitBadInput rather than
// Abseil's 1.
absl::Status CheckFlagsDefined(const std::vector<std::string>& args);

// Parses a main's command line the same way for every binary: dashed flag
// names (`--first-rank`) as Abseil's underscored ones, `--help` listing the
// flags defined in `main_file` (pass __FILE__; Abseil otherwise looks for a
// file named after the binary), and unknown flags as InvalidArgument naming
// them, so the main can exit with kExitBadInput. Returns the positional
// arguments, argv[0] first, then everything after `--`. --help and
// --helpfull print and exit here, as absl::ParseCommandLine does.
absl::StatusOr<std::vector<std::string>> ParseMainFlags(int argc, char** argv,
                                                        const char* main_file);

// --color=auto|always|never → whether to colour output on `fd`
// (auto: when it is a terminal and TERM is not "dumb").
absl::StatusOr<bool> UseColor(const std::string& flag_value, int fd);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_FLAGS_H_
