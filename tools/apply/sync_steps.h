#ifndef FLEETPLAN_TOOLS_APPLY_SYNC_STEPS_H_
#define FLEETPLAN_TOOLS_APPLY_SYNC_STEPS_H_

// The sync phase: the source tree, the built binaries and the launch agent
// to every node's workdir, each node checked first (CheckSteps::Workdir)
// and its tree verified after. Directly from this machine
// (sync_steps.cc), or, with `[sync] relay`, the chief directly and the
// others along a relay chain over the nodes' network (sync_relay.cc).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tools/apply/check_steps.h"
#include "tools/apply/step_context.h"
#include "tools/sync/manifest.h"
#include "tools/sync/sync_tree.h"

namespace fleetplan {

class SyncSteps {
 public:
  // All must outlive this; `source` is the synced tree's manifest (empty
  // without [sync]).
  SyncSteps(const StepContext& context, const StepScheduler& scheduler, CheckSteps& checks,
            const Manifest& source)
      : context_(context), scheduler_(scheduler), checks_(checks), source_(source) {}

  // Runs the phase: `extras` (what the build made) join the source.
  ApplyResult RunPhase(const Phase& phase, const std::vector<ExtraFile>& extras)
      ABSL_LOCKS_EXCLUDED(mu_);
  // One node's sync step.
  StepOutcome Run(const Step& step) ABSL_LOCKS_EXCLUDED(mu_);
  // Reads what every node but `except` recorded, when a relayed sync may
  // follow (meanwhile apply reads the chief's job state).
  void ReadAhead(const std::string& except);

 private:
  // Each node's place in the relay chain (RelayParent).
  struct RelayLink {
    const NodeSpec* parent = nullptr;
    int children = 0;
  };

  StepOutcome Direct(const Step& step, const NodeSpec& node) ABSL_LOCKS_EXCLUDED(mu_);
  // Fills in the sync options of a direct sync of `node`.
  SyncOptions DirectOptions(const Step& step, const NodeSpec& node, StepOutcome* workdir);
  // After a node's sync changed files: an extra (the agent, a built
  // binary) or the job's program among them means the preflight checks
  // must run again; other source files (an edited script) do not.
  void NoteSynced(const SyncResult& changes);
  void NoteTraffic(SyncTraffic traffic) ABSL_LOCKS_EXCLUDED(mu_);

  // sync_relay.cc
  bool UseRelay() const;
  // The chief's step, then the others along the relay chain (or all
  // directly).
  void RunAll(const std::vector<const Step*>& steps);
  // Starts the chief's relay server; false when it did not start.
  void RelayFrom(const std::vector<const Step*>& others);
  StepOutcome Relay(const Step& step, const NodeSpec& node) ABSL_LOCKS_EXCLUDED(mu_);
  // The node's fetch along the chain: the agent's command.
  std::string FetchCommand(const Step& step, const NodeSpec& node, const NodeSpec& parent,
                           const RelayLink& link) const;
  // Sends a changed agent to the node and the job's key, before it fetches.
  StepOutcome ReadyToFetch(const NodeSpec& node, const ManifestEntry* agent);
  // Marks `entry` as on the node in its recorded manifest.
  static void NoteSent(const ManifestEntry& entry, Manifest* recorded);
  // What a fetch that succeeded did: the step's detail and the traffic.
  void Fetched(const NodeSpec& node, const NodeSpec& parent, uint64_t bytes, uint64_t uplink,
               const std::string& output, StepOutcome* outcome) ABSL_LOCKS_EXCLUDED(mu_);
  // A relayed node that could not reach its parent or the chief.
  StepOutcome FallBackToDirect(const Step& step, const NodeSpec& node, uint64_t uplink,
                               const std::string& output) ABSL_LOCKS_EXCLUDED(mu_);
  // Reads every node's recorded manifest into recorded_; the most bytes a
  // node lacks. Nullopt when a node could not be read.
  std::optional<uint64_t> ReadRecordedManifests(const std::vector<const Step*>& steps);
  // Places the nodes of `steps` that lack files in the relay chain.
  void LinkRelayChain(const std::vector<const Step*>& steps);

  const StepContext& context_;
  const StepScheduler& scheduler_;
  CheckSteps& checks_;
  const Manifest& source_;
  Manifest manifest_;  // source_ plus built binaries and the agent
  // While the chief serves the relay: its HOST:PORT, for the others.
  std::string relay_from_;
  // Set before the relayed steps start, read-only during them.
  std::map<std::string, RelayLink> relay_links_;
  // What each node recorded, read at once before a relayed sync (written
  // before the steps start, read-only during them), and the same read
  // ahead for the next sync.
  std::map<std::string, Manifest> recorded_;
  std::map<std::string, Manifest> read_ahead_;
  absl::Mutex mu_;
  std::vector<SyncTraffic> traffic_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_SYNC_STEPS_H_
