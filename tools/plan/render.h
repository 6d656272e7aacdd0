#ifndef FLEETPLAN_TOOLS_PLAN_RENDER_H_
#define FLEETPLAN_TOOLS_PLAN_RENDER_H_

// Renders a plan for people (this file) and machines (plan_json.h, included
// here so that callers need one header).

#include <string>

#include "tools/plan/plan.h"
#include "tools/plan/plan_json.h"

namespace fleetplan {

// The plan as text, Terraform style: each phase with a `+` line per step
// saying what will happen on which node ("no changes" for an empty phase),
// then the ranks each node runs (`node 'head' (10.0.0.1): ranks 0-1`) and,
// with nccl_socket_ifname = "auto", that preflight resolves it per node,
// then `Plan: N steps on M nodes, W ranks.`. ANSI colours only when `color`.
std::string RenderPlanText(const Plan& plan, bool color);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PLAN_RENDER_H_
