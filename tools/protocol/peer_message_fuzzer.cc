// libFuzzer target: any bytes as one supervision line from a peer agent.
// ParsePeerMessage must give a message or InvalidArgument, without an
// exception, a crash or undefined behaviour (the sanitizers catch those),
// and a message it gives must serialize to a line that parses back to the
// same line. A broken promise aborts, which libFuzzer reports with the input.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/fuzzing/fuzz_require.h"
#include "tools/protocol/peer_message.h"

namespace fleetplan {
namespace {

void Check(absl::string_view line) {
  absl::StatusOr<PeerMessage> message = ParsePeerMessage(line);
  if (!message.ok()) {
    FuzzRequireOkOr(message.status(), absl::StatusCode::kInvalidArgument);
    return;
  }
  std::string serialized = SerializePeerMessage(*message);
  FuzzRequire(serialized.find('\n') == std::string::npos, "a serialized message holds a newline",
              serialized);
  absl::StatusOr<PeerMessage> again = ParsePeerMessage(serialized);
  FuzzRequire(again.ok(), "a serialized message does not parse", serialized);
  FuzzRequire(again->index() == message->index(), "a message changed type", serialized);
  FuzzRequire(SerializePeerMessage(*again) == serialized, "a message changed on a round trip",
              serialized);
}

}  // namespace
}  // namespace fleetplan

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fleetplan::Check(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
