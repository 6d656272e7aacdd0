#ifndef FLEETPLAN_PLUGINS_SLURM_AGENT_STEP_H_
#define FLEETPLAN_PLUGINS_SLURM_AGENT_STEP_H_

// The launch agents of a spec's Slurm nodes, started together as ONE job
// step with one task per node (srun --kill-on-bad-exit), the step started
// by something that lives as long as the allocation:
//
// - in an allocation apply obtained, its batch script (HolderScript in
//   slurm_commands.h), which apply asks through a FIFO on the first host;
// - in an allocation apply runs inside (SLURM_JOB_ID), a srun apply leaves
//   running in a session of its own where apply runs: that allocation is
//   its owner's, and lives as long as that shell or batch script does.
//
// Why a step and not a detached agent: under proctrack/cgroup slurmstepd
// ends everything in a step's cgroup when the step ends, so an agent that
// leaves apply's launch step would die as that step returns. As the task of
// a step that lasts as long as the job, the agent is tracked, signalled and
// accounted by Slurm, and one agent ending badly ends the step on every
// node: a second line of defence behind the agents' own supervision.
//
// Each node's launch (the executor runs them all at once) writes its host's
// agent script, waits for the others, and the last to come starts the step;
// each then waits on its host for its agent's report (ranks started, or why
// not), which is what that node's launch says and exits with.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "plugins/slurm/allocation.h"
#include "plugins/transport.h"

namespace fleetplan {

class SlurmConnection;

class AgentStep {
 public:
  // `allocation` outlives this; `hosts`: the hosts whose nodes launch
  // together (the spec's Slurm nodes, one each).
  AgentStep(const Allocation* allocation, int hosts) : allocation_(allocation), hosts_(hosts) {}

  // One node's launch through `connection` (to `host`, whose node's agent
  // is at `agent`): `command` starts the agent detached (the plan's launch
  // step, the run's id in its --run-id). Returns the exit status and
  // output of the agent's report; an error when the step could not be
  // started or `cancel` came first.
  absl::StatusOr<int> Launch(SlurmConnection& connection, const std::string& host,
                             const std::string& agent, const CommandSpec& command,
                             const OutputCallback& on_output, const absl::Notification* cancel);

 private:
  // The launches of one run, as they come.
  struct Round {
    std::string run_id;
    std::vector<std::string> hosts;
    std::map<std::string, std::string> agents;  // host → its node's agent
    std::optional<absl::Status> failed;   // a node's launch could not join
    std::optional<absl::Status> started;  // the step's start, once tried
  };
  // Starts the step of `round`'s hosts: through the holder, or by a srun of
  // apply's own in an allocation it did not obtain.
  absl::Status Start(const std::string& run_id, const std::vector<std::string>& hosts,
                     const std::map<std::string, std::string>& agents);
  absl::Status StartDetachedHere(const std::string& script, const std::string& run_id);

  const Allocation* allocation_;
  const int hosts_;
  absl::Mutex mu_;
  Round round_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_PLUGINS_SLURM_AGENT_STEP_H_
