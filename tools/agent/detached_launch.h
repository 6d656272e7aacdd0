#ifndef FLEETPLAN_TOOLS_AGENT_DETACHED_LAUNCH_H_
#define FLEETPLAN_TOOLS_AGENT_DETACHED_LAUNCH_H_

// How `fleetplan-agent launch` runs the node's part of a job
// (node_agent.h): in the foreground of whoever started it, or detached.
// Both turn SIGTERM, SIGINT (and, in the foreground, SIGHUP) into a stop
// of the job, and return the process's exit status.

#include "tools/agent/node_agent.h"

namespace fleetplan {

// Runs the job here to its end: the job's exit status; 2 for bad options.
int RunForeground(NodeAgentOptions options);

// Forks the agent into a session of its own (so the end of the transport's
// session, a closed terminal or a killed apply leaves it running), its
// output in agent.log, and returns once its ranks started: 0 then, else
// the job's status with what the agent said. With $FLEETPLAN_LAUNCH_REPORT
// set (a Slurm job step's task), it says so in that file instead (first
// line the status, then the words) and waits for the agent: the step lives
// as long as the agent, and the agent's status is the task's (srun
// --kill-on-bad-exit ends the step everywhere on a failure), save for a
// job the agents ended among themselves and wrote down, which is 0.
int RunDetached(NodeAgentOptions options);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_AGENT_DETACHED_LAUNCH_H_
