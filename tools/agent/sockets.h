#ifndef FLEETPLAN_TOOLS_AGENT_SOCKETS_H_
#define FLEETPLAN_TOOLS_AGENT_SOCKETS_H_

// The TCP pieces the agent's network probes and its supervision channel
// share: listening on every address, and connecting to HOST:PORT with
// retries while the other side comes up.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/process/fd.h"

namespace fleetplan {

// A listening socket bound to `port` on every address (IPv6 with IPv4
// mapped in, else IPv4 alone where IPv6 is off), with SO_REUSEADDR as the
// rendezvous store binds. Returns -errno on failure.
int BindAnyAddress(int port);

struct HostPort {
  std::string host;
  std::string port;
};

// "host:port" or "[v6]:port". InvalidArgument otherwise.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view target);

struct Connected {
  Fd fd;
  std::string address;  // "target (1.2.3.4)", for messages
};

// Connects to `target`, retrying refused and timed-out attempts (after
// 10 ms, doubling up to every 200 ms) until `timeout` (the listener may not
// be up yet). InvalidArgument for a malformed target, Unavailable with the
// last error otherwise.
absl::StatusOr<Connected> ConnectWithRetry(absl::string_view target, absl::Duration timeout);

// Whether the `count`th connection refused (one that did not prove the
// job's key) is worth a line in the log: the first few, then every
// hundredth, so that a flood of them cannot fill it.
inline bool RefusalWorthSaying(size_t count) { return count <= 5 || count % 100 == 0; }

// Milliseconds left until `deadline`, for poll(); 0 once it passed.
int RemainingMs(absl::Time deadline);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_SOCKETS_H_
