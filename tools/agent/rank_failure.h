#ifndef FLEETPLAN_TOOLS_AGENT_RANK_FAILURE_H_
#define FLEETPLAN_TOOLS_AGENT_RANK_FAILURE_H_

// What the agent on a failed rank's node tells the coordinator of it: the
// exception in the rank's error file (TORCHELASTIC_ERROR_FILE, written by
// torch's @record), or, where there is none or it is no error file, the
// last lines of the rank's log. Both are read bounded; secret values in
// them are hidden as in the rank's output.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/protocol/rank_error.h"

namespace fleetplan {

// Empties (or creates) the error file at `path`, mode 0600, before its rank
// starts: Python's open(path, "w") then keeps that mode, so only the job's
// user reads the exception, and no earlier file is taken for this one's.
absl::Status PrepareErrorFile(const std::string& path);

// The failed rank's own account: `error_file` parsed (at most
// kMaxErrorFileBytes read), else the tail of `log_file` (its last 64 KiB
// read); `secret_values` shown as "***" in either.
RankError ExplainRankFailure(const std::string& error_file, const std::string& log_file,
                             const std::vector<std::string>& secret_values);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_RANK_FAILURE_H_
