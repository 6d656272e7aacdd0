#ifndef FLEETPLAN_TOOLS_PLAN_PLAN_JSON_H_
#define FLEETPLAN_TOOLS_PLAN_PLAN_JSON_H_

// A plan as JSON, for machines and for `plan -out plan.json`:
//   {"format": "fleetplan-plan/1", "name", "spec", "spec_hash",
//    "source_hash", "hash",
//    "phases": [{"phase", "preamble" (only when not empty),
//                "steps": [{"node", "kind", "inputs": {...}, "command",
//                           "path", "content", "hash",
//                           "serves_phase" (only when true)}]}],
//    "ranks": [{"rank", "local_rank", "node" (address), "node_name",
//               "env": {NAME: value}}]}

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tools/plan/plan.h"

namespace fleetplan {

// The "format" value of a saved plan.
inline constexpr absl::string_view kPlanFormat = "fleetplan-plan/1";

nlohmann::json PlanToJson(const Plan& plan);

// PlanToJson, pretty-printed (two-space indent, keys sorted) and ending in a
// newline: the same plan gives the same bytes. Bytes that are not UTF-8 are
// written as U+FFFD, since JSON cannot carry them.
std::string RenderPlanJson(const Plan& plan);

// What apply needs from a saved plan to tell whether it is stale.
struct SavedPlanRef {
  std::string spec_name;
  std::string spec_path;
  std::string spec_hash;
  std::string source_hash;
  std::string hash;
};

// Reads the identifying fields of a saved plan. InvalidArgument, naming the
// problem, when `json` is not JSON or not a plan RenderPlanJson wrote.
absl::StatusOr<SavedPlanRef> ParseSavedPlan(absl::string_view json);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_PLAN_JSON_H_
