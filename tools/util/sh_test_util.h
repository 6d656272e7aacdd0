#ifndef FLEETPLAN_TOOLS_UTIL_SH_TEST_UTIL_H_
#define FLEETPLAN_TOOLS_UTIL_SH_TEST_UTIL_H_

// Test helpers that run generated shell text through a real /bin/sh, so
// quoting is checked by the shell that will read it rather than by eye.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

// Runs `/bin/sh -c script` and returns its stdout. FailedPrecondition when
// it exits non-zero or dies; Internal when it cannot be started.
absl::StatusOr<std::string> RunSh(const std::string& script);

// Parses `env -0` output into name → value.
std::map<std::string, std::string> ParseEnvZero(absl::string_view output);

// A fresh empty directory under TEST_TMPDIR (or /tmp).
std::string MakeTestDir();

// Writes `content` to `path`, failing the calling test on error.
void WriteFileOrDie(const std::string& path, absl::string_view content);

bool FileExists(const std::string& path);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_SH_TEST_UTIL_H_
