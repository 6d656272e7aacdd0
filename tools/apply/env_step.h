#ifndef FLEETPLAN_TOOLS_APPLY_ENV_STEP_H_
#define FLEETPLAN_TOOLS_APPLY_ENV_STEP_H_

// The environment phase: a node's env.sh as the plan shows it and, with
// [secrets], the secrets file it sources (written first, both 0600).
// Skipped when the node records the step's hash with the secrets' digest.

#include "tools/apply/step_context.h"

namespace fleetplan {

StepOutcome WriteEnvironment(const StepContext& context, const Step& step);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_ENV_STEP_H_
