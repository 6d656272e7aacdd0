#ifndef FLEETPLAN_TOOLS_PROTOCOL_RELAY_CONTRACT_H_
#define FLEETPLAN_TOOLS_PROTOCOL_RELAY_CONTRACT_H_

// What apply and the agents agree on for the sync relay
// (tools/agent/relay.h): when it is used, and what a receiver's exit
// status means.

#include <cstddef>

#include "absl/strings/string_view.h"

namespace fleetplan {

// `[sync] relay = "auto"` relays from this many nodes: with two, the chief
// would pass the files on to one node only, for no gain.
inline constexpr size_t kRelayMinNodes = 3;

// ... and when some node lacks at least this many bytes: below it, sending
// from this machine to every node at once is quicker than the chief first
// and the others after it, and costs the user's link little.
inline constexpr unsigned long long kRelayMinBytes = 1ull << 20;

// The nodes that relay, the chief at position 0 and the others in the
// order apply lists them, form a tree where the node at position p > 0
// receives from the one at RelayParent(p) while serving its own children.
// Fan-out 1, a chain: every node's link carries each byte once in and once
// out, the most a pipeline gets from links of equal speed (a wider tree
// splits a parent's uplink among its children), and depth costs only a
// chunk's time per hop since each node forwards while it receives. Its
// cost is a broken node cutting off those after it: they fall back to the
// chief. Raise it to bound depth on very many nodes.
inline constexpr size_t kRelayFanOut = 1;
inline constexpr size_t RelayParent(size_t position) {
  return position == 0 ? 0 : (position - 1) / kRelayFanOut;
}

// The first line a relay server sends inside TLS, at once on accepting: it
// names the serving process, so a receiver whose parent's address leads
// back to itself tells so without waiting for the manifest, which a node
// still connecting to its own source does not have yet. 3: the relay
// speaks TLS with the job's key.
inline constexpr absl::string_view kRelayMagic = "FPRELAY3";

// A receiver that could reach no relay (or what answered was not one, or
// its last source broke off) exits with this; apply then sends to that node
// directly.
inline constexpr int kExitRelayUnreachable = 75;

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_RELAY_CONTRACT_H_
