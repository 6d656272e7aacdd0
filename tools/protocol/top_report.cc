#include "tools/protocol/top_report.h"

#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/protocol/json_fields.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr char kDocument[] = "top report";
constexpr size_t kMaxNodes = 65536;
constexpr size_t kMaxRanks = 65536;  // of one node
constexpr size_t kMaxGpus = 256;     // of one node
constexpr size_t kMaxNameBytes = 256;

constexpr RankRunState kRankStates[] = {RankRunState::kRunning, RankRunState::kExited,
                                        RankRunState::kFailed, RankRunState::kNotStarted,
                                        RankRunState::kGone};

template <typename T>
nlohmann::json OrNull(const std::optional<T>& value) {
  return value.has_value() ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// A percentage or a rate to 0.1 (or 0.001 under 1): what a reader can use.
nlohmann::json Rounded(const std::optional<double>& value) {
  if (!value.has_value() || !std::isfinite(*value)) return nullptr;
  double scale = *value < 1 ? 1000 : 10;
  return std::round(*value * scale) / scale;
}

nlohmann::json GpuToJson(const GpuFigures& gpu) {
  return {{"index", gpu.index},
          {"util_percent", Rounded(gpu.util_percent)},
          {"memory_used_bytes", OrNull(gpu.memory_used_bytes)},
          {"memory_total_bytes", OrNull(gpu.memory_total_bytes)}};
}

nlohmann::json RankToJson(const RankFigures& rank) {
  return {{"rank", rank.rank},
          {"local_rank", rank.local_rank},
          {"pid", rank.pid},
          {"state", std::string(RankRunStateName(rank.state))},
          {"cpu_percent", Rounded(rank.cpu_percent)},
          {"rss_bytes", OrNull(rank.rss_bytes)},
          {"last_output_age_s", Rounded(rank.last_output_age_s)},
          {"step", OrNull(rank.step)},
          {"steps_per_s", Rounded(rank.steps_per_s)}};
}

nlohmann::json NodeToJson(const NodeFigures& node) {
  nlohmann::json gpus = nullptr;
  if (node.gpus.has_value()) {
    gpus = nlohmann::json::array();
    for (const GpuFigures& gpu : *node.gpus) gpus.push_back(GpuToJson(gpu));
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankFigures& rank : node.ranks) ranks.push_back(RankToJson(rank));
  return {{"name", node.name},
          {"cpu_percent", Rounded(node.cpu_percent)},
          {"memory_bytes", OrNull(node.memory_bytes)},
          {"gpus", std::move(gpus)},
          {"ranks", std::move(ranks)}};
}

// The array `key` of `fields`, at most `max` long.
absl::StatusOr<const nlohmann::json*> ArrayField(const JsonFields& fields, const char* key,
                                                 size_t max) {
  const nlohmann::json* value = fields.Optional(key);
  if (value == nullptr) return InvalidField(kDocument, key, "is missing");
  if (!value->is_array()) return InvalidField(kDocument, key, "is not a list");
  if (value->size() > max) return InvalidField(kDocument, key, absl::StrCat("holds over ", max));
  return value;
}

absl::Status CheckObject(const nlohmann::json& json, const char* what) {
  if (!json.is_object()) return InvalidField(kDocument, what, "holds something not an object");
  return absl::OkStatus();
}

absl::StatusOr<GpuFigures> GpuFromJson(const nlohmann::json& json) {
  FP_RETURN_IF_ERROR(CheckObject(json, "gpus"));
  JsonFields fields(json, kDocument);
  GpuFigures gpu;
  FP_RETURN_IF_ERROR(fields.Get("index", 0, 1 << 20, &gpu.index));
  FP_RETURN_IF_ERROR(fields.Get("util_percent", &gpu.util_percent));
  FP_RETURN_IF_ERROR(fields.Get("memory_used_bytes", &gpu.memory_used_bytes));
  FP_RETURN_IF_ERROR(fields.Get("memory_total_bytes", &gpu.memory_total_bytes));
  return gpu;
}

absl::StatusOr<RankRunState> RankStateFromJson(const JsonFields& fields) {
  std::string name;
  FP_RETURN_IF_ERROR(fields.Get("state", &name));
  for (RankRunState state : kRankStates) {
    if (RankRunStateName(state) == name) return state;
  }
  return InvalidField(kDocument, "state", "is not running, exited, failed, not started or gone");
}

absl::StatusOr<RankFigures> RankFromJson(const nlohmann::json& json) {
  FP_RETURN_IF_ERROR(CheckObject(json, "ranks"));
  JsonFields fields(json, kDocument);
  RankFigures rank;
  FP_RETURN_IF_ERROR(fields.Get("rank", 0, 1 << 30, &rank.rank));
  FP_RETURN_IF_ERROR(fields.Get("local_rank", 0, 1 << 30, &rank.local_rank));
  FP_RETURN_IF_ERROR(fields.Get("pid", 0, 1 << 30, &rank.pid));
  FP_ASSIGN_OR_RETURN(rank.state, RankStateFromJson(fields));
  FP_RETURN_IF_ERROR(fields.Get("cpu_percent", &rank.cpu_percent));
  FP_RETURN_IF_ERROR(fields.Get("rss_bytes", &rank.rss_bytes));
  FP_RETURN_IF_ERROR(fields.Get("last_output_age_s", &rank.last_output_age_s));
  FP_RETURN_IF_ERROR(fields.Get("step", &rank.step));
  FP_RETURN_IF_ERROR(fields.Get("steps_per_s", &rank.steps_per_s));
  return rank;
}

absl::Status GpusFromJson(const JsonFields& fields, NodeFigures* node) {
  const nlohmann::json* gpus = fields.Optional("gpus");
  if (gpus != nullptr && gpus->is_null()) {
    node->gpus.reset();
    return absl::OkStatus();
  }
  FP_ASSIGN_OR_RETURN(const nlohmann::json* list, ArrayField(fields, "gpus", kMaxGpus));
  node->gpus.emplace();
  for (const nlohmann::json& item : *list) {
    FP_ASSIGN_OR_RETURN(GpuFigures gpu, GpuFromJson(item));
    node->gpus->push_back(gpu);
  }
  return absl::OkStatus();
}

absl::StatusOr<NodeFigures> NodeFromJson(const nlohmann::json& json) {
  FP_RETURN_IF_ERROR(CheckObject(json, "nodes"));
  JsonFields fields(json, kDocument);
  NodeFigures node;
  FP_RETURN_IF_ERROR(fields.Get("name", &node.name));
  if (node.name.size() > kMaxNameBytes) return InvalidField(kDocument, "name", "is too long");
  FP_RETURN_IF_ERROR(fields.Get("cpu_percent", &node.cpu_percent));
  FP_RETURN_IF_ERROR(fields.Get("memory_bytes", &node.memory_bytes));
  FP_RETURN_IF_ERROR(GpusFromJson(fields, &node));
  FP_ASSIGN_OR_RETURN(const nlohmann::json* ranks, ArrayField(fields, "ranks", kMaxRanks));
  for (const nlohmann::json& item : *ranks) {
    FP_ASSIGN_OR_RETURN(RankFigures rank, RankFromJson(item));
    node.ranks.push_back(rank);
  }
  return node;
}

}  // namespace

