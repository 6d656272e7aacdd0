#ifndef FLEETPLAN_PLUGINS_SSH_REMOTE_COMMAND_H_
#define FLEETPLAN_PLUGINS_SSH_REMOTE_COMMAND_H_

// The command line an ssh exec request carries for a CommandSpec.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "plugins/transport.h"

namespace fleetplan {

// `cd <cwd> && export K=<v>... && exec /bin/sh -c <command>`, every value
// single-quoted, so the user's login shell (which sshd runs the line with)
// only changes directory and exports; the command itself always runs under
// /bin/sh, and a failing cd stops it. InvalidArgument for an env name that
// is not a shell identifier. With `report_pid`, the line first writes
// kPidMarker, the pid and a newline to stderr: the pid of the command's
// process group, which a cancel signals (OpenSSH refuses signal requests
// on root logins).
absl::StatusOr<std::string> RemoteCommandLine(const CommandSpec& command, bool report_pid);

inline constexpr absl::string_view kPidMarker = "fleetplan-pid ";

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SSH_REMOTE_COMMAND_H_
