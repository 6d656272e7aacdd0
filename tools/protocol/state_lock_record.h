#ifndef FLEETPLAN_TOOLS_PROTOCOL_STATE_LOCK_RECORD_H_
#define FLEETPLAN_TOOLS_PROTOCOL_STATE_LOCK_RECORD_H_

// The chief's <workdir>/.fleetplan/apply.lock: who holds a spec's state
// while an apply, a stop or a destroy changes it. One JSON object,
// {"host", "user", "pid", "since", "run_id"}, written whole and once.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetplan {

struct StateLockHolder {
  std::string host;  // the machine the holding command runs on
  std::string user;
  int pid = 0;  // of the holding command, on `host`
  absl::Time since;
  std::string run_id;  // tells two holders apart, even with the same pid
};

// One line of JSON, without a newline (the lock's whole content).
std::string SerializeStateLock(const StateLockHolder& holder);

// InvalidArgument naming the first field missing or wrong.
absl::StatusOr<StateLockHolder> ParseStateLock(absl::string_view text);

// "alice@trainhost, pid 4242, since 2026-11-25 21:54:35 UTC (run 20261125-...)".
std::string DescribeStateLock(const StateLockHolder& holder);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_STATE_LOCK_RECORD_H_
