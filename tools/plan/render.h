#ifndef FLEETPLAN_TOOLS_PLAN_RENDER_H_
#define FLEETPLAN_TOOLS_PLAN_RENDER_H_

// Renders a plan for people (this file) and machines (plan_json.h, included
// here so that callers need one header).

#include <string>
#include <vector>

#include "tools/plan/forecast.h"
#include "tools/plan/plan.h"
#include "tools/plan/plan_json.h"

namespace fleetplan {

// The plan as text, Terraform style: each phase with a `+` line per step
// saying what will happen on which node ("no changes" for an empty phase),
// then the ranks each node runs (`node 'head' (10.0.0.1): ranks 0-1`) and,
// with nccl_socket_ifname = "auto", that preflight resolves it per node,
// then `Plan: N steps on M nodes, W ranks.`. ANSI colours only when `color`.
//
// With a `forecast` (ForecastPlan, one per step in plan order), each step's
// marker says what apply would do given what the nodes hold: `+` runs (the
// node recorded nothing), `~` runs (it recorded something else), `=`
// skipped, `?` decided during apply, with a note where there is more to
// say; the last line adds the counts.
std::string RenderPlanText(const Plan& plan, bool color,
                           const std::vector<StepForecast>* forecast = nullptr);

// The forecast for machines: {"format": "fleetplan-forecast/1", "plan"
// (its hash), "steps": [{"phase", "node", "kind", "change" ("add",
// "change", "unchanged", "unknown"), "note"}]}, one line, newline-ended.
std::string RenderForecastJson(const Plan& plan, const std::vector<StepForecast>& forecast);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_RENDER_H_
