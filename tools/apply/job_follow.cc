// JobControl::Follow: the one policy for following a job to its end, for
// apply (attached) and `logs --follow`.

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tools/apply/job_control.h"

namespace fleetplan {
namespace {

// How long the other nodes' logs may take to drain once the chief's ended.
constexpr absl::Duration kDrainAfterTheChief = absl::Seconds(2);
// How long a lost worker's connection waits for the chief's word.
constexpr absl::Duration kWaitForTheChief = absl::Seconds(5);

// Watches the nodes' ends and cancels what is left to wait for.
class FollowPolicy {
 public:
  explicit FollowPolicy(const std::function<void()>& cancel_all) : cancel_all_(cancel_all) {
    watcher_ = std::thread([this] { Watch(); });
  }
  ~FollowPolicy() {
    all_done_.Notify();
    if (!chief_done_.HasBeenNotified()) chief_done_.Notify();
    watcher_.join();
  }

  // `lost`: its connection broke before the job's end.
  void ChiefEnded(bool lost) {
    chief_done_.Notify();
    if (lost) cancel_all_();
  }
  void WorkerLost() {
    if (!worker_lost_.HasBeenNotified()) worker_lost_.Notify();
  }

 private:
  void Watch() {
    while (!chief_done_.WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
      if (all_done_.HasBeenNotified()) return;
      if (worker_lost_.HasBeenNotified()) {
        if (!chief_done_.WaitForNotificationWithTimeout(kWaitForTheChief)) cancel_all_();
        break;
      }
    }
    if (!all_done_.WaitForNotificationWithTimeout(kDrainAfterTheChief)) cancel_all_();
  }

  const std::function<void()>& cancel_all_;
  absl::Notification chief_done_, all_done_, worker_lost_;
  std::thread watcher_;
};

}  // namespace

JobControl::Followed JobControl::Follow(const LogsRequest& request,
                                        const std::vector<const NodeSpec*>& nodes,
                                        const LogsCallbacks& callbacks,
                                        const std::function<void()>& cancel_all) const {
  Followed followed;
  const NodeSpec& chief = spec_.chief();
  bool with_chief = false;
  for (const NodeSpec* node : nodes) with_chief |= node == &chief;
  if (!with_chief) {
    followed.results = Logs(request, nodes, callbacks);
    return followed;
  }
  FollowPolicy policy(cancel_all);
  LogsCallbacks watched = callbacks;
  watched.on_end = [&](const NodeSpec& node, const absl::StatusOr<int>& result) {
    const absl::Notification* cancel = callbacks.cancel_for ? callbacks.cancel_for(node) : nullptr;
    bool cancelled = cancel != nullptr && cancel->HasBeenNotified();
    if (&node == &chief) {
      followed.chief_to_the_end = result.ok() && !cancelled;
      policy.ChiefEnded(/*lost=*/!result.ok() && !cancelled);
    } else if (!result.ok() && !cancelled && !spec_.Elastic()) {
      // An elastic job goes on without a lost worker: follow the rest.
      policy.WorkerLost();
    }
    if (callbacks.on_end) callbacks.on_end(node, result);
  };
  followed.results = Logs(request, nodes, watched);
  return followed;
}

}  // namespace fleetplan
