#ifndef FLEETPLAN_TOOLS_AGENT_WORKDIR_CHECK_H_
#define FLEETPLAN_TOOLS_AGENT_WORKDIR_CHECK_H_

// The workdir check, one for the agent: in preflight, and before a sync
// through the apply session. (A node's first sync, before any agent is
// there, runs the plan's shell version, WorkdirCheckScript, which a test
// keeps saying what this says.)

#include <cstdint>
#include <string>

#include "tools/protocol/check_line.h"
#include "tools/protocol/preflight_request.h"

namespace fleetplan {

// `request.workdir` can be made (apply mode: its state folder is made)
// and written at this absolute path, with room for `request.sync_bytes`
// less what `request.manifest` lists (an earlier sync's files).
CheckResult CheckWorkdir(const PreflightRequest& request);

// Before a sync: `workdir` and `state_dir` made and writable, and `bytes`
// fit. The check line; `*status` 1 when it failed, else 0.
std::string CheckWorkdirBeforeSync(const std::string& workdir, const std::string& state_dir,
                                   uint64_t bytes, int* status);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_WORKDIR_CHECK_H_
