#ifndef FLEETPLAN_TOOLS_APPLY_RUN_STATE_H_
#define FLEETPLAN_TOOLS_APPLY_RUN_STATE_H_

// How far one run of a plan has got, shared by the executor and its step
// runners, from any thread: the first failure that stops it, an interrupt,
// and whether anything changed (and whether anything a preflight check
// looks at did, so the checks run again).

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace fleetplan {

class RunState {
 public:
  // Forgets what an earlier run found; the interrupt stays.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);

  // The first failure is the one reported; later ones are dropped.
  void NoteFailure(std::string message) ABSL_LOCKS_EXCLUDED(mu_);
  bool failed() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string failure() const ABSL_LOCKS_EXCLUDED(mu_);

  void Interrupt() ABSL_LOCKS_EXCLUDED(mu_);
  bool interrupted() const ABSL_LOCKS_EXCLUDED(mu_);
  // Failed or interrupted: no new step starts.
  bool Stopping() const ABSL_LOCKS_EXCLUDED(mu_);

  // A step changed something on a node; `checked` when a preflight check
  // looks at what it changed.
  void NoteChanged(bool checked) ABSL_LOCKS_EXCLUDED(mu_);
  // A sync changed something a check looks at (the program, the agent).
  void NoteCheckedInputsChanged() ABSL_LOCKS_EXCLUDED(mu_);
  bool anything_changed() const ABSL_LOCKS_EXCLUDED(mu_);
  bool checked_inputs_changed() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  std::string failure_ ABSL_GUARDED_BY(mu_);
  bool anything_changed_ ABSL_GUARDED_BY(mu_) = false;
  bool checked_inputs_changed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_APPLY_RUN_STATE_H_
