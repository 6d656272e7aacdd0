#include "tools/plan/plan_json.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tools/plan/json_writer.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

using Json = nlohmann::json;

Json StepToJson(const Step& step) {
  Json inputs = Json::object();
  for (const auto& [key, value] : step.inputs) inputs[key] = value;
  Json json{{"node", step.node},       {"kind", StepKindName(step.kind)},
            {"inputs", std::move(inputs)}, {"command", step.command},
            {"path", step.path},       {"content", step.content},
            {"hash", step.hash}};
  if (step.serves_phase) json["serves_phase"] = true;
  return json;
}

Json RankToJson(const RankEnv& rank) {
  Json env = Json::object();
  for (const auto& [name, value] : rank.env) env[name] = value;
  return Json{{"rank", rank.rank},
              {"argv", rank.argv},
              {"local_rank", rank.local_rank},
              {"node", rank.address},
              {"node_name", rank.node},
              {"env", std::move(env)}};
}

bool IsDigest(const std::string& text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) ||
        absl::ascii_isupper(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::string> StringField(const Json& plan, const char* key) {
  auto it = plan.find(key);
  if (it == plan.end() || !it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("saved plan has no string field \"", key, "\""));
  }
  return it->get<std::string>();
}

absl::StatusOr<std::string> DigestField(const Json& plan, const char* key) {
  absl::StatusOr<std::string> value = StringField(plan, key);
  if (value.ok() && !IsDigest(*value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "saved plan field \"", key, "\" is not a digest: \"", *value, "\""));
  }
  return value;
}

// Members of a JSON object made from `pairs`: sorted by name, the last of
// equal names winning, as assigning them into a nlohmann::json does.
std::vector<const std::pair<std::string, std::string>*> ObjectMembers(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<const std::pair<std::string, std::string>*> members;
  members.reserve(pairs.size());
  for (const auto& pair : pairs) members.push_back(&pair);
  auto by_name = [](const auto* a, const auto* b) { return a->first < b->first; };
  if (std::is_sorted(members.begin(), members.end(), by_name) &&
      std::adjacent_find(members.begin(), members.end(), [](auto* a, auto* b) {
        return a->first == b->first;
      }) == members.end()) {
    return members;  // compiled plans are already in this form
  }
  std::stable_sort(members.begin(), members.end(), by_name);
  std::vector<const std::pair<std::string, std::string>*> unique;
  for (size_t i = 0; i < members.size(); ++i) {
    if (i + 1 < members.size() && members[i + 1]->first == members[i]->first) {
      continue;
    }
    unique.push_back(members[i]);
  }
  return unique;
}

void WriteObject(const std::vector<std::pair<std::string, std::string>>& pairs,
                 JsonWriter& w) {
  w.BeginObject();
  for (const auto* member : ObjectMembers(pairs)) {
    w.Key(member->first);
    w.String(member->second);
  }
  w.EndObject();
}

void WriteStep(const Step& step, JsonWriter& w) {
  w.BeginObject();
  w.Member("command", step.command);
  w.Member("content", step.content);
  w.Member("hash", step.hash);
  w.Key("inputs");
  WriteObject(step.inputs, w);
  w.Member("kind", StepKindName(step.kind));
  w.Member("node", step.node);
  w.Member("path", step.path);
  if (step.serves_phase) {
    w.Key("serves_phase");
    w.Bool(true);
  }
  w.EndObject();
}

void WriteRank(const RankEnv& rank, JsonWriter& w) {
  w.BeginObject();
  w.Key("argv");
  w.BeginArray();
  for (const std::string& arg : rank.argv) w.String(arg);
  w.EndArray();
  w.Key("env");
  WriteObject(rank.env, w);
  w.Member("local_rank", rank.local_rank);
  w.Member("node", rank.address);
  w.Member("node_name", rank.node);
  w.Member("rank", rank.rank);
  w.EndObject();
}

