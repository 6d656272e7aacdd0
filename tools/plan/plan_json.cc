#include "tools/plan/plan_json.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

using Json = nlohmann::json;

Json StepToJson(const Step& step) {
  Json inputs = Json::object();
  for (const auto& [key, value] : step.inputs) inputs[key] = value;
  return Json{{"node", step.node},       {"kind", step.kind},
              {"inputs", std::move(inputs)}, {"command", step.command},
              {"path", step.path},       {"content", step.content},
              {"hash", step.hash}};
}

Json RankToJson(const RankEnv& rank) {
  Json env = Json::object();
  for (const auto& [name, value] : rank.env) env[name] = value;
  return Json{{"rank", rank.rank},
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

}  // namespace

Json PlanToJson(const Plan& plan) {
  Json phases = Json::array();
  for (const Phase& phase : plan.phases) {
    Json steps = Json::array();
    for (const Step& step : phase.steps) steps.push_back(StepToJson(step));
    phases.push_back(Json{{"phase", PhaseName(phase.kind)}, {"steps", std::move(steps)}});
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

std::string RenderPlanJson(const Plan& plan) {
  return PlanToJson(plan).dump(2, ' ', /*ensure_ascii=*/false,
                               Json::error_handler_t::replace) +
         "\n";
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
