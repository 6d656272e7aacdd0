#ifndef FLEETPLAN_TOOLS_CLI_TOP_COMMAND_H_
#define FLEETPLAN_TOOLS_CLI_TOP_COMMAND_H_

// `top`: every node's CPU, memory and GPUs and every rank's CPU, memory,
// output and steps, read through the spec's transports (each node's agent
// samples its own: fleetplan-agent top, one short command per node, all
// nodes at once) and refreshed until the user quits. Nothing runs on the
// nodes between refreshes.

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tools/cli/spec_target.h"
#include "tools/cli/top_view.h"

namespace fleetplan {

struct TopOptions {
  bool once = false;  // one frame (or one JSON object) and exit
  absl::Duration interval = absl::Seconds(2);
  // A full-screen view (the main asks for one on a terminal, without
  // --once or --json); else frames or JSON objects one after another.
  bool screen = false;
  bool color = false;
};

// One refresh: every node's agent asked at once (JobControl::Top) and the
// answers gathered into the job's view (GatherTop). A node that is not
// there is in the view's `unread` like one that could not be read; see
// `not_there`. `cancel` (may be null) ends the nodes' commands.
TopView ReadTopView(const OpenedTarget& opened, const absl::Notification* cancel);

// With `target.json`, one JSON object per refresh, on a line of its own
// (tools/protocol/top_report.h; a node that could not be read has nulls
// and is named on stderr); else the frame for people (top_view.h). Exit 0;
// with `once`, 1 when a node could not be read; 130 when interrupted
// (Ctrl-C, SIGTERM) before the end; 2 for bad input. `q` quits the
// full-screen view with 0.
int RunTopCommand(const JobTarget& target, const TopOptions& options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_CLI_TOP_COMMAND_H_
