#ifndef FLEETPLAN_TOOLS_UTIL_PATH_UNDER_H_
#define FLEETPLAN_TOOLS_UTIL_PATH_UNDER_H_

// Joining paths as text, with no file system access.

#include <string>

#include "absl/strings/string_view.h"

namespace fleetplan {

// `relative` under the directory `dir`: "/w/" and "./a/b" → "/w/a/b",
// "/" and "a" → "/a". Trailing slashes of `dir` and one leading "./" of
// `relative` are dropped; nothing else is normalised or checked.
std::string PathUnder(absl::string_view dir, absl::string_view relative);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_PATH_UNDER_H_
