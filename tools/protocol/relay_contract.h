#ifndef FLEETPLAN_TOOLS_PROTOCOL_RELAY_CONTRACT_H_
#define FLEETPLAN_TOOLS_PROTOCOL_RELAY_CONTRACT_H_

// What apply and the agents agree on for the sync relay
// (tools/agent/relay.h): when it is used, and what a receiver's exit
// status means.

#include <cstddef>

namespace fleetplan {

// `[sync] relay = "auto"` relays from this many nodes: with two, the chief
// would pass the files on to one node only, for no gain.
inline constexpr size_t kRelayMinNodes = 3;

// ... and when some node lacks at least this many bytes: below it, sending
// from this machine to every node at once is quicker than the chief first
// and the others after it, and costs the user's link little.
inline constexpr unsigned long long kRelayMinBytes = 1ull << 20;

// A receiver that could not reach the chief's relay (or what answered was
// not one) exits with this; apply then sends to that node directly.
inline constexpr int kExitRelayUnreachable = 75;

// The node could not fetch the agent from the chief (no bash, or its
// /dev/tcp failed): apply sends the agent, and the node fetches the rest.
inline constexpr int kExitRelayNoBootstrap = 76;

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_RELAY_CONTRACT_H_
