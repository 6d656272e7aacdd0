#include "tools/cli/stacks_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/apply/executor.h"
#include "tools/apply/job_control.h"
#include "tools/protocol/stack_report.h"
#include "tools/util/flags.h"

namespace fleetplan {

int RunStacksCommand(const JobTarget& target) {
  absl::StatusOr<std::unique_ptr<OpenedTarget>> opened = OpenTarget(target);
  if (!opened.ok()) return FailWith("stacks", opened.status());
  const ClusterSpec& spec = (*opened)->spec;
  std::vector<absl::StatusOr<StacksMessage>> answers =
      JobControl(spec, (*opened)->connections.open).Stacks();
  std::vector<RankStack> ranks;
  std::vector<StackSkip> unread;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i].ok()) {
      unread.push_back({spec.nodes[i].name, {},
                        absl::StrCat("its stacks could not be read: ",
                                     answers[i].status().message())});
      continue;
    }
    for (RankStack& rank : answers[i]->ranks) {
      rank.node = spec.nodes[i].name;  // a node speaks for its own ranks only
      ranks.push_back(std::move(rank));
    }
  }
  StackSummary summary = GroupStacks(ranks);
  summary.skips.insert(summary.skips.end(), unread.begin(), unread.end());
  std::vector<std::string> lines = SummaryLines(summary);
  if (ranks.empty() && unread.empty()) lines.push_back("no rank of the job is running");
  if (target.json) {
    nlohmann::json out = StackSummaryToJson(summary);
    out["lines"] = lines;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (const std::string& line : lines) std::printf("%s\n", line.c_str());
  }
  return unread.empty() ? 0 : kExitApplyFailed;
}

}  // namespace fleetplan
