#ifndef FLEETPLAN_TOOLS_AGENT_SYNC_CHECKS_H_
#define FLEETPLAN_TOOLS_AGENT_SYNC_CHECKS_H_

// The check after a sync that the agent makes itself: the tree check
// (`verify-tree`, and the apply session's verify). The one before it is
// the workdir check (workdir_check.h).

#include <cstdint>
#include <string>

namespace fleetplan {

// What checking a synced tree found (`verify-tree` and the session's
// verify): 0 and "N files as listed", or 1 and the files that differ, or
// 1 and why the manifest could not be read.
struct TreeCheckReport {
  int status = 0;
  std::string message;
};
TreeCheckReport CheckSyncedTree(const std::string& root, const std::string& manifest_path);


}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_SYNC_CHECKS_H_
