#include "tools/cli/membership_view.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace fleetplan {
namespace {

std::string Clock(absl::Time time, absl::TimeZone zone) {
  if (time == absl::InfinitePast()) return "?";
  return absl::FormatTime("%H:%M:%S", time, zone);
}

}  // namespace

std::vector<std::string> MembershipLines(const NodeJobState& chief, absl::TimeZone zone) {
  std::vector<std::string> lines;
  // The latest first: the one running now.
  for (auto it = chief.generations.rbegin(); it != chief.generations.rend(); ++it) {
    lines.push_back(absl::StrCat(it == chief.generations.rbegin() ? "" : "  ", "generation ",
                                 it->generation, " since ", Clock(it->started_at, zone), ": ",
                                 absl::StrJoin(it->members, ", "), " (", it->members.size(),
                                 it->members.size() == 1 ? " node)" : " nodes)"));
  }
  for (const LostNode& lost : chief.lost) {
    lines.push_back(
        absl::StrCat("lost ", lost.node, " at ", Clock(lost.at, zone), " (", lost.reason, ")"));
  }
  lines.push_back(absl::StrCat("spares: ",
                               chief.spares.empty() ? "none" : absl::StrJoin(chief.spares, ", ")));
  lines.push_back(absl::StrCat("node losses: ", chief.node_losses, "; the chief '", chief.node,
                               "' runs the coordinator: losing it ends the job"));
  return lines;
}

nlohmann::json MembershipJson(const NodeJobState& chief) {
  nlohmann::json json = MembershipToJson(chief);
  json.erase("waiting");  // the chief runs ranks: never a spare
  json["chief"] = chief.node;
  json["chief_loss_ends_job"] = true;
  return json;
}

}  // namespace fleetplan
