#include "tools/util/timed_cancel.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace fleetplan {
namespace {

// How often the parent is looked at: Notification has no way to wait for
// one of two.
constexpr absl::Duration kPoll = absl::Milliseconds(20);

}  // namespace

TimedCancel::TimedCancel(const absl::Notification* parent, absl::Duration timeout)
    : parent_(parent) {
  if (timeout == absl::InfiniteDuration()) return;
  absl::Time deadline = absl::Now() + timeout;
  watcher_ = std::thread([this, deadline] {
    while (true) {
      if (parent_ != nullptr && parent_->HasBeenNotified()) break;
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        timed_out_ = true;
        break;
      }
      if (done_.WaitForNotificationWithTimeout(std::min(left, kPoll))) return;
    }
    fired_.Notify();
  });
}

TimedCancel::~TimedCancel() {
  if (!watcher_.joinable()) return;
  done_.Notify();
  watcher_.join();
}

const absl::Notification* TimedCancel::get() const {
  return watcher_.joinable() ? &fired_ : parent_;
}

bool TimedCancel::timed_out() const { return fired_.HasBeenNotified() && timed_out_; }

}  // namespace fleetplan
