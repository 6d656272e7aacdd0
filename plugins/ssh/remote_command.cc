#include "plugins/ssh/remote_command.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/util/shell_quote.h"

namespace fleetplan {
namespace {

bool IsShellName(const std::string& name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> RemoteCommandLine(const CommandSpec& command, bool report_pid) {
  std::vector<std::string> parts;
  // sshd makes the login shell a session leader, and exec keeps its pid.
  if (report_pid) parts.push_back(absl::StrCat("echo \"", kPidMarker, "$$\" >&2"));
  if (!command.cwd.empty()) parts.push_back(absl::StrCat("cd ", ShellQuote(command.cwd)));
  if (!command.env.empty()) {
    std::string exports = "export";
    for (const auto& [name, value] : command.env) {
      if (!IsShellName(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("environment name \"", name, "\" is not a shell identifier"));
      }
      absl::StrAppend(&exports, " ", name, "=", ShellQuote(value));
    }
    parts.push_back(std::move(exports));
  }
  parts.push_back(absl::StrCat("exec /bin/sh -c ", ShellQuote(command.command)));
  return absl::StrJoin(parts, " && ");
}

}  // namespace fleetplan
