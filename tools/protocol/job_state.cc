#include "tools/protocol/job_state.h"

#include <array>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tools/protocol/json_fields.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr std::array<std::pair<JobPhase, absl::string_view>, 5> kPhaseNames = {{
    {JobPhase::kStarting, "starting"},
    {JobPhase::kRunning, "running"},
    {JobPhase::kSucceeded, "succeeded"},
    {JobPhase::kFailed, "failed"},
    {JobPhase::kStopped, "stopped"},
}};

// Times as RFC 3339 in UTC; null for InfinitePast (not yet).
nlohmann::json TimeToJson(absl::Time time) {
  if (time == absl::InfinitePast()) return nullptr;
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", time, absl::UTCTimeZone());
}

constexpr absl::string_view kDocument = "job.json";

absl::Status Invalid(absl::string_view key, absl::string_view what) {
  return InvalidField(kDocument, key, what);
}

absl::StatusOr<RankState> RankFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Invalid("ranks", "holds something that is not an object");
  RankState rank;
  JsonFields fields(json, kDocument);
  FP_RETURN_IF_ERROR(fields.Get("rank", &rank.rank));
  FP_RETURN_IF_ERROR(fields.Get("pid", &rank.pid));
  FP_RETURN_IF_ERROR(fields.Get("status", &rank.status));
  return rank;
}

// The objects of list `key` (absent: none), each read by `read`.
template <typename T, typename Read>
absl::Status ReadObjects(const JsonFields& fields, const char* key, Read read,
                         std::vector<T>* out) {
  const nlohmann::json* list = fields.Optional(key);
  if (list == nullptr) return absl::OkStatus();
  if (!list->is_array()) return Invalid(key, "is not a list");
  for (const nlohmann::json& item : *list) {
    if (!item.is_object()) return Invalid(key, "holds something that is not an object");
    T parsed;
    FP_RETURN_IF_ERROR(read(JsonFields(item, kDocument), &parsed));
    out->push_back(std::move(parsed));
  }
  return absl::OkStatus();
}

absl::Status ReadGeneration(const JsonFields& fields, GenerationRecord* record) {
  FP_RETURN_IF_ERROR(
      fields.Get("generation", 0, std::numeric_limits<int>::max(), &record->generation));
  FP_RETURN_IF_ERROR(fields.Get("started_at", &record->started_at));
  return fields.Get("members", &record->members);
}

absl::Status ReadLost(const JsonFields& fields, LostNode* lost) {
  FP_RETURN_IF_ERROR(fields.Get("node", &lost->node));
  FP_RETURN_IF_ERROR(fields.Get("at", &lost->at));
  return fields.Get("reason", &lost->reason);
}

// A count, when present.
absl::Status ReadCount(const JsonFields& fields, const char* key, int* out) {
  if (fields.Optional(key) == nullptr) return absl::OkStatus();
  return fields.Get(key, 0, std::numeric_limits<int>::max(), out);
}

// Absent from what agents before elastic jobs wrote: then none of it.
absl::Status MembershipFromJson(const JsonFields& fields, NodeJobState* state) {
  FP_RETURN_IF_ERROR(ReadObjects(fields, "generations", ReadGeneration, &state->generations));
  FP_RETURN_IF_ERROR(ReadObjects(fields, "lost", ReadLost, &state->lost));
  if (fields.Optional("spares") != nullptr) FP_RETURN_IF_ERROR(fields.Get("spares", &state->spares));
  FP_RETURN_IF_ERROR(ReadCount(fields, "node_losses", &state->node_losses));
  state->restarts_used = state->generation;
  FP_RETURN_IF_ERROR(ReadCount(fields, "restarts_used", &state->restarts_used));
  if (fields.Optional("waiting") != nullptr) FP_RETURN_IF_ERROR(fields.Get("waiting", &state->waiting));
  return absl::OkStatus();
}

}  // namespace

nlohmann::json MembershipToJson(const NodeJobState& state) {
  nlohmann::json generations = nlohmann::json::array();
  for (const GenerationRecord& record : state.generations) {
    generations.push_back({{"generation", record.generation},
                           {"started_at", TimeToJson(record.started_at)},
                           {"members", record.members}});
  }
  nlohmann::json lost = nlohmann::json::array();
  for (const LostNode& node : state.lost) {
    lost.push_back({{"node", node.node}, {"at", TimeToJson(node.at)}, {"reason", node.reason}});
  }
  return {{"generations", std::move(generations)},
          {"lost", std::move(lost)},
          {"spares", state.spares},
          {"node_losses", state.node_losses},
          {"restarts_used", state.restarts_used},
          {"waiting", state.waiting}};
}

