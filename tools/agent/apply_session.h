#ifndef FLEETPLAN_TOOLS_AGENT_APPLY_SESSION_H_
#define FLEETPLAN_TOOLS_AGENT_APPLY_SESSION_H_

// The node's side of an apply session (`fleetplan-agent session`,
// tools/protocol/session_wire.h): apply reads and writes the node's files,
// sends a sync's changed files, checks the workdir and the synced tree and
// runs the launch and the log follower through this one process, instead
// of a program (and a shell) per step. Files are written as the SFTP path
// writes them: a temporary name beside the target, its mode, a rename.

#include <string>

#include "absl/time/time.h"
#include "tools/protocol/session_wire.h"

namespace fleetplan {

// Serves requests read from `in_fd`, answering on `out_fd`, until `in_fd`
// ends or no request came for `idle_timeout` while no command ran. A
// command it runs is stopped (its process group) when the session ends
// under it. 0 after a clean end; 1 when the stream broke (said on stderr).
int ServeApplySession(int in_fd, int out_fd, absl::Duration idle_timeout = kSessionIdleTimeout);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_APPLY_SESSION_H_
