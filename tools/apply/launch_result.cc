#include "tools/apply/launch_result.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/plan/node_scripts.h"

namespace fleetplan {

std::string ResultJsonPath(const NodeSpec& node) {
  return UnderWorkdir(node, absl::StrCat(".fleetplan/nodes/", node.name,
                                         "/logs/result.json"));
}

absl::StatusOr<NodeResult> ParseNodeResult(absl::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                              /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("status") ||
      !json["status"].is_number_integer()) {
    return absl::InvalidArgumentError("result.json is not an agent result");
  }
  NodeResult result;
  result.status = json["status"].get<int>();
  if (json.contains("node") && json["node"].is_string()) {
    result.node = json["node"].get<std::string>();
  }
  if (json.contains("failed_rank") && json["failed_rank"].is_number_integer() &&
      json["failed_rank"].get<int>() >= 0) {
    result.failed_rank = json["failed_rank"].get<int>();
  }
  if (json.contains("restarts") && json["restarts"].is_number_integer()) {
    result.restarts = json["restarts"].get<int>();
  }
  if (json.contains("run_id") && json["run_id"].is_string()) {
    result.run_id = json["run_id"].get<std::string>();
  }
  return result;
}

std::optional<NodeResult> FirstFailure(const std::vector<NodeResult>& results) {
  std::optional<NodeResult> first;
  for (const NodeResult& result : results) {
    if (result.status == 0) continue;
    bool better = !first.has_value() ||
                  (result.failed_rank.has_value() &&
                   (!first->failed_rank.has_value() ||
                    *result.failed_rank < *first->failed_rank));
    if (better) first = result;
  }
  return first;
}

std::string DescribeFailure(const NodeResult& result) {
  std::string who = result.failed_rank.has_value()
                        ? absl::StrCat("rank ", *result.failed_rank, " on node '",
                                       result.node, "'")
                        : absl::StrCat("node '", result.node, "'");
  return absl::StrCat(who, " failed with exit status ", result.status);
}

}  // namespace fleetplan
