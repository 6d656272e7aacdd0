#ifndef FLEETPLAN_TOOLS_APPLY_STEP_OUTCOME_H_
#define FLEETPLAN_TOOLS_APPLY_STEP_OUTCOME_H_

// What one step of a plan did on its node, as its runner tells the
// executor.

#include <string>
#include <utility>

#include "tools/apply/progress.h"

namespace fleetplan {

struct StepOutcome {
  StepStatus status = StepStatus::kChanged;
  std::string detail;   // shown beside the status
  std::string failure;  // the full failure message (kFailed only)
  int exit_status = 0;  // of the step's command, when it ran one
  // A failed check does not stop the other nodes' checks; anything else
  // that fails stops the phase.
  bool stops_phase = true;
  // The step's command recorded its hash on the node already.
  bool recorded = false;

  static StepOutcome Failed(std::string failure, int exit_status = 0) {
    StepOutcome outcome;
    outcome.status = StepStatus::kFailed;
    outcome.failure = std::move(failure);
    outcome.exit_status = exit_status;
    return outcome;
  }
  static StepOutcome Unchanged() {
    StepOutcome outcome;
    outcome.status = StepStatus::kUnchanged;
    return outcome;
  }
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_STEP_OUTCOME_H_
