#ifndef FLEETPLAN_TOOLS_AGENT_RELAY_WIRE_H_
#define FLEETPLAN_TOOLS_AGENT_RELAY_WIRE_H_

// The socket pieces of the sync relay's protocol (relay.h): whole sends,
// exact receives, short lines. Socket errors are Unavailable (the peer may
// be gone: a receiver tries its next source); the caller names the peer.

#include <cstddef>
#include <string>
#include <vector>

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

// The largest manifest a receiver takes from a server.
inline constexpr size_t kMaxRelayManifest = 256u << 20;

// What a receiver reads from a server, first: the magic line
// `<kRelayMagic> <identity>`; the server's identity. Unavailable (not a
// relay server) for another line.
absl::StatusOr<std::string> ParseRelayMagic(absl::string_view line);

// Then the manifest's size line; Unavailable for one that is not a number
// of at most kMaxRelayManifest bytes.
absl::StatusOr<size_t> ParseManifestSize(absl::string_view line);

// What a server reads from a receiver: the indexes of the entries it
// wants, separated by spaces, each below `entries`. InvalidArgument naming
// the first word that is not one.
absl::StatusOr<std::vector<size_t>> ParseWantedEntries(absl::string_view line, size_t entries);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_RELAY_WIRE_H_
