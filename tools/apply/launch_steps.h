#ifndef FLEETPLAN_TOOLS_APPLY_LAUNCH_STEPS_H_
#define FLEETPLAN_TOOLS_APPLY_LAUNCH_STEPS_H_

// The launch phase and the job's life after it: a job of the spec that
// still runs (refused, left alone, or stopped with --replace), every
// node's agent started at once (the chief's coordinates the job: fail-fast,
// restarts, heartbeats; see tools/agent/node_agent.h), then, unless told to
// detach, the ranks' logs followed on every node until the job ends
// (launch_follow.cc). Ctrl-C stops the job everywhere; a lost connection
// only detaches.

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "tools/apply/step_context.h"
#include "tools/plan/forecast.h"
#include "tools/protocol/job_state.h"

namespace fleetplan {

class LaunchSteps {
 public:
  // What the nodes hold of earlier applies (Executor::ReadNodeStates).
  using ReadStates = std::function<absl::StatusOr<std::map<std::string, NodeState>>()>;

  // `context` must outlive this. `launched` runs once the job is launched
  // and recorded (apply gives its lock back then).
  LaunchSteps(const StepContext& context, ReadStates read_states,
              std::function<void()> launched)
      : context_(context), read_states_(std::move(read_states)),
        launched_(std::move(launched)) {}

  // A job of this spec that still runs (`job`, read on the chief): nullopt
  // when none does; else the result that ends this apply (nothing changed:
  // 0; changes refused), or nullopt once --replace stopped it. An ended job
  // is kept for the launch phase.
  std::optional<ApplyResult> CheckRunningJob(const std::optional<NodeJobState>& job);
  // Forgets the ended job an earlier run found.
  void Reset() { ended_job_.reset(); }

  ApplyResult RunPhase(const Phase& phase);
  // One node's launch step: starts its agent detached, returns once its
  // ranks run.
  StepOutcome Run(const Step& step);

  // The chief's job.json, nullopt when it has none or it cannot be read.
  std::optional<NodeJobState> ChiefJobState() const;
  // Stops the job on every node; the first error names its node.
  absl::Status Stop() const;

 private:
  // Starts every node's agent at once; the first node that failed by
  // itself cancels the others. Returns its failure, or "".
  std::string StartAgents(const Phase& phase);
  // After the launch: detached, or followed to its end.
  ApplyResult AfterLaunch(const ApplyResult& recorded);
  // Follows every node's rank logs until the job ends; its result
  // (launch_follow.cc).
  ApplyResult Follow();
  // How the job the chief's job.json describes ended, as apply's result.
  ApplyResult Ended(const std::optional<NodeJobState>& job) const;
  // What changes an apply would make to a running job, as "phase on node".
  std::vector<std::string> ChangesToRunningJob(
      const std::map<std::string, NodeState>& states) const;

  const StepContext& context_;
  ReadStates read_states_;
  std::function<void()> launched_;
  std::string run_id_;  // of the job this apply launches
  // The chief's job as the run found it, when it had ended.
  std::optional<NodeJobState> ended_job_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_LAUNCH_STEPS_H_
