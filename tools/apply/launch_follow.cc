// LaunchSteps::Follow: apply attached to the job it launched, following
// the ranks' logs on every node until the job ends, then saying how it
// ended.

#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/apply/job_control.h"
#include "tools/apply/launch_steps.h"
#include "tools/plan/node_scripts.h"

namespace fleetplan {

ApplyResult LaunchSteps::Follow() {
  const ClusterSpec& spec = context_.spec;
  NodeChannels& channels = context_.channels;
  LogsRequest request;
  request.run_id = run_id_;
  request.follow = true;
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& node : spec.nodes) nodes.push_back(&node);
  JobControl::LogsCallbacks callbacks;
  callbacks.on_line = [this](const NodeSpec& node, absl::string_view line) {
    context_.reporter.OutputLine(node.name, line);
  };
  callbacks.cancel_for = [&channels](const NodeSpec& node) {
    return channels.CancelFor(node.name);
  };
  JobControl::Followed followed = JobControl(spec, channels.all())
                                      .Follow(request, nodes, callbacks,
                                              [&channels] { channels.CancelAll(); });
  if (context_.state.interrupted()) {
    // An explicit request: stop the job on every node.
    context_.reporter.OutputLine(spec.chief().name,
                                 "interrupted: stopping the job on every node");
    absl::Status stopped = Stop();
    return {kExitInterrupted, stopped.ok() ? "interrupted; the job was stopped on every node"
                                           : absl::StrCat("interrupted; ", stopped.message())};
  }
  const ApplyOptions& options = context_.options;
  for (size_t i = 0; i < nodes.size() && !followed.chief_to_the_end; ++i) {
    if (followed.results[i].ok()) continue;
    return {kExitDetached,
            absl::StrCat("lost the connection to node '", nodes[i]->name, "' (",
                         followed.results[i].status().message(), "); run ", run_id_,
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
