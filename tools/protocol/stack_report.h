#ifndef FLEETPLAN_TOOLS_PROTOCOL_STACK_REPORT_H_
#define FLEETPLAN_TOOLS_PROTOCOL_STACK_REPORT_H_

// Where each rank of a job stands, as the launch agents report it when the
// job hung (or `stacks` asks): for every rank, its innermost frame of the
// user's own code, and the stack tools that could not run on its node. The
// coordinator groups the ranks by that frame into the summary a hung job
// fails with:
//
//   ranks 0-4,6,7 on a,b,c: main (train.py:41) calling barrier
//   rank 5 on c: load_shard (data.py:88) calling sleep
//   skip on c (ranks 4,5): py-bt: gdb was not found on PATH
//
// One schema, one parser, for the agents' messages, job.json and `stacks`.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json_fwd.hpp"

namespace fleetplan {

// The innermost frame of a rank's own code: its function, file (the base
// name) and line, and what it called there (a library's function: "barrier",
// "sleep"; empty when the frame itself is where it waits).
struct StackWhere {
  std::string function;
  std::string file;
  int line = 0;
  std::string callee;

  bool operator==(const StackWhere& other) const;
  bool operator<(const StackWhere& other) const;
};

// One rank as its node's agent found it.
struct RankStack {
  int rank = 0;
  std::string node;
  std::optional<StackWhere> where;  // nullopt: no frame of the user's found
  // "py-bt: gdb was not found on PATH", "native: eu-stack: ptrace refused":
  // a tool that could not look, and why.
  std::vector<std::string> skips;
};

// Ranks that stand at the same frame.
struct StackGroup {
  std::optional<StackWhere> where;
  std::vector<int> ranks;          // ascending
  std::vector<std::string> nodes;  // in order of first rank
};

// A tool that could not look at some ranks of one node.
struct StackSkip {
  std::string node;
  std::vector<int> ranks;
  std::string why;
};

struct StackSummary {
  std::vector<StackGroup> groups;  // the largest first, then by first rank
  std::vector<StackSkip> skips;    // by node, then by reason
};

// Groups `ranks` by where they stand; each skip once per node and reason.
StackSummary GroupStacks(const std::vector<RankStack>& ranks);

// "0-4,6,7": ascending ranks, runs of three or more as a range.
std::string RankRanges(std::vector<int> ranks);

// "main (train.py:41) calling barrier", or "no frame of the user's found".
std::string DescribeWhere(const std::optional<StackWhere>& where);

// One line per group, then one per skip, as the example above.
std::vector<std::string> SummaryLines(const StackSummary& summary);

nlohmann::json RankStackToJson(const RankStack& rank);
absl::StatusOr<RankStack> RankStackFromJson(const nlohmann::json& json,
                                            absl::string_view document);
nlohmann::json StackSummaryToJson(const StackSummary& summary);
// InvalidArgument naming `document` and the field that is wrong.
absl::StatusOr<StackSummary> StackSummaryFromJson(const nlohmann::json& json,
                                                  absl::string_view document);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_STACK_REPORT_H_
