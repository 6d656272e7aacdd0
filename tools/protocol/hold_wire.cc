#include "tools/protocol/hold_wire.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fleetplan {

std::string EncodeAttach(const HoldAttach& attach) {
  return EncodeFrame(FrameType::kAttach,
                     {kHoldGreeting, attach.node, attach.identity,
                      absl::StrCat(attach.connect_timeout_s),
                      attach.accept_new_host_keys ? "1" : "0", attach.agent_path});
}

absl::StatusOr<HoldAttach> ParseAttach(const Frame& frame) {
  if (frame.type != FrameType::kAttach || frame.fields.size() != 6 ||
      frame.fields[0] != kHoldGreeting) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected an attach of \"", kHoldGreeting, "\""));
  }
  HoldAttach attach;
  attach.node = frame.fields[1];
  attach.identity = frame.fields[2];
  if (!absl::SimpleAtoi(frame.fields[3], &attach.connect_timeout_s) ||
      attach.connect_timeout_s < 1 || attach.connect_timeout_s > 3600 ||
      (frame.fields[4] != "0" && frame.fields[4] != "1")) {
    return absl::InvalidArgumentError("an attach with a bad timeout or host key policy");
  }
  attach.accept_new_host_keys = frame.fields[4] == "1";
  attach.agent_path = frame.fields[5];
  if (!attach.agent_path.empty() && !absl::StartsWith(attach.agent_path, "/")) {
    return absl::InvalidArgumentError("an attach naming an agent by a relative path");
  }
  return attach;
}

std::string EncodeStatusFrame(const absl::Status& status) {
  return EncodeFrame(FrameType::kError,
                     {absl::StrCat(static_cast<int>(status.code())), std::string(status.message())});
}

absl::Status ParseStatusFrame(const Frame& frame) {
  int code = 0;
  if (frame.type != FrameType::kError || frame.fields.size() != 2 ||
      !absl::SimpleAtoi(frame.fields[0], &code) || code <= 0 ||
      code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::DataLossError("the holder answered with something else than an error");
  }
  return absl::Status(static_cast<absl::StatusCode>(code), frame.fields[1]);
}

}  // namespace fleetplan
