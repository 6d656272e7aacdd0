#ifndef FLEETPLAN_TOOLS_AGENT_SYNC_CHECKS_H_
#define FLEETPLAN_TOOLS_AGENT_SYNC_CHECKS_H_

// The checks around a sync that the agent makes itself: the tree check
// after it (`--verify-tree`, and the apply session's verify) and the
// workdir check before it (the apply session's; the first sync, before the
// agent is there, runs the plan's shell version).

#include <cstdint>
#include <string>

namespace fleetplan {

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

#endif  // FLEETPLAN_TOOLS_AGENT_SYNC_CHECKS_H_
