#ifndef FLEETPLAN_TOOLS_APPLY_APPLY_LOCK_H_
#define FLEETPLAN_TOOLS_APPLY_APPLY_LOCK_H_

// Apply's hold on the chief's .fleetplan/apply.lock (state_lock.h): taken
// once the nodes are connected, before anything is read, and given back
// once the job is launched (or the run ends).

#include <memory>
#include <optional>

#include "tools/apply/apply_options.h"
#include "tools/apply/node_channels.h"
#include "tools/apply/run_state.h"
#include "tools/apply/state_lock.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

class ApplyLock {
 public:
  // All must outlive this.
  ApplyLock(const ClusterSpec& spec, const ApplyOptions& options, NodeChannels& channels,
            const RunState& state)
      : spec_(spec), options_(options), channels_(channels), state_(state) {}
  ~ApplyLock() { Release(); }

  // Takes the lock (when options.lock_state): nullopt when held, else the
  // result that ends the run (kExitLocked naming the holder).
  std::optional<ApplyResult> Acquire();
  // Gives it back, when held (a failure to is told to on_lock_message).
  void Release();

 private:
  const ClusterSpec& spec_;
  const ApplyOptions& options_;
  NodeChannels& channels_;
  const RunState& state_;
  std::unique_ptr<ConnectionLockStore> store_;
  std::unique_ptr<StateLock> lock_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_APPLY_LOCK_H_
