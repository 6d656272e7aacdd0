#ifndef FLEETPLAN_TOOLS_AGENT_RELAY_H_
#define FLEETPLAN_TOOLS_AGENT_RELAY_H_

// The sync relay: apply sends the changed files over its own (slow) link
// once, to the chief; the other nodes pass them on to each other over the
// nodes' own network, in a chain (see RelayParents in
// tools/protocol/relay_contract.h) where each node receives from its parent
// and at the same time serves its child what it has written so far, chunk
// by chunk, so the user's uplink carries each changed byte once and a big
// file is not stored and forwarded whole at every hop.
//
// On the wire (TCP, one connection per receiving node, inside TLS with the
// job's key: tools/secure/tls_channel.h; a peer that cannot prove the key
// gets nothing and is given nothing):
//   server → receiver  "FPRELAY3 <server id>\n" at once; then, once it knows
//                      it, "<bytes>\n" and the serialized manifest of the
//                      chief's last sync (what every node must hold)
//   receiver → server  "<index> <index> ...\n": the manifest entries it
//                      lacks (its own diff against what it recorded)
//   server → receiver  the content of each, in that order, size as listed,
//                      as the server itself holds or receives it
// The receiver writes each file (temporary name, mode; renamed into place
// only once its bytes match the manifest's digest), removes
// what the manifest no longer lists, records the manifest and checks the
// whole tree against it, exactly as a direct sync leaves it.

#include <cstdio>
#include <string>
#include <vector>

#include <optional>

#include "absl/time/time.h"
#include "tools/protocol/relay_contract.h"
#include "tools/secure/job_key.h"

namespace fleetplan {

struct RelayServeOptions {
  std::string root;           // the synced tree on this node
  std::string manifest_path;  // what this node's last sync recorded
  // The job's key: receivers must prove it (required).
  std::optional<JobKey> key;
  int port = 0;
  // Serve until this many receivers have been served, `stop_fd` reads
  // end-of-file (apply says every receiver is done), or `timeout`.
  int expect = 1;
  int stop_fd = -1;
  absl::Duration timeout = absl::Minutes(10);
};

// Listens on `port` and serves each receiver from a thread of its own.
// 0 when the port could be bound (a receiver that broke off is that
// receiver's failure, reported on its node); 1 otherwise.
int RunRelayServe(const RelayServeOptions& options, std::FILE* out);

// Where a receiver fetches from: a relay server and its node's name.
struct RelaySource {
  std::string target;  // HOST:PORT
  std::string node;
};

struct RelayReceiveOptions {
  // The parent first, then the next source (the chief) when the parent
  // cannot be reached or breaks off; what was received stays.
  std::vector<RelaySource> sources;
  // The job's key: sources and children must prove it (required).
  std::optional<JobKey> key;
  std::string root;           // where this node's tree is
  std::string manifest_path;  // this node's recorded manifest
  // The digest (DigestHex) of the manifest apply expects; another one from
  // a server fails the receive (a stale parent). Empty: any.
  std::string expect_digest;
  bool ignore_recorded = false;  // fetch everything (apply --force)
  // The chief listens before any receiver starts; a parent only once its
  // own agent runs, which may be a little after its child's.
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration parent_connect_timeout = absl::Seconds(15);
  absl::Duration io_timeout = absl::Minutes(2);
  // > 0: serve this node's children on this port meanwhile, what it holds
  // and what it has received so far; until `serve_expect` were served or,
  // once this node's own receive ended, `linger` passed.
  int serve_port = 0;
  int serve_expect = 0;
  absl::Duration linger = absl::Seconds(30);
};

// Fetches what this node lacks. 0 with the tree checked;
// kExitRelayUnreachable when no source answered or the last one broke off
// (apply then sends directly); 1 when a source was stale or the tree
// fails its check (the recorded manifest is then emptied so that the next
// sync resends everything). Prints a RelayFallback line for each source
// given up, and a RelayReceived line at the end (relay_report.h).
int RunRelayReceive(const RelayReceiveOptions& options, std::FILE* out);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_RELAY_H_
