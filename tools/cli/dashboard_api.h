#ifndef FLEETPLAN_TOOLS_CLI_DASHBOARD_API_H_
#define FLEETPLAN_TOOLS_CLI_DASHBOARD_API_H_

// The dashboard's parts that need no socket: the checks every request
// passes (the Host header, the per-run token), the ranks' output kept for
// the page (log lines and the trainer's metric points, every generation of
// the run, restarts marked), and the JSON of each endpoint
// (dashboard_server.h serves them).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "tools/cli/top_view.h"

namespace fleetplan {

// A fresh token for one run of the dashboard: 32 bytes of OpenSSL's
// RAND_bytes, in hex. Internal when the generator fails.
absl::StatusOr<std::string> NewDashboardToken();

// True when `given` is `expected`; the bytes are compared in constant time
// (CRYPTO_memcmp), so the time taken tells nothing of how much matched.
bool TokenMatches(absl::string_view expected, absl::string_view given);

// True when `host`, a request's Host header, names the dashboard's own
// address: 127.0.0.1:PORT or localhost:PORT. Anything else is a page of
// another site that reached the loopback address through its own name
// (DNS rebinding).
bool HostAllowed(absl::string_view host, int port);

// Why a request is refused: the HTTP status and a line for the body.
struct Refusal {
  int status = 403;
  std::string message;
};

// The checks before any handler: the Host header, then the token (from
// the X-Fleetplan-Token header or the `token` query parameter).
std::optional<Refusal> CheckRequest(absl::string_view host, absl::string_view given_token,
                                    absl::string_view token, int port);

// /api/top's body: {"report": the TopReport as `top --json` prints it,
// "stragglers": [{"node", "rank", "why"}], "unread": {node: why}}.
nlohmann::json TopPageJson(const TopView& view);

// Which log lines /api/logs returns.
struct LogFilter {
  std::string node;          // empty: every node
  std::optional<int> rank;   // nullopt: every rank, and the agents' own lines
  uint64_t since = 0;        // lines after this sequence number
  size_t limit = 1000;       // at most the last this many
};

// /api/logs's query (`node`, `rank`, `since`, each may be empty).
// InvalidArgument naming a parameter that is not a number.
absl::StatusOr<LogFilter> ParseLogFilter(absl::string_view node, absl::string_view rank,
                                         absl::string_view since);

// A sequence number from a query (`since`); empty is 0. InvalidArgument
// when it is not one.
absl::StatusOr<uint64_t> ParseSince(absl::string_view since);

// What the ranks of one run printed, as the agents' `logs` prints it
// ("[node/rank] text"), kept for the page: each line with a sequence
// number, and of the trainer's "step" events a point per rank with the
// generation it came from (the agent's "--- restart N of M ---" line in a
// rank's log starts generation N). Thread-safe.
class RunOutput {
 public:
  explicit RunOutput(size_t max_lines = 200000) : max_lines_(max_lines) {}

  // Forgets what was kept: the page follows run `run_id` from now on.
  void Reset(const std::string& run_id);
  // One line that node `node`'s agent printed.
  void Add(absl::string_view node, absl::string_view line);

  // /api/metrics's body: {"run_id", "next": the last sequence number,
  // "points": [{"seq", "node", "rank", "generation", "step", "loss",
  // "samples_per_sec"}], "restarts": [{"seq", "node", "rank",
  // "generation", "line"}]}, those after `since`.
  nlohmann::json MetricsJson(uint64_t since) const;
  // /api/logs's body: {"run_id", "next", "lines": [{"seq", "node",
  // "rank", "line"}]}; the trainer's metric lines as `logs` shows them to
  // people.
  nlohmann::json LogsJson(const LogFilter& filter) const;

 private:
  struct Line {
    uint64_t seq;
    std::string node;
    std::optional<int> rank;
    std::string text;
  };
  void AddRankLine(const Line& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_lines_;
  mutable absl::Mutex mu_;
  std::string run_id_ ABSL_GUARDED_BY(mu_);
  uint64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Line> lines_ ABSL_GUARDED_BY(mu_);
  std::deque<nlohmann::json> points_ ABSL_GUARDED_BY(mu_);
  std::vector<nlohmann::json> restarts_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, int>, int> generation_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_DASHBOARD_API_H_
