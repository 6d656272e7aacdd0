#ifndef FLEETPLAN_TOOLS_AGENT_RELAY_H_
#define FLEETPLAN_TOOLS_AGENT_RELAY_H_

// The sync relay: apply sends the changed files over its own (slow) link
// once, to the chief; the chief's agent then serves them to the other
// nodes' agents over the nodes' own network, so the user's uplink carries
// each changed byte once whatever the node count.
//
// On the wire (TCP, one connection per receiving node):
//   server → receiver  "FPRELAY1 <bytes>\n" and the serialized manifest the
//                      chief's last sync recorded (what every node must hold)
//   receiver → server  "<index> <index> ...\n": the manifest entries it
//                      lacks (its own diff against what it recorded)
//   server → receiver  the content of each, in that order, size as listed
// The receiver writes each file (temporary name, mode, rename), removes
// what the manifest no longer lists, records the manifest and checks the
// whole tree against it, exactly as a direct sync leaves it.

#include <cstdio>
#include <string>

#include "absl/time/time.h"
#include "tools/protocol/relay_contract.h"

namespace fleetplan {

struct RelayServeOptions {
  std::string root;           // the synced tree on this node
  std::string manifest_path;  // what this node's last sync recorded
  int port = 0;
  // Serve until this many receivers have been served, `stop_fd` reads
  // end-of-file (apply says every receiver is done), or `timeout`.
  int expect = 1;
  int stop_fd = -1;
  absl::Duration timeout = absl::Minutes(10);
};

// Listens on `port` and serves each receiver from a child process of its
// own. 0 when the port could be bound (a receiver that broke off is that
// receiver's failure, reported on its node); 1 otherwise.
int RunRelayServe(const RelayServeOptions& options, std::FILE* out);

struct RelayReceiveOptions {
  std::string from;           // HOST:PORT of the relay server
  std::string from_node;      // its node name, for messages
  std::string root;           // where this node's tree is
  std::string manifest_path;  // this node's recorded manifest
  // The digest (DigestHex) of the manifest apply expects; another one from
  // the server fails the receive (a stale chief). Empty: any.
  std::string expect_digest;
  bool ignore_recorded = false;  // fetch everything (apply --force)
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration io_timeout = absl::Minutes(2);
};

// Fetches what this node lacks from the server. 0 with the tree checked;
// kExitRelayUnreachable when no relay server answered; 1 when the transfer
// broke off or the tree fails its check (the recorded manifest is then
// emptied so that the next sync resends everything). Prints one summary
// line: "received N files (B bytes) from NODE, removed M".
int RunRelayReceive(const RelayReceiveOptions& options, std::FILE* out);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_RELAY_H_
