#ifndef FLEETPLAN_TOOLS_APPLY_BUILD_STEP_H_
#define FLEETPLAN_TOOLS_APPLY_BUILD_STEP_H_

// The build phase: `bazel build` of the job's program on this machine, in
// the workspace. What it built is synced to every node with the source.

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tools/apply/step_context.h"
#include "tools/sync/manifest.h"

namespace fleetplan {

class BuildStep {
 public:
  explicit BuildStep(const StepContext& context) : context_(context) {}

  // Builds; unchanged when the binary's content is what it was before.
  StepOutcome Run(const Step& step) ABSL_LOCKS_EXCLUDED(mu_);
  // What this run built, as files for the sync to add.
  std::vector<ExtraFile> built() const ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets what an earlier run built.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const StepContext& context_;
  mutable absl::Mutex mu_;
  std::vector<ExtraFile> built_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_BUILD_STEP_H_
