// LaunchSteps::Follow: apply attached to the job it launched, following
// the ranks' logs on every node until the job ends, then saying how it
// ended.

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "tools/apply/job_control.h"
#include "tools/apply/launch_steps.h"
#include "tools/plan/node_scripts.h"

namespace fleetplan {
namespace {

// How long the other nodes' logs may take to drain once the chief's ended.
constexpr absl::Duration kDrainAfterTheChief = absl::Seconds(2);
// How long a lost worker's connection waits for the chief's word.
constexpr absl::Duration kWaitForTheChief = absl::Seconds(5);

}  // namespace

ApplyResult LaunchSteps::Follow() {
  const ClusterSpec& spec = context_.spec;
  NodeChannels& channels = context_.channels;
  LogsRequest request;
  request.run_id = run_id_;
  request.follow = true;
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& node : spec.nodes) nodes.push_back(&node);
  const NodeSpec& chief = spec.chief();
  // The chief's part ends last: its agent decides the job's end. Once it
  // has, the others get a moment to drain, and a node cut off from the
  // network is not waited for. A worker's lost connection waits a moment
  // for the chief's word (the coordinator may be ending the job because of
  // that very node) before apply detaches.
  absl::Notification chief_done, all_done, worker_lost;
  bool chief_followed_to_the_end = false;
  std::thread drain([&] {
    while (!chief_done.WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
      if (all_done.HasBeenNotified()) return;
      if (worker_lost.HasBeenNotified()) {
        if (!chief_done.WaitForNotificationWithTimeout(kWaitForTheChief)) channels.CancelAll();
        break;
      }
    }
    if (!all_done.WaitForNotificationWithTimeout(kDrainAfterTheChief)) channels.CancelAll();
  });
  JobControl::LogsCallbacks callbacks;
  callbacks.on_line = [this](const NodeSpec& node, absl::string_view line) {
    context_.reporter.OutputLine(node.name, line);
  };
  callbacks.cancel_for = [&channels](const NodeSpec& node) {
    return channels.CancelFor(node.name);
  };
  callbacks.on_end = [&](const NodeSpec& node, const absl::StatusOr<int>& result) {
    bool cancelled = channels.CancelFor(node.name)->HasBeenNotified();
    if (&node == &chief) {
      chief_followed_to_the_end = result.ok() && !cancelled;
      chief_done.Notify();
      // The chief out of reach: apply detaches at once; the job goes on.
      if (!result.ok() && !cancelled) channels.CancelAll();
    } else if (!result.ok() && !cancelled && !worker_lost.HasBeenNotified()) {
      worker_lost.Notify();
    }
  };
  std::vector<absl::StatusOr<int>> results =
      JobControl(spec, channels.all()).Logs(request, nodes, callbacks);
  all_done.Notify();
  if (!chief_done.HasBeenNotified()) chief_done.Notify();
  drain.join();
  if (context_.state.interrupted()) {
    // An explicit request: stop the job on every node.
    context_.reporter.OutputLine(chief.name, "interrupted: stopping the job on every node");
    absl::Status stopped = Stop();
    return {kExitInterrupted, stopped.ok() ? "interrupted; the job was stopped on every node"
                                           : absl::StrCat("interrupted; ", stopped.message())};
  }
  const ApplyOptions& options = context_.options;
  for (size_t i = 0; i < results.size() && !chief_followed_to_the_end; ++i) {
    if (results[i].ok()) continue;
    return {kExitDetached,
            absl::StrCat("lost the connection to node '", spec.nodes[i].name, "' (",
                         results[i].status().message(), "); run ", run_id_,
                         " goes on without apply. Follow it with ", options.logs_command,
                         ", see it with ", options.status_command, ", stop it with ",
                         options.stop_command)};
  }
  return Ended(ChiefJobState());
}

ApplyResult LaunchSteps::Ended(const std::optional<NodeJobState>& job) const {
  if (!job.has_value() || job->run_id != run_id_) {
    return {kExitApplyFailed, absl::StrCat("cannot read how run ", run_id_,
                                           " ended from the chief's job.json")};
  }
  switch (job->phase) {
    case JobPhase::kSucceeded:
      return {};
    case JobPhase::kFailed: {
      int code = job->exit_status > 0 && job->exit_status < 256 ? job->exit_status
                                                                 : kExitApplyFailed;
      return {code, job->failure.has_value() ? DescribeFailureInFull(*job->failure)
                                             : absl::StrCat("run ", run_id_, " failed")};
    }
    case JobPhase::kStopped:
      return {kExitInterrupted, absl::StrCat("run ", run_id_, " was stopped")};
    default:
      return {kExitApplyFailed,
              absl::StrCat("run ", run_id_, " is still ", JobPhaseName(job->phase),
                           " on the chief although every node's part ended")};
  }
}

}  // namespace fleetplan
