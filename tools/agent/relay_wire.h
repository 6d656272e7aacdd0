#ifndef FLEETPLAN_TOOLS_AGENT_RELAY_WIRE_H_
#define FLEETPLAN_TOOLS_AGENT_RELAY_WIRE_H_

// The socket pieces of the sync relay's protocol (relay.h): whole sends,
// exact receives, short lines. Socket errors are Unavailable (the peer may
// be gone: a receiver tries its next source); the caller names the peer.

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/protocol/relay_contract.h"

namespace fleetplan {

// Receive and send timeouts on `fd` (whole seconds, at least one).
void SetSocketTimeouts(int fd, absl::Duration timeout);

// Unavailable: `what` and errno's text.
absl::Status SocketError(absl::string_view what);

absl::Status SendAll(int fd, absl::string_view data);

// Reads exactly `size` bytes (fewer only at an error or end of stream).
absl::Status ReceiveExactly(int fd, char* buffer, size_t size);

// One '\n'-terminated line, byte by byte (lines are short and few), at
// most `limit` bytes long.
absl::StatusOr<std::string> ReceiveLine(int fd, size_t limit);

// A path from the manifest that stays under the root.
bool SafeRelativePath(absl::string_view path);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_RELAY_WIRE_H_
