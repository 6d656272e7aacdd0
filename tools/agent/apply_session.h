#ifndef FLEETPLAN_TOOLS_AGENT_APPLY_SESSION_H_
#define FLEETPLAN_TOOLS_AGENT_APPLY_SESSION_H_

// The node's side of an apply session (`fleetplan-agent --apply-session`,
// tools/protocol/session_wire.h): apply reads and writes the node's files,
// sends a sync's changed files, checks the workdir and the synced tree and
// runs the launch and the log follower through this one process, instead
// of a program (and a shell) per step. Files are written as the SFTP path
// writes them: a temporary name beside the target, its mode, a rename.

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "tools/protocol/session_wire.h"

namespace fleetplan {

// Serves requests read from `in_fd`, answering on `out_fd`, until `in_fd`
// ends or no request came for `idle_timeout` while no command ran. A
// command it runs is stopped (its process group) when the session ends
// under it. 0 after a clean end; 1 when the stream broke (said on stderr).
int ServeApplySession(int in_fd, int out_fd, absl::Duration idle_timeout = kSessionIdleTimeout);

// What checking a synced tree found (`--verify-tree` and the session's
// verify): 0 and "N files as listed", or 1 and the files that differ, or
// 1 and why the manifest could not be read.
struct TreeCheckReport {
  int status = 0;
  std::string message;
};
TreeCheckReport CheckSyncedTree(const std::string& root, const std::string& manifest_path);

// The workdir check before a sync, as the plan's shell version
// (WorkdirCheckScript) says it: `workdir` and `state_dir` can be created and
// written, and `bytes` fit. The check line; `*status` 1 when it failed.
std::string CheckWorkdir(const std::string& workdir, const std::string& state_dir, uint64_t bytes,
                         int* status);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_APPLY_SESSION_H_
