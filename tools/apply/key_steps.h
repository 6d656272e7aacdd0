#ifndef FLEETPLAN_TOOLS_APPLY_KEY_STEPS_H_
#define FLEETPLAN_TOOLS_APPLY_KEY_STEPS_H_

// The keys phase: the chief's ensure-key makes its ssh key when missing
// and prints the public half; every other node's authorize-key adds it to
// its authorized_keys. The plan puts ensure-key in the phase's first wave,
// so it has ended before any authorize-key starts.

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tools/apply/step_context.h"

namespace fleetplan {

class KeySteps {
 public:
  explicit KeySteps(const StepContext& context) : context_(context) {}

  StepOutcome EnsureKey(const Step& step) ABSL_LOCKS_EXCLUDED(mu_);
  StepOutcome AuthorizeKey(const Step& step) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const StepContext& context_;
  absl::Mutex mu_;
  std::string chief_key_ ABSL_GUARDED_BY(mu_);  // as ensure-key printed it
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_KEY_STEPS_H_