// An upper estimate of RenderPlanJson's size, so that the output is
// allocated once: growing a string of megabytes by doubling costs more than
// writing it.
size_t EstimatedJsonSize(const Plan& plan) {
  constexpr size_t kPerMember = 16;  // quotes, ": ", ",\n", a little indent
  size_t size = 1024;
  auto pairs_size = [](const std::vector<std::pair<std::string, std::string>>& pairs) {
    size_t total = 0;
    for (const auto& [key, value] : pairs) {
      total += key.size() + value.size() + 8 + kPerMember;
    }
    return total;
  };
  for (const Phase& phase : plan.phases) {
    size += phase.preamble.size();
    for (const Step& step : phase.steps) {
      size += step.command.size() + step.content.size() + step.path.size() +
              step.node.size() + StepKindName(step.kind).size() + step.hash.size() +
              pairs_size(step.inputs) + 12 * kPerMember;
    }
  }
  for (const RankEnv& rank : plan.ranks) {
    size += rank.node.size() + rank.address.size() + pairs_size(rank.env) +
            10 * kPerMember;
    for (const std::string& arg : rank.argv) size += arg.size() + kPerMember;
  }
  // Escapes can lengthen text; leave room rather than reallocate.
  return size + size / 8;
}

}  // namespace

Json PlanToJson(const Plan& plan) {
  Json phases = Json::array();
  for (const Phase& phase : plan.phases) {
    Json steps = Json::array();
    for (const Step& step : phase.steps) steps.push_back(StepToJson(step));
    Json json{{"phase", PhaseName(phase.kind)}, {"steps", std::move(steps)}};
    if (!phase.preamble.empty()) json["preamble"] = phase.preamble;
    phases.push_back(std::move(json));
  }
  Json ranks = Json::array();
  for (const RankEnv& rank : plan.ranks) ranks.push_back(RankToJson(rank));
  return Json{{"format", kPlanFormat},
              {"name", plan.spec_name},
              {"spec", plan.spec_path},
              {"spec_hash", plan.spec_hash},
              {"source_hash", plan.source_hash},
              {"hash", plan.hash},
              {"phases", std::move(phases)},
              {"ranks", std::move(ranks)}};
}

// Written directly rather than through PlanToJson().dump(): the same bytes
// (plan_json_test checks), several times faster for large clusters. Keys are
// in nlohmann::json's (sorted) order.
std::string RenderPlanJson(const Plan& plan) {
  std::string out;
  out.reserve(EstimatedJsonSize(plan));
  JsonWriter w(&out);
  w.BeginObject();
  w.Member("format", kPlanFormat);
  w.Member("hash", plan.hash);
  w.Member("name", plan.spec_name);
  w.Key("phases");
  w.BeginArray();
  for (const Phase& phase : plan.phases) {
    w.BeginObject();
    w.Member("phase", PhaseName(phase.kind));
    if (!phase.preamble.empty()) w.Member("preamble", phase.preamble);
    w.Key("steps");
    w.BeginArray();
    for (const Step& step : phase.steps) WriteStep(step, w);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("ranks");
  w.BeginArray();
  for (const RankEnv& rank : plan.ranks) WriteRank(rank, w);
  w.EndArray();
  w.Member("source_hash", plan.source_hash);
  w.Member("spec", plan.spec_path);
  w.Member("spec_hash", plan.spec_hash);
  w.EndObject();
  out.push_back('\n');
  return out;
}


absl::StatusOr<SavedPlanRef> ParseSavedPlan(absl::string_view json) {
  Json plan = Json::parse(json.begin(), json.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (plan.is_discarded()) {
    return absl::InvalidArgumentError("saved plan is not valid JSON");
  }
  if (!plan.is_object()) {
    return absl::InvalidArgumentError("saved plan is not a JSON object");
  }
  auto format = plan.find("format");
  if (format == plan.end() || !format->is_string() ||
      format->get<std::string>() != kPlanFormat) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a fleetplan plan: expected \"format\": \"", kPlanFormat, "\""));
  }
  auto phases = plan.find("phases");
  if (phases == plan.end() || !phases->is_array()) {
    return absl::InvalidArgumentError("saved plan has no \"phases\" array");
  }
  SavedPlanRef ref;
  FP_ASSIGN_OR_RETURN(ref.spec_name, StringField(plan, "name"));
  FP_ASSIGN_OR_RETURN(ref.spec_path, StringField(plan, "spec"));
  FP_ASSIGN_OR_RETURN(ref.spec_hash, DigestField(plan, "spec_hash"));
  FP_ASSIGN_OR_RETURN(ref.source_hash, StringField(plan, "source_hash"));
  FP_ASSIGN_OR_RETURN(ref.hash, DigestField(plan, "hash"));
  return ref;
}

}  // namespace fleetplan
