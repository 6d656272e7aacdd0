#ifndef FLEETPLAN_TOOLS_CLI_TOP_VIEW_H_
#define FLEETPLAN_TOOLS_CLI_TOP_VIEW_H_

// What `top` makes of every node's answer (JobControl::Top): the job's
// report, its stragglers, and the frame a person reads. Pure: no I/O.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/protocol/top_report.h"

namespace fleetplan {

// A running rank is a straggler when its steps per second are under this
// share of the median of the running ranks' (two or more with a rate) ...
inline constexpr double kStragglerRateShare = 0.5;
// ... or when it has written nothing for this long while another running
// rank of the job wrote in that time.
inline constexpr absl::Duration kStragglerSilence = absl::Seconds(60);

// The rule above, in words, for --help and the view.
std::string StragglerRule();

// The job as `top` shows it.
struct TopView {
  // The job's state, run and generation from the chief's answer (starting
  // counts as running, a lost agent as failed; "unknown" when the chief
  // could not be read), every node in spec order; a node that could not
  // be read has nothing known (nulls, GPUs unknown, no ranks).
  TopReport report;
  std::map<std::string, std::string> unread;  // node → why it could not be read
};

// `answers[i]` is node `nodes[i]`'s; `chief` indexes `nodes`.
TopView GatherTop(const std::vector<std::string>& nodes, size_t chief,
                  const std::vector<absl::StatusOr<TopReport>>& answers);

struct Straggler {
  std::string node;
  int rank = 0;
  std::string why;  // "0.21x the median steps/s", "no output for 1m 12s"
};

// The report's stragglers by the rule above, in the report's order.
std::vector<Straggler> FindStragglers(const TopReport& report);

struct FrameOptions {
  std::string spec;     // as typed
  absl::Time now;       // shown in the title, local time
  absl::TimeZone zone = absl::UTCTimeZone();
  bool color = false;   // stragglers and unknowns in colour
  bool live = false;    // say how to quit
};

// The frame for people: a title, the node table (CPU, memory, each GPU),
// the rank table (state, CPU, resident memory, output age, step, steps
// per second, straggler notes) and the nodes that could not be read.
// Sizes in KiB/MiB/GiB, ages as 1m 12s, counts with separators; an
// unknown figure is "?", a figure that does not apply "-". No trailing
// blanks, no newline at the end of a line.
std::vector<std::string> RenderTopFrame(const TopView& view, const FrameOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_TOP_VIEW_H_
