#ifndef FLEETPLAN_TOOLS_UTIL_PATH_POLICY_H_
#define FLEETPLAN_TOOLS_UTIL_PATH_POLICY_H_

// Paths as text, with no file system access: the one place that splits,
// joins and normalises them, and the one check that a relative path a user,
// a manifest or a peer hands us stays under the folder it is meant for.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

// `path` made absolute under "/" with no ".", ".." or repeated "/": a ".."
// at the top stays at "/". "/a/./b/../c/" → "/a/c", "a" → "/a", "" → "/".
std::string NormalizeAbsolutePath(absl::string_view path);

// True for an absolute path with no "." or ".." part (a spec's workdir):
// "/home/u/project", "/"; not "w", "/a/../b", "/a/./b".
bool IsCleanAbsolutePath(absl::string_view path);

// The folder `path` is in, as POSIX dirname(1): "/w/a/b" → "/w/a",
// "/b" → "/", "b" → ".", "a/b/" → "a", "/" → "/", "" → ".".
std::string Dirname(absl::string_view path);

// The last part of `path`, as POSIX basename(1): "/w/a/b" → "b",
// "a/b/" → "b", "b" → "b", "/" → "/", "" → "".
std::string Basename(absl::string_view path);

// A hidden name in the folder of `path`, for a temporary file renamed over
// it: "/w/a/b" and ".tmp" → "/w/a/.b.tmp"; "b" → ".b.tmp".
std::string HiddenBeside(absl::string_view path, absl::string_view suffix);

// `relative` under the folder `dir`: "/w/" and "./a/b" → "/w/a/b",
// "/" and "a" → "/a". Trailing slashes of `dir` and one leading "./" of
// `relative` are dropped; nothing else is normalised or checked (for paths
// the code itself made; JoinUnderRoot for paths it was handed).
std::string PathUnder(absl::string_view dir, absl::string_view relative);

// OK when `path` names something strictly under a folder: relative, every
// "/"-separated part neither empty, "." nor "..", no NUL byte, and within
// Linux's limits (parts of 255 bytes, 4095 in all). InvalidArgument naming
// `path` (escaped) and `root` otherwise. Synced files, files to remove and
// a relay's manifest entries all pass through here.
absl::Status CheckStaysUnderRoot(absl::string_view root, absl::string_view path);

// `root/path` once CheckStaysUnderRoot passes, else its error.
absl::StatusOr<std::string> JoinUnderRoot(absl::string_view root, absl::string_view path);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_PATH_POLICY_H_
