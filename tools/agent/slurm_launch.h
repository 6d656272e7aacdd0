#ifndef FLEETPLAN_TOOLS_AGENT_SLURM_LAUNCH_H_
#define FLEETPLAN_TOOLS_AGENT_SLURM_LAUNCH_H_

// The two waits of a launch on Slurm (plugins/slurm/agent_step.h), run by
// the agent on the allocation's hosts: handing the launch script to the
// allocation's batch script (`fleetplan-agent slurm-request`), and waiting
// for a host's launch agent to report (`fleetplan-agent slurm-await`).

#include <cstdio>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/protocol/agent_command.h"

namespace fleetplan {

// Waits up to `request.timeout` for the batch script's FIFO
// (`<dir>/requests`; Slurm starts a batch script after its node's prolog,
// which may be a while after the job shows RUNNING), writes `script` as
// `<dir>/launch-<run>.sh` (mode 0600, renamed into place) and names the
// run to the batch script. 0 once named; 1 with why on `err`.
int HandLaunchToHolder(const AgentSlurmRequest& request, absl::string_view script,
                       std::FILE* err, absl::Duration poll = absl::Milliseconds(100));

// Waits up to `await.timeout` for the agent's report (its status on the
// first line, then its words), prints the words to `out` and returns the
// status. 1, saying why on `out`, when the agents' job step ended first
// (`await.step_exit` appeared: srun's status, and what it said from
// `await.step_log`), the report is not one, or nothing came in time.
int AwaitLaunchReport(const AgentSlurmAwait& await, std::FILE* out,
                      absl::Duration poll = absl::Milliseconds(100));

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_SLURM_LAUNCH_H_
