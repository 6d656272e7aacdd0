// libFuzzer target: any bytes as one supervision line from a peer agent.
// ParsePeerMessage must give a message or InvalidArgument, without an
// exception, a crash or undefined behaviour (the sanitizers catch those),
// and a message it gives must serialize to a line that parses back to the
// same line. A broken promise aborts, which libFuzzer reports with the input.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/protocol/peer_message.h"

namespace fleetplan {
namespace {

void Require(bool ok, const char* what, absl::string_view detail) {
  if (ok) return;
  fprintf(stderr, "peer_message_fuzzer: %s: %.*s\n", what, static_cast<int>(detail.size()),
          detail.data());
  abort();
}

void Check(absl::string_view line) {
  absl::StatusOr<PeerMessage> message = ParsePeerMessage(line);
  if (!message.ok()) {
    Require(message.status().code() == absl::StatusCode::kInvalidArgument,
            "an error that is not InvalidArgument", message.status().ToString());
    return;
  }
  std::string serialized = SerializePeerMessage(*message);
  Require(serialized.find('\n') == std::string::npos, "a serialized message holds a newline",
          serialized);
  absl::StatusOr<PeerMessage> again = ParsePeerMessage(serialized);
  Require(again.ok(), "a serialized message does not parse", serialized);
  Require(again->index() == message->index(), "a message changed type", serialized);
  Require(SerializePeerMessage(*again) == serialized, "a message changed on a round trip",
          serialized);
}

}  // namespace
}  // namespace fleetplan

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fleetplan::Check(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
