#ifndef FLEETPLAN_TOOLS_UTIL_TIMED_CANCEL_H_
#define FLEETPLAN_TOOLS_UTIL_TIMED_CANCEL_H_

// A cancellation for one command on a node that fires when a wider one
// (the node's, apply's) does or when the command has run for `timeout`,
// whichever comes first, so that a command hanging on a node (a stuck
// mount, a script waiting for input) fails instead of holding apply forever.

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace fleetplan {

class TimedCancel {
 public:
  // `parent` may be null. An infinite `timeout` watches nothing: get()
  // is `parent` itself.
  TimedCancel(const absl::Notification* parent, absl::Duration timeout);
  ~TimedCancel();
  TimedCancel(const TimedCancel&) = delete;
  TimedCancel& operator=(const TimedCancel&) = delete;

  // What the command is cancelled by.
  const absl::Notification* get() const;
  // True once the timeout fired (and the parent had not).
  bool timed_out() const;

 private:
  const absl::Notification* parent_;
  absl::Notification fired_;
  absl::Notification done_;
  bool timed_out_ = false;  // written before fired_ is notified
  std::thread watcher_;
};

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_UTIL_TIMED_CANCEL_H_
