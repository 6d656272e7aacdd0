#ifndef FLEETPLAN_TOOLS_APPLY_CHECK_STEPS_H_
#define FLEETPLAN_TOOLS_APPLY_CHECK_STEPS_H_

// The preflight checks: the preflight phase (every node's checks at once,
// the chief's beside the others with its stdin held until they end; all
// nodes or none; the cluster-wide conclusions and the summary; a stop
// before launch when anything failed), and the workdir check each sync
// runs first. What every check found goes into one report.

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tools/apply/preflight_report.h"
#include "tools/apply/step_context.h"

namespace fleetplan {

class CheckSteps {
 public:
  // `context` and `scheduler` must outlive this.
  CheckSteps(const StepContext& context, const StepScheduler& scheduler);

  // Runs the checks of `script` for `step`; failed checks fail the step
  // without stopping the phase.
  StepOutcome Run(const Step& step, const std::string& script,
                  const absl::Notification* serving_done) ABSL_LOCKS_EXCLUDED(mu_);
  // Is `node`'s workdir there, writable, with room for `bytes`? (In the
  // agent where the node has a session, else in the shell.) A failure
  // stops the phase.
  StepOutcome Workdir(const Step& step, const NodeSpec& node, uint64_t bytes)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The preflight phase; skipped when nothing it checks changed since the
  // last launch that succeeded.
  ApplyResult RunPhase(const Phase& phase) ABSL_LOCKS_EXCLUDED(mu_);

  // Hands the report to the reporter, once, when anything was checked.
  void Report() ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets what an earlier run found.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // What the checks that printed `output` found, added to the report; `ran`
  // is how their command ended.
  StepOutcome Findings(const Step& step, StepOutcome ran, const std::string& output)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A node of the check phase that is not there yet: its checks are
  // reported skipped, with why.
  void SkipNotThere(const Step& step) ABSL_LOCKS_EXCLUDED(mu_);
  // Runs every step of the phase: the serving ones beside the rest.
  void RunAllOf(const Phase& phase);
  // "no check could run on node 'a': why" for each node that is there and
  // ran none (only skips); empty when every such node ran one.
  std::string NoCheckRan() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StepContext& context_;
  const StepScheduler& scheduler_;
  absl::Mutex mu_;
  PreflightReport report_ ABSL_GUARDED_BY(mu_);
  bool reported_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_CHECK_STEPS_H_
