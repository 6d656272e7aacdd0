#ifndef FLEETPLAN_TOOLS_APPLY_STEP_CONTEXT_H_
#define FLEETPLAN_TOOLS_APPLY_STEP_CONTEXT_H_

// What every runner of a plan's steps is handed by the executor: the spec
// and plan it runs, apply's options and reporter, the nodes' channels,
// their step records and how far the run has got. Plus the one way a step
// runs a command on its node (RunStepCommand) and the one way steps are
// run and reported (StepScheduler).

#include <functional>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "tools/apply/apply_options.h"
#include "tools/apply/node_channels.h"
#include "tools/apply/progress.h"
#include "tools/apply/run_state.h"
#include "tools/apply/step_outcome.h"
#include "tools/apply/step_records.h"
#include "tools/plan/plan.h"
#include "tools/spec/cluster_spec.h"

namespace fleetplan {

struct StepContext {
  const ClusterSpec& spec;
  const Plan& plan;
  const ApplyOptions& options;
  ProgressReporter& reporter;
  NodeChannels& channels;
  StepRecords& records;
  RunState& state;

  // The spec's node of that name, or null.
  const NodeSpec* FindNode(const std::string& name) const;
  // The preamble of the plan's phase of `kind` ("" when none).
  const std::string& PhasePreamble(PhaseKind kind) const;
};

// The failure of a step whose node the spec does not list.
StepOutcome UnknownNode(const Step& step);

// Runs `command` for `step` on its node (on this machine, in the
// workspace, for a controller step), bounded by --step-timeout except on
// this machine; its output goes to `output`. With `serving_done`, stdin is
// held until it is notified, which also cancels the command. A failure
// names the node, phase and step, the command and the last of its output.
StepOutcome RunStepCommand(const StepContext& context, const Step& step, const std::string& command,
                           std::string* output, const absl::Notification* serving_done = nullptr);

// Runs steps as apply does: each reported to the reporter as it starts and
// ends, a change noted, a failure that stops its phase noted (and no new
// step started after it).
class StepScheduler {
 public:
  using Execute =
      std::function<StepOutcome(const Step& step, const absl::Notification* serving_done)>;
  // `context` must outlive this.
  StepScheduler(const StepContext& context, Execute execute)
      : context_(context), execute_(std::move(execute)) {}

  // `serving_done` (for a step that serves its phase): notified once the
  // phase's other steps have ended, which closes the step's stdin.
  void RunOne(const Step& step, const absl::Notification* serving_done = nullptr) const;
  // Each of `steps` on up to `threads` threads; none starts once stopping.
  void RunAll(const std::vector<const Step*>& steps, int threads) const;

 private:
  const StepContext& context_;
  Execute execute_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_STEP_CONTEXT_H_
