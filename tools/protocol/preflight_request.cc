#include "tools/protocol/preflight_request.h"

#include "nlohmann/json.hpp"
#include "tools/protocol/json_fields.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

std::string PreflightRequestToJson(const PreflightRequest& request) {
  nlohmann::json json = {
      {"mode", request.check_only ? "check" : "apply"},
      {"workdir", request.workdir},
      {"state_dir", request.state_dir},
      {"sync_bytes", request.sync_bytes},
      {"manifest", request.manifest},
      {"listen_for", request.listen_for},
      {"chief_address", request.chief_address},
      {"master_port", request.master_port},
      {"supervisor_port", request.supervisor_port},
      {"connect_timeout_s", absl::ToDoubleSeconds(request.connect_timeout)},
      {"nccl_address", request.nccl_address},
      {"nccl_env_file", request.nccl_env_file},
      {"venv", request.venv},
      {"conda", request.conda},
      {"conda_sh", request.conda_sh},
      {"gpus", request.gpus},
      {"program", request.program},
  };
  return json.dump();
}

absl::StatusOr<PreflightRequest> PreflightRequestFromJson(absl::string_view text) {
  constexpr absl::string_view kDocument = "preflight request";
  nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                              /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return absl::InvalidArgumentError("preflight request: not a JSON object");
  }
  JsonFields fields(json, kDocument);
  PreflightRequest request;
  std::string mode;
  FP_RETURN_IF_ERROR(fields.Get("mode", &mode));
  if (mode != "apply" && mode != "check") {
    return InvalidField(kDocument, "mode", "is neither \"apply\" nor \"check\"");
  }
  request.check_only = mode == "check";
  FP_RETURN_IF_ERROR(fields.Get("workdir", &request.workdir));
  FP_RETURN_IF_ERROR(fields.Get("state_dir", &request.state_dir));
  FP_RETURN_IF_ERROR(fields.Get("sync_bytes", &request.sync_bytes));
  FP_RETURN_IF_ERROR(fields.Get("manifest", &request.manifest));
  FP_RETURN_IF_ERROR(fields.Get("listen_for", &request.listen_for));
  FP_RETURN_IF_ERROR(fields.Get("chief_address", &request.chief_address));
  FP_RETURN_IF_ERROR(fields.Get("master_port", &request.master_port));
  FP_RETURN_IF_ERROR(fields.Get("supervisor_port", &request.supervisor_port));
  FP_RETURN_IF_ERROR(fields.Get("connect_timeout_s", &request.connect_timeout));
  FP_RETURN_IF_ERROR(fields.Get("nccl_address", &request.nccl_address));
  FP_RETURN_IF_ERROR(fields.Get("nccl_env_file", &request.nccl_env_file));
  FP_RETURN_IF_ERROR(fields.Get("venv", &request.venv));
  FP_RETURN_IF_ERROR(fields.Get("conda", &request.conda));
  FP_RETURN_IF_ERROR(fields.Get("conda_sh", &request.conda_sh));
  FP_RETURN_IF_ERROR(fields.Get("gpus", &request.gpus));
  FP_RETURN_IF_ERROR(fields.Get("program", &request.program));
  return request;
}

}  // namespace fleetplan
