#ifndef FLEETPLAN_TOOLS_PROTOCOL_RELAY_REPORT_H_
#define FLEETPLAN_TOOLS_PROTOCOL_RELAY_REPORT_H_

// What a relay agent tells apply on its output, as typed lines: one writer
// here for the agent, one parser here for apply; no control flow reads
// the agent's human words. A line is `fleetplan-relay ` and a JSON object:
//   fleetplan-relay {"event":"serving","port":29501}
//   fleetplan-relay {"event":"fallback","from":"n1","why":"..."}
//   fleetplan-relay {"event":"received","files":3,"bytes":8388632,"from":["n1","chief"],"removed":0}
// Other lines (an error said for people) pass through unparsed.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetplan {

// A server listens (apply starts the receivers then).
struct RelayServing {
  int port = 0;
};
// A receiver gave up on a source for the next one (the chief).
struct RelayFallback {
  std::string from;  // the source's node name
  std::string why;
};
// A receiver's tree is complete and checked.
struct RelayReceived {
  uint64_t files = 0;
  uint64_t bytes = 0;
  std::vector<std::string> from;  // the sources files came from, in order
  uint64_t removed = 0;
};

std::string RelayServingLine(const RelayServing& serving);
std::string RelayFallbackLine(const RelayFallback& fallback);
std::string RelayReceivedLine(const RelayReceived& received);

// Everything typed in an agent's output; what is absent was not said.
struct RelayReport {
  std::optional<RelayServing> serving;
  std::vector<RelayFallback> fallbacks;
  std::optional<RelayReceived> received;
};
RelayReport ParseRelayReport(absl::string_view output);

// For people: "falling back from n1 (why)", "received 3 files (8.0 MiB)
// from n1 and chief, removed 0".
std::string DescribeRelayFallback(const RelayFallback& fallback);
std::string DescribeRelayReceived(const RelayReceived& received);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_PROTOCOL_RELAY_REPORT_H_