bool GpuFigures::operator==(const GpuFigures& other) const {
  return std::tie(index, util_percent, memory_used_bytes, memory_total_bytes) ==
         std::tie(other.index, other.util_percent, other.memory_used_bytes,
                  other.memory_total_bytes);
}

bool RankFigures::operator==(const RankFigures& other) const {
  return std::tie(rank, local_rank, pid, state, cpu_percent, rss_bytes, last_output_age_s, step,
                  steps_per_s) == std::tie(other.rank, other.local_rank, other.pid, other.state,
                                           other.cpu_percent, other.rss_bytes,
                                           other.last_output_age_s, other.step,
                                           other.steps_per_s);
}

bool NodeFigures::operator==(const NodeFigures& other) const {
  return std::tie(name, cpu_percent, memory_bytes, gpus, ranks) ==
         std::tie(other.name, other.cpu_percent, other.memory_bytes, other.gpus, other.ranks);
}

bool TopReport::operator==(const TopReport& other) const {
  return std::tie(state, run_id, generation, nodes) ==
         std::tie(other.state, other.run_id, other.generation, other.nodes);
}

absl::string_view RankRunStateName(RankRunState state) {
  switch (state) {
    case RankRunState::kRunning:
      return "running";
    case RankRunState::kExited:
      return "exited";
    case RankRunState::kFailed:
      return "failed";
    case RankRunState::kNotStarted:
      return "not started";
    case RankRunState::kGone:
      return "gone";
  }
  return "running";
}

std::string TopReportToJson(const TopReport& report) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeFigures& node : report.nodes) nodes.push_back(NodeToJson(node));
  nlohmann::json out = {{"state", report.state},
                        {"run_id", report.run_id},
                        {"generation", report.generation},
                        {"nodes", std::move(nodes)}};
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<TopReport> TopReportFromJson(absl::string_view json) {
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(kDocument, ": not a JSON object"));
  }
  JsonFields fields(parsed, kDocument);
  TopReport report;
  FP_RETURN_IF_ERROR(fields.Get("state", &report.state));
  FP_RETURN_IF_ERROR(fields.Get("run_id", &report.run_id));
  if (report.state.size() > kMaxNameBytes || report.run_id.size() > kMaxNameBytes) {
    return InvalidField(kDocument, "state", "or \"run_id\" is too long");
  }
  FP_RETURN_IF_ERROR(fields.Get("generation", 0, 1 << 30, &report.generation));
  FP_ASSIGN_OR_RETURN(const nlohmann::json* nodes, ArrayField(fields, "nodes", kMaxNodes));
  for (const nlohmann::json& item : *nodes) {
    FP_ASSIGN_OR_RETURN(NodeFigures node, NodeFromJson(item));
    report.nodes.push_back(std::move(node));
  }
  return report;
}

}  // namespace fleetplan
