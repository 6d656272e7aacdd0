#include "tools/protocol/stack_report.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tools/protocol/json_fields.h"
#include "tools/protocol/rank_error.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr size_t kMaxSkips = 8;
constexpr size_t kMaxSkipBytes = 512;

nlohmann::json WhereToJson(const std::optional<StackWhere>& where) {
  if (!where.has_value()) return nullptr;
  return {{"function", where->function},
          {"file", where->file},
          {"line", where->line},
          {"callee", where->callee}};
}

absl::StatusOr<std::optional<StackWhere>> WhereFromJson(const JsonFields& fields,
                                                         absl::string_view document) {
  const nlohmann::json* json = fields.Optional("where");
  if (json == nullptr) return InvalidField(document, "where", "is missing");
  if (json->is_null()) return std::optional<StackWhere>();
  if (!json->is_object()) return InvalidField(document, "where", "is not an object or null");
  StackWhere where;
  JsonFields inner(*json, document);
  FP_RETURN_IF_ERROR(inner.Get("function", &where.function));
  FP_RETURN_IF_ERROR(inner.Get("file", &where.file));
  FP_RETURN_IF_ERROR(inner.Get("line", 0, 1 << 30, &where.line));
  FP_RETURN_IF_ERROR(inner.Get("callee", &where.callee));
  where.function = BoundedUtf8(where.function, kMaxErrorNameBytes);
  where.file = BoundedUtf8(where.file, kMaxErrorNameBytes);
  where.callee = BoundedUtf8(where.callee, kMaxErrorNameBytes);
  return std::optional<StackWhere>(std::move(where));
}

absl::Status GetStrings(const JsonFields& fields, absl::string_view document, const char* key,
                        std::vector<std::string>* out) {
  const nlohmann::json* json = fields.Optional(key);
  if (json == nullptr) return InvalidField(document, key, "is missing");
  if (!json->is_array()) return InvalidField(document, key, "is not a list of strings");
  for (const nlohmann::json& item : *json) {
    if (!item.is_string()) return InvalidField(document, key, "is not a list of strings");
    out->push_back(BoundedUtf8(item.get_ref<const std::string&>(), kMaxSkipBytes));
  }
  return absl::OkStatus();
}

absl::Status CheckRanks(const std::vector<int>& ranks, absl::string_view document) {
  for (int rank : ranks) {
    if (rank < 0) return InvalidField(document, "ranks", "holds a negative rank");
  }
  return absl::OkStatus();
}

}  // namespace

bool StackWhere::operator==(const StackWhere& other) const {
  return std::tie(function, file, line, callee) ==
         std::tie(other.function, other.file, other.line, other.callee);
}

bool StackWhere::operator<(const StackWhere& other) const {
  return std::tie(file, line, function, callee) <
         std::tie(other.file, other.line, other.function, other.callee);
}

StackSummary GroupStacks(const std::vector<RankStack>& ranks) {
  std::vector<RankStack> sorted = ranks;
  std::sort(sorted.begin(), sorted.end(),
            [](const RankStack& a, const RankStack& b) { return a.rank < b.rank; });
  std::map<std::optional<StackWhere>, StackGroup> groups;
  std::map<std::pair<std::string, std::string>, StackSkip> skips;
  for (const RankStack& rank : sorted) {
    StackGroup& group = groups[rank.where];
    group.where = rank.where;
    group.ranks.push_back(rank.rank);
    if (std::find(group.nodes.begin(), group.nodes.end(), rank.node) == group.nodes.end()) {
      group.nodes.push_back(rank.node);
    }
    for (const std::string& why : rank.skips) {
      StackSkip& skip = skips[{rank.node, why}];
      skip.node = rank.node;
      skip.why = why;
      skip.ranks.push_back(rank.rank);
    }
  }
  StackSummary summary;
  for (auto& [where, group] : groups) summary.groups.push_back(std::move(group));
  std::stable_sort(summary.groups.begin(), summary.groups.end(),
                   [](const StackGroup& a, const StackGroup& b) {
                     if (a.ranks.size() != b.ranks.size()) return a.ranks.size() > b.ranks.size();
                     return a.ranks.front() < b.ranks.front();
                   });
  for (auto& [key, skip] : skips) summary.skips.push_back(std::move(skip));
  return summary;
}

std::string RankRanges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<std::string> parts;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (j - i >= 2) {
      parts.push_back(absl::StrCat(ranks[i], "-", ranks[j]));
    } else {
      for (size_t k = i; k <= j; ++k) parts.push_back(absl::StrCat(ranks[k]));
    }
    i = j + 1;
  }
  return absl::StrJoin(parts, ",");
}

