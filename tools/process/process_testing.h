#ifndef FLEETPLAN_TOOLS_PROCESS_PROCESS_TESTING_H_
#define FLEETPLAN_TOOLS_PROCESS_PROCESS_TESTING_H_

// Helpers for tests that must prove no process was left running.

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetplan {

// True when `pid` runs (exists and is not a zombie).
bool ProcessRunning(pid_t pid);

// Waits up to `timeout` for `pid` to stop running; true when it did.
bool WaitUntilGone(pid_t pid, absl::Duration timeout = absl::Seconds(5));

// The integers in `text` that follow `key` (e.g. "pid=" in "pid=12 pid=13").
std::vector<pid_t> PidsAfter(absl::string_view text, absl::string_view key);

// A fresh empty directory under TEST_TMPDIR (or /tmp).
std::string MakeTempDir();

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROCESS_PROCESS_TESTING_H_
