#include "tools/agent/run_record.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/process/files.h"
#include "tools/util/status_macros.h"

namespace fleetplan {

std::string MakeRunId(absl::Time now, int pid) {
  return absl::StrCat(absl::FormatTime("%Y%m%dT%H%M%SZ", now, absl::UTCTimeZone()),
                      "-", pid);
}

absl::StatusOr<std::string> CreateRunDir(const std::string& log_dir,
                                         const std::string& run_id) {
  std::string run_dir = absl::StrCat(log_dir, "/", run_id);
  FP_RETURN_IF_ERROR(MakeDirs(run_dir));
  // A relative link, so the log directory can be moved or copied whole.
  std::string latest = absl::StrCat(log_dir, "/latest");
  std::string temp = absl::StrCat(latest, ".tmp.", getpid());
  unlink(temp.c_str());
  if (symlink(run_id.c_str(), temp.c_str()) != 0 ||
      rename(temp.c_str(), latest.c_str()) != 0) {
    int err = errno;
    unlink(temp.c_str());
    return absl::InternalError(
        absl::StrCat("cannot point ", latest, " at ", run_id, ": ", std::strerror(err)));
  }
  return run_dir;
}

std::string RankLogPath(const std::string& run_dir, int rank) {
  return absl::StrCat(run_dir, "/rank-", rank, ".log");
}

std::string ResultToJson(const AgentResult& result) {
  nlohmann::json json = {{"node", result.node},
                         {"status", result.status},
                         {"failed_rank", result.failed_rank},
                         {"restarts", result.restarts},
                         {"run_id", result.run_id}};
  return json.dump(2) + "\n";
}

absl::StatusOr<AgentResult> ResultFromJson(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return absl::InvalidArgumentError("result.json: not a JSON object");
  }
  AgentResult result;
  auto field = [&](const char* key, auto* out) -> absl::Status {
    auto it = json.find(key);
    using T = std::remove_pointer_t<decltype(out)>;
    bool right_type = it != json.end() && (std::is_same<T, std::string>::value
                                               ? it->is_string()
                                               : it->is_number_integer());
    if (!right_type) {
      return absl::InvalidArgumentError(
          absl::StrCat("result.json: \"", key, "\" is missing or of the wrong type"));
    }
    *out = it->template get<T>();
    return absl::OkStatus();
  };
  FP_RETURN_IF_ERROR(field("node", &result.node));
  FP_RETURN_IF_ERROR(field("status", &result.status));
  FP_RETURN_IF_ERROR(field("failed_rank", &result.failed_rank));
  FP_RETURN_IF_ERROR(field("restarts", &result.restarts));
  FP_RETURN_IF_ERROR(field("run_id", &result.run_id));
  return result;
}

absl::Status WriteResult(const std::string& log_dir, const AgentResult& result) {
  return WriteFileAtomic(absl::StrCat(log_dir, "/result.json"), ResultToJson(result),
                         0644);
}

}  // namespace fleetplan