std::string DescribeWhere(const std::optional<StackWhere>& where) {
  if (!where.has_value()) return "no frame of the user's found";
  std::string text = absl::StrCat(where->function, " (", where->file,
                                  where->line > 0 ? absl::StrCat(":", where->line) : "", ")");
  if (!where->callee.empty()) absl::StrAppend(&text, " calling ", where->callee);
  return text;
}

std::vector<std::string> SummaryLines(const StackSummary& summary) {
  std::vector<std::string> lines;
  for (const StackGroup& group : summary.groups) {
    lines.push_back(absl::StrCat(group.ranks.size() == 1 ? "rank " : "ranks ",
                                 RankRanges(group.ranks), " on ",
                                 absl::StrJoin(group.nodes, ","), ": ",
                                 DescribeWhere(group.where)));
  }
  for (const StackSkip& skip : summary.skips) {
    std::string ranks = skip.ranks.empty()
                            ? ""
                            : absl::StrCat(" (", skip.ranks.size() == 1 ? "rank " : "ranks ",
                                           RankRanges(skip.ranks), ")");
    lines.push_back(absl::StrCat("skip on ", skip.node, ranks, ": ", skip.why));
  }
  return lines;
}

nlohmann::json RankStackToJson(const RankStack& rank) {
  return {{"rank", rank.rank},
          {"node", rank.node},
          {"where", WhereToJson(rank.where)},
          {"skips", rank.skips}};
}

absl::StatusOr<RankStack> RankStackFromJson(const nlohmann::json& json,
                                            absl::string_view document) {
  if (!json.is_object()) return InvalidField(document, "ranks", "holds a non-object");
  RankStack rank;
  JsonFields fields(json, document);
  FP_RETURN_IF_ERROR(fields.Get("rank", 0, 1 << 30, &rank.rank));
  FP_RETURN_IF_ERROR(fields.Get("node", &rank.node));
  FP_ASSIGN_OR_RETURN(rank.where, WhereFromJson(fields, document));
  FP_RETURN_IF_ERROR(GetStrings(fields, document, "skips", &rank.skips));
  if (rank.skips.size() > kMaxSkips) return InvalidField(document, "skips", "holds too many");
  return rank;
}

nlohmann::json StackSummaryToJson(const StackSummary& summary) {
  nlohmann::json groups = nlohmann::json::array();
  for (const StackGroup& group : summary.groups) {
    groups.push_back(
        {{"where", WhereToJson(group.where)}, {"ranks", group.ranks}, {"nodes", group.nodes}});
  }
  nlohmann::json skips = nlohmann::json::array();
  for (const StackSkip& skip : summary.skips) {
    skips.push_back({{"node", skip.node}, {"ranks", skip.ranks}, {"why", skip.why}});
  }
  return {{"groups", groups}, {"skips", skips}};
}

absl::StatusOr<StackSummary> StackSummaryFromJson(const nlohmann::json& json,
                                                  absl::string_view document) {
  if (!json.is_object()) return InvalidField(document, "stacks", "is not an object");
  const nlohmann::json* groups = JsonFields(json, document).Optional("groups");
  const nlohmann::json* skips = JsonFields(json, document).Optional("skips");
  if (groups == nullptr || !groups->is_array()) {
    return InvalidField(document, "groups", "is not a list");
  }
  if (skips == nullptr || !skips->is_array()) {
    return InvalidField(document, "skips", "is not a list");
  }
  StackSummary summary;
  for (const nlohmann::json& item : *groups) {
    if (!item.is_object()) return InvalidField(document, "groups", "holds a non-object");
    JsonFields fields(item, document);
    StackGroup group;
    FP_ASSIGN_OR_RETURN(group.where, WhereFromJson(fields, document));
    FP_RETURN_IF_ERROR(fields.Get("ranks", &group.ranks));
    FP_RETURN_IF_ERROR(CheckRanks(group.ranks, document));
    if (group.ranks.empty()) return InvalidField(document, "ranks", "is empty");
    FP_RETURN_IF_ERROR(GetStrings(fields, document, "nodes", &group.nodes));
    summary.groups.push_back(std::move(group));
  }
  for (const nlohmann::json& item : *skips) {
    if (!item.is_object()) return InvalidField(document, "skips", "holds a non-object");
    JsonFields fields(item, document);
    StackSkip skip;
    FP_RETURN_IF_ERROR(fields.Get("node", &skip.node));
    FP_RETURN_IF_ERROR(fields.Get("ranks", &skip.ranks));
    FP_RETURN_IF_ERROR(CheckRanks(skip.ranks, document));
    FP_RETURN_IF_ERROR(fields.Get("why", &skip.why));
    skip.why = BoundedUtf8(skip.why, kMaxSkipBytes);
    summary.skips.push_back(std::move(skip));
  }
  return summary;
}

}  // namespace fleetplan