absl::string_view JobPhaseName(JobPhase phase) {
  for (const auto& [each, name] : kPhaseNames) {
    if (each == phase) return name;
  }
  return "unknown";
}

std::optional<JobPhase> ParseJobPhase(absl::string_view name) {
  for (const auto& [phase, each] : kPhaseNames) {
    if (each == name) return phase;
  }
  return std::nullopt;
}

bool IsFinal(JobPhase phase) {
  return phase == JobPhase::kSucceeded || phase == JobPhase::kFailed ||
         phase == JobPhase::kStopped;
}

std::string DescribeFailure(const JobFailure& failure) {
  if (failure.stacks.has_value()) return absl::StrCat("the job hung: ", failure.reason);
  if (failure.rank < 0) return absl::StrCat("node '", failure.node, "' failed: ", failure.reason);
  std::string text = absl::StrCat("rank ", failure.rank, " on node '", failure.node,
                                  "' failed with exit status ", failure.status);
  std::string death = failure.error.has_value() ? DescribeRankDeath(failure.error->death) : "";
  if (!death.empty()) absl::StrAppend(&text, ": ", death);
  std::string exception = failure.error.has_value() ? DescribeRankError(*failure.error) : "";
  if (!exception.empty()) absl::StrAppend(&text, ": ", exception);
  return text;
}

std::string DescribeFailureInFull(const JobFailure& failure) {
  std::string text = DescribeFailure(failure);
  if (failure.stacks.has_value()) {
    absl::StrAppend(&text, "\nwhere each rank stood (its innermost frame of the user's code; "
                           "every stack is in rank-N.stacks-GEN.txt beside the rank logs):");
    for (const std::string& line : SummaryLines(*failure.stacks)) {
      absl::StrAppend(&text, "\n  ", line);
    }
    return text;
  }
  if (!failure.error.has_value() || failure.error->log_tail.empty()) return text;
  absl::StrAppend(&text, "\nlast lines of rank ", failure.rank, ":");
  for (absl::string_view line : absl::StrSplit(failure.error->log_tail, '\n')) {
    absl::StrAppend(&text, "\n  ", line);
  }
  return text;
}

nlohmann::json JobFailureToJson(const JobFailure& failure) {
  nlohmann::json json = {{"node", failure.node},
                         {"rank", failure.rank},
                         {"status", failure.status},
                         {"reason", failure.reason},
                         {"error", failure.error.has_value() ? RankErrorToJson(*failure.error)
                                                             : nlohmann::json(nullptr)}};
  // Only for a hung job: other failures keep their form.
  if (failure.stacks.has_value()) json["stacks"] = StackSummaryToJson(*failure.stacks);
  return json;
}

absl::StatusOr<JobFailure> JobFailureFromJson(const nlohmann::json& json,
                                              absl::string_view document) {
  if (!json.is_object()) return InvalidField(document, "failure", "is not an object or null");
  JobFailure failure;
  JsonFields fields(json, document);
  FP_RETURN_IF_ERROR(fields.Get("node", &failure.node));
  FP_RETURN_IF_ERROR(fields.Get("rank", -1, std::numeric_limits<int>::max(), &failure.rank));
  FP_RETURN_IF_ERROR(fields.Get("status", 0, 255, &failure.status));
  FP_RETURN_IF_ERROR(fields.Get("reason", &failure.reason));
  // Absent from what agents before error files wrote.
  const nlohmann::json* error = fields.Optional("error");
  if (error != nullptr && !error->is_null()) {
    FP_ASSIGN_OR_RETURN(RankError parsed, RankErrorFromJson(*error, document));
    failure.error = std::move(parsed);
  }
  const nlohmann::json* stacks = fields.Optional("stacks");
  if (stacks != nullptr && !stacks->is_null()) {
    FP_ASSIGN_OR_RETURN(StackSummary parsed, StackSummaryFromJson(*stacks, document));
    failure.stacks = std::move(parsed);
  }
  return failure;
}

