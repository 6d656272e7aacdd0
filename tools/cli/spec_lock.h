#ifndef FLEETPLAN_TOOLS_CLI_SPEC_LOCK_H_
#define FLEETPLAN_TOOLS_CLI_SPEC_LOCK_H_

// The spec's lock (tools/apply/state_lock.h) for the commands that take it
// outside the executor: stop, apply --destroy, apply --force-unlock.

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "plugins/transport.h"
#include "tools/apply/state_lock.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

// The lock while a command holds it; released when destroyed.
class HeldSpecLock {
 public:
  HeldSpecLock(Connection& chief, const ClusterSpec& spec);
  absl::Status Acquire(absl::Duration timeout);
  absl::Status Release() { return lock_.Release(); }

 private:
  ConnectionLockStore store_;
  StateLock lock_;
};

// Takes the spec's lock on the chief's connection among `open` (none when
// the chief is not there: nothing of the spec runs to race with), waiting
// up to `timeout` and saying so on stderr. Aborted naming the holder.
absl::StatusOr<std::unique_ptr<HeldSpecLock>> LockSpec(
    const ClusterSpec& spec, const std::map<std::string, std::unique_ptr<Connection>>& open,
    absl::Duration timeout);

// `apply --force-unlock`: connects to the chief, removes the lock and says
// whose it was. The exit code (0, or 1 when the chief could not be reached).
int ForceUnlockSpec(const ClusterSpec& spec, const TransportOptions& options);

// The exit code for a failure of LockSpec: kExitLocked for a held lock.
int LockExitCode(const absl::Status& status);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_SPEC_LOCK_H_
