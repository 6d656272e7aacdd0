#ifndef FLEETPLAN_TOOLS_APPLY_PROGRESS_H_
#define FLEETPLAN_TOOLS_APPLY_PROGRESS_H_

// How apply shows what it does: a live line per node on a terminal, plain
// `[node] phase: changed (1.2s)` lines otherwise, or JSON event lines for
// machines; the preflight summary as a table, or as `check` events. The
// executor calls a ProgressReporter from many threads.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/apply/preflight_report.h"
#include "tools/plan/plan.h"
#include "tools/util/exit_codes.h"

namespace fleetplan {

enum class StepStatus { kRunning, kChanged, kUnchanged, kFailed, kCancelled };

// "running", "changed", "unchanged", "failed", "cancelled".
absl::string_view StepStatusName(StepStatus status);

// What one node's sync cost this machine's link: `uplink_bytes` left this
// machine for it (all of `bytes` when sent directly; only what was sent
// directly, such as the launch agent, when the chief relayed the rest).
struct SyncTraffic {
  std::string node;
  // "direct", "relay", "relay (fallback to the chief)" or "direct (relay
  // unreachable)"
  std::string via;
  uint64_t bytes = 0;         // file bytes written on the node
  uint64_t uplink_bytes = 0;  // of those, sent from this machine
  absl::Duration elapsed;
  std::string from;  // the node a relayed node's files came from
};


// "sync: 40.0 MiB sent from this machine for 80.0 MiB written on 2 nodes in
// 3.2s (head 40.0 MiB direct 3.1s, w1 0 B relay 0.2s)".
std::string SyncSummaryLine(const std::vector<SyncTraffic>& nodes, absl::Duration elapsed);

class ProgressReporter {
 public:
  virtual ~ProgressReporter() = default;

  // A step began on its node.
  virtual void StepStarted(const Step& step) = 0;
  // A step ended; `detail` says what it did ("3 files, 12 KiB") or why it
  // failed, and may be empty.
  virtual void StepFinished(const Step& step, StepStatus status,
                            absl::Duration elapsed, absl::string_view detail) = 0;
  // One complete line of a node's job output (the agent prefixes
  // `[node/rank]`), without its newline.
  virtual void OutputLine(absl::string_view node, absl::string_view line) = 0;
  // What the preflight checks found on every node, once they have all
  // ended (or apply stopped before they could). Default: nothing.
  virtual void ChecksReported(const PreflightReport& report) {}
  // The end of a sync phase that wrote something: per node and in all,
  // what it sent from this machine and how long it took. Default: nothing.
  virtual void SyncReported(const std::vector<SyncTraffic>& nodes, absl::Duration elapsed) {}
  // The end of the apply: `ok`, and the message when it failed.
  // `message`: why it failed, or, on success, what it leaves running.
  virtual void Finished(bool ok, int exit_code, absl::string_view message) = 0;
};

// kSummary prints the preflight summary alone (`plan --check`).
enum class ReportStyle { kPlain, kLive, kJson, kSummary };

// A reporter writing to `out` (not owned). kLive redraws one line per node
// in `nodes` and needs a terminal; `color` adds ANSI colours (all but
// kJson).
std::unique_ptr<ProgressReporter> MakeReporter(ReportStyle style, std::FILE* out,
                                               bool color,
                                               std::vector<std::string> nodes);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_PROGRESS_H_
