#ifndef FLEETPLAN_TOOLS_UTIL_SHELL_QUOTE_H_
#define FLEETPLAN_TOOLS_UTIL_SHELL_QUOTE_H_

// Quoting for the POSIX sh commands and env.sh files a plan runs on nodes.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetplan {

// One sh word that yields exactly `value`: left bare when every byte is in
// [A-Za-z0-9/_.=:,+@%-] (and it is not empty), else single-quoted with each
// `'` written as `'\''`.
std::string ShellQuote(absl::string_view value);

// One sh word for an ssh group's env value, where `$NAME` and `${NAME}` are
// meant to be expanded on the node (`$LD_LIBRARY_PATH:/usr/local/cuda/lib64`):
// each such reference becomes `"${NAME}"`, every other byte is single-quoted,
// so command substitutions, backquotes, backslashes and quotes arrive as
// written. A `$` not followed by a name is literal.
std::string ShellWordExpandingVars(absl::string_view value);

// The words of `line` as sh would split it, quotes removed: single quotes
// (ShellQuote's form), double quotes (\\, \", \$ and \` escaped) and
// backslashes outside quotes. No expansion: `$X` stays as written, and
// operators (`&&`, `;`) are words of their own only when spaces surround
// them. InvalidArgument for an unterminated quote. The inverse of joining
// ShellQuote'd words with spaces; tests read command lines back with it.
absl::StatusOr<std::vector<std::string>> SplitShellWords(absl::string_view line);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_SHELL_QUOTE_H_