std::string JobStateToJson(const NodeJobState& state) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankState& rank : state.ranks) {
    ranks.push_back({{"rank", rank.rank},
                     {"pid", rank.pid},
                     {"status", rank.status.has_value() ? nlohmann::json(*rank.status)
                                                        : nlohmann::json(nullptr)}});
  }
  nlohmann::json failure = nullptr;
  if (state.failure.has_value()) failure = JobFailureToJson(*state.failure);
  nlohmann::json json = {
      {"run_id", state.run_id},
      {"node", state.node},
      {"coordinator", state.coordinator},
      {"agent_pid", state.agent_pid},
      {"generation", state.generation},
      {"max_restarts", state.max_restarts},
      {"state", std::string(JobPhaseName(state.phase))},
      {"started_at", TimeToJson(state.started_at)},
      {"ended_at", TimeToJson(state.ended_at)},
      {"last_heartbeat", TimeToJson(state.last_heartbeat)},
      {"updated_at", TimeToJson(state.updated_at)},
      {"heartbeat_timeout_s", absl::ToDoubleSeconds(state.heartbeat_timeout)},
      {"ranks", std::move(ranks)},
      {"failure", std::move(failure)},
      {"exit_status", state.exit_status},
  };
  json.update(MembershipToJson(state));
  return json.dump(2) + "\n";
}

absl::StatusOr<NodeJobState> JobStateFromJson(absl::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                              /*allow_exceptions=*/false);
  if (!json.is_object()) return absl::InvalidArgumentError("job.json: not a JSON object");
  NodeJobState state;
  JsonFields fields(json, kDocument);
  FP_RETURN_IF_ERROR(fields.Get("run_id", &state.run_id));
  FP_RETURN_IF_ERROR(fields.Get("node", &state.node));
  FP_RETURN_IF_ERROR(fields.Get("coordinator", &state.coordinator));
  FP_RETURN_IF_ERROR(fields.Get("agent_pid", &state.agent_pid));
  FP_RETURN_IF_ERROR(fields.Get("generation", &state.generation));
  FP_RETURN_IF_ERROR(fields.Get("max_restarts", &state.max_restarts));
  std::string phase;
  FP_RETURN_IF_ERROR(fields.Get("state", &phase));
  std::optional<JobPhase> parsed = ParseJobPhase(phase);
  if (!parsed.has_value()) return Invalid("state", absl::StrCat("is not a state: ", phase));
  state.phase = *parsed;
  FP_RETURN_IF_ERROR(fields.Get("started_at", &state.started_at));
  FP_RETURN_IF_ERROR(fields.Get("ended_at", &state.ended_at));
  FP_RETURN_IF_ERROR(fields.Get("last_heartbeat", &state.last_heartbeat));
  FP_RETURN_IF_ERROR(fields.Get("updated_at", &state.updated_at));
  FP_RETURN_IF_ERROR(fields.Get("heartbeat_timeout_s", &state.heartbeat_timeout));
  FP_RETURN_IF_ERROR(fields.Get("exit_status", &state.exit_status));
  auto ranks = json.find("ranks");
  if (ranks == json.end() || !ranks->is_array()) return Invalid("ranks", "is not a list");
  for (const nlohmann::json& rank : *ranks) {
    FP_ASSIGN_OR_RETURN(RankState parsed_rank, RankFromJson(rank));
    state.ranks.push_back(parsed_rank);
  }
  auto failure = json.find("failure");
  if (failure == json.end()) return Invalid("failure", "is missing");
  if (!failure->is_null()) {
    FP_ASSIGN_OR_RETURN(JobFailure parsed_failure, JobFailureFromJson(*failure, kDocument));
    state.failure = std::move(parsed_failure);
  }
  FP_RETURN_IF_ERROR(MembershipFromJson(fields, &state));
  return state;
}

bool IsStale(const NodeJobState& state, absl::Time now) {
  return !IsFinal(state.phase) && now - state.updated_at > 2 * state.heartbeat_timeout;
}

std::string JobStatePath(absl::string_view log_dir) {
  return absl::StrCat(log_dir, "/job.json");
}

std::string RunDir(absl::string_view log_dir, absl::string_view run_id) {
  return absl::StrCat(log_dir, "/", run_id);
}

std::string RankLogPath(absl::string_view run_dir, int rank) {
  return absl::StrCat(run_dir, "/rank-", rank, ".log");
}

std::string RankErrorPath(absl::string_view run_dir, int rank, int generation) {
  return absl::StrCat(run_dir, "/rank-", rank, ".error-", generation, ".json");
}

std::string AgentLogPath(absl::string_view log_dir) {
  return absl::StrCat(log_dir, "/agent.log");
}

std::string MakeRunId(absl::Time now, int pid) {
  return absl::StrCat(absl::FormatTime("%Y%m%dT%H%M%SZ", now, absl::UTCTimeZone()),
                      "-", pid);
}

}  // namespace fleetplan
