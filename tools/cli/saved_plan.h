#ifndef FLEETPLAN_TOOLS_CLI_SAVED_PLAN_H_
#define FLEETPLAN_TOOLS_CLI_SAVED_PLAN_H_

// `plan -out FILE` and `apply FILE`: a saved plan is applied only while it
// still describes what apply would do now.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tools/plan/plan.h"
#include "tools/plan/plan_json.h"

namespace fleetplan {

// Writes the plan's JSON to `path` atomically. Errors name the path.
absl::Status SavePlan(const Plan& plan, const std::string& path);

// True when `path` names a saved plan rather than a spec (it ends in .json).
bool LooksLikeSavedPlan(absl::string_view path);

// FailedPrecondition saying why `saved` is stale compared with `fresh`
// (computed now from the spec at saved.spec_path): "the spec changed since
// the plan was saved", "the sources under <source> changed since the plan
// was saved", or that the plan itself differs. OK when it is current.
absl::Status CheckPlanCurrent(const SavedPlanRef& saved, const Plan& fresh,
                              const std::string& source_root);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_SAVED_PLAN_H_
