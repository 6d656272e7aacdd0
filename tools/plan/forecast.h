#ifndef FLEETPLAN_TOOLS_PLAN_FORECAST_H_
#define FLEETPLAN_TOOLS_PLAN_FORECAST_H_

// What apply would do to each step of a plan, given what the nodes hold of
// earlier applies: `plan --refresh`. Pure: the node state is read by the
// caller (Executor::ReadNodeStates); the rules are apply's (executor.h):
// a step runs unless its node recorded its hash; a sync sends what differs
// from the manifest the node recorded; preflight and launch run on every
// node or on none, and run when an earlier step changes something or not
// every node recorded them.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/plan/plan.h"

namespace fleetplan {

// What one node holds of earlier applies.
struct NodeState {
  // Phase → the hash the node recorded for its step of that phase.
  std::map<PhaseKind, std::string> records;
  // How the source tree differs from what the node's last sync left there
  // (the built program and the agent left out). Without a recorded tree,
  // everything is to send.
  bool tree_recorded = false;
  // The node's last sync left a manifest at all (of the source, or, without
  // [sync], of the launch agent and the built program alone).
  bool manifest_recorded = false;
  int files_to_send = 0;
  uint64_t bytes_to_send = 0;
  int files_to_remove = 0;
};

enum class Change {
  kAdd,        // `+`: runs; the node recorded nothing for it
  kChange,     // `~`: runs; the node recorded something else
  kUnchanged,  // `=`: skipped
  kUnknown,    // `?`: decided during apply, from what an earlier step reads
};

// '+', '~', '=' or '?'.
char ChangeMarker(Change change);

struct StepForecast {
  Change change = Change::kAdd;
  std::string note;  // why, or what it sends; may be empty
};

// The hash a node records for `step` once apply did it: the step's own,
// and for the environment step of a spec with [secrets] that joined with
// the values' keyed digest (`secrets_digest`, "" without [secrets]), so a
// changed value is a change while no value is in the plan.
std::string RecordedHash(const Step& step, absl::string_view secrets_digest);

// One forecast per step, in plan order (phase by phase, step by step).
// A node missing from `nodes` counts as holding nothing. `secrets_digest`
// as RecordedHash's.
std::vector<StepForecast> ForecastPlan(const Plan& plan,
                                       const std::map<std::string, NodeState>& nodes,
                                       absl::string_view secrets_digest);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_FORECAST_H_
