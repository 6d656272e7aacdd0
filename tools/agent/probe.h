#ifndef FLEETPLAN_TOOLS_AGENT_PROBE_H_
#define FLEETPLAN_TOOLS_AGENT_PROBE_H_

// The network probes of the preflight checks (preflight.h), also run on
// their own as `fleetplan-agent probe-listen --port=PORT`,
// `probe-connect --target=HOST:PORT` and `probe-ifname --address=ADDRESS`.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fleetplan {

struct ListenProbeOptions {
  int port = 0;
  int expect = 1;                           // connections to wait for
  absl::Duration timeout = absl::Minutes(10);  // end after this long regardless
  int stop_fd = -1;  // end when this reaches end-of-file; -1: never
};

// What a port the preflight checks bind is for, for their messages.
struct PortRole {
  int port = 0;
  const char* purpose;  // "the rendezvous (MASTER_PORT)"
  const char* key;      // the spec key that sets it: "[network] master_port"
};

// The port check's message for `role.port` that could not be bound
// (`error` an errno): what holds it and the fix.
std::string BindFailure(const PortRole& role, int error);

// Accepts connections on `listeners`, closing each once its client has
// closed it (so that no TIME_WAIT holds the port here; at most 64 held),
// until `stop_fd` reached end-of-file and every listener has had `expect`
// (at most 3 s after the end-of-file: a connection may be on its way when
// the others are done), or `timeout`. Without `stop_fd` (-1), until every
// listener has had `expect`. With it, connections from anyone on the
// network cannot end the serving early.
void ServeListeners(const std::vector<int>& listeners, int expect, absl::Duration timeout,
                    int stop_fd);

// Binds `port` on every address with SO_REUSEADDR, as the rendezvous store
// does, and prints the `port` check line (check_line.h) to `out`: ok, or
// fail naming the error and the fix; when bound, also the fact
// `listening <port>`. Then serves it (ServeListeners) until `expect`
// connections have come, `stop_fd` ended, or the timeout. Returns 0 when the port could be bound, else 1.
int RunListenProbe(const ListenProbeOptions& options, std::FILE* out);

// Connects to `target` ("host:port", "[v6]:port"), retrying refused and
// timed-out attempts until `timeout` since the listener may not be up yet;
// closes at once. Returns what happened ("connected to …"); InvalidArgument
// for a malformed target, Unavailable with the last error otherwise.
absl::StatusOr<std::string> ConnectProbe(absl::string_view target,
                                         absl::Duration timeout);

// The name of the network interface that holds `address` (an IPv4 or IPv6
// address). InvalidArgument when it is not one, NotFound when no interface
// holds it.
absl::StatusOr<std::string> InterfaceHolding(absl::string_view address);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_PROBE_H_
