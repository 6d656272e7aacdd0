#include "tools/protocol/state_lock_record.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/protocol/json_fields.h"
#include "tools/util/status_macros.h"

namespace fleetplan {
namespace {

constexpr absl::string_view kDocument = "apply.lock";
constexpr char kTimeFormat[] = "%Y-%m-%dT%H:%M:%E3SZ";

}  // namespace

std::string SerializeStateLock(const StateLockHolder& holder) {
  nlohmann::json json = {
      {"host", holder.host},
      {"user", holder.user},
      {"pid", holder.pid},
      {"since", absl::FormatTime(kTimeFormat, holder.since, absl::UTCTimeZone())},
      {"run_id", holder.run_id},
  };
  return json.dump();
}

absl::StatusOr<StateLockHolder> ParseStateLock(absl::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(kDocument, ": not a JSON object"));
  }
  JsonFields fields(json, kDocument);
  StateLockHolder holder;
  std::string since;
  FP_RETURN_IF_ERROR(fields.Get("host", &holder.host));
  FP_RETURN_IF_ERROR(fields.Get("user", &holder.user));
  FP_RETURN_IF_ERROR(fields.Get("pid", 1, 1 << 30, &holder.pid));
  FP_RETURN_IF_ERROR(fields.Get("since", &since));
  FP_RETURN_IF_ERROR(fields.Get("run_id", &holder.run_id));
  std::string error;
  if (!absl::ParseTime(kTimeFormat, since, absl::UTCTimeZone(), &holder.since, &error)) {
    return InvalidField(kDocument, "since", absl::StrCat("is not a time: ", error));
  }
  return holder;
}

std::string DescribeStateLock(const StateLockHolder& holder) {
  return absl::StrCat(holder.user, "@", holder.host, ", pid ", holder.pid, ", since ",
                      absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", holder.since,
                                       absl::UTCTimeZone()),
                      " (run ", holder.run_id, ")");
}

}  // namespace fleetplan
