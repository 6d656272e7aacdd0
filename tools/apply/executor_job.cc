// The executor's part in a job's life after launch: following the ranks'
// logs on every node while apply stays attached, stopping the job, and
// finding a job of the same spec that still runs.

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tools/apply/executor.h"
#include "tools/apply/job_control.h"
#include "tools/plan/forecast.h"
#include "tools/plan/node_scripts.h"

namespace fleetplan {
namespace {

// How long the other nodes' logs may take to drain once the chief's ended.
constexpr absl::Duration kDrainAfterTheChief = absl::Seconds(2);
// How long a lost worker's connection waits for the chief's word.
constexpr absl::Duration kWaitForTheChief = absl::Seconds(5);

std::string Since(absl::Time time) {
  if (time == absl::InfinitePast()) return "";
  return absl::StrCat(" since ", absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", time,
                                                  absl::UTCTimeZone()));
}

}  // namespace

std::optional<NodeJobState> Executor::ReadChiefJobState() {
  return JobControl(spec_, connections_).ChiefState();
}

absl::Status Executor::StopJob() { return JobControl(spec_, connections_).Stop(); }

std::optional<ApplyResult> Executor::CheckRunningJob(const std::optional<NodeJobState>& job) {
  if (FindPhase(plan_, PhaseKind::kLaunch) == nullptr) return std::nullopt;
  // An ended job stays ended until this apply launches: the launch phase
  // decides from it without asking the chief again.
  if (job.has_value() && IsFinal(job->phase)) ended_job_ = job;
  if (!job.has_value() || IsFinal(job->phase) || IsStale(*job, absl::Now())) {
    return std::nullopt;
  }
  std::string running = absl::StrCat("run ", job->run_id, " of this spec is ",
                                     JobPhaseName(job->phase), " (generation ", job->generation,
                                     Since(job->started_at), ")");
  if (options_.replace) {
    reporter_.OutputLine(spec_.chief().name, absl::StrCat(running, "; stopping it (--replace)"));
    if (absl::Status stopped = StopJob(); !stopped.ok()) {
      return ApplyResult{kExitApplyFailed, std::string(stopped.message())};
    }
    return std::nullopt;
  }
  absl::StatusOr<std::map<std::string, NodeState>> states = ReadNodeStates();
  if (!states.ok()) return ApplyResult{kExitApplyFailed, std::string(states.status().message())};
  std::vector<StepForecast> forecasts = ForecastPlan(plan_, *states, options_.secrets_digest);
  std::vector<std::string> changes;
  size_t index = 0;
  for (const Phase& phase : plan_.phases) {
    for (const Step& step : phase.steps) {
      const StepForecast& forecast = forecasts[index++];
      if (forecast.change == Change::kAdd || forecast.change == Change::kChange) {
        changes.push_back(absl::StrCat(PhaseName(phase.kind), " on ", step.node));
      }
    }
  }
  if (changes.empty()) {
    ApplyResult result;
    result.note = absl::StrCat(running, "; nothing changed, nothing to do. See it with ",
                               options_.status_command, " and ", options_.logs_command);
    return result;
  }
  constexpr size_t kNamed = 6;
  std::string named = absl::StrJoin(changes.begin(),
                                    changes.begin() + std::min(kNamed, changes.size()), ", ");
  ApplyResult refused{
      kExitApplyFailed,
      absl::StrCat(running, ", and this apply would change it (", named,
                   changes.size() > kNamed ? ", ..." : "", "). Stop it first with ",
                   options_.stop_command, ", or apply with --replace (stop, then apply)")};
  refused.job_untouched = true;
  return refused;
}

ApplyResult Executor::FollowJob(const std::string& run_id) {
  LogsRequest request;
  request.run_id = run_id;
  request.follow = true;
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& node : spec_.nodes) nodes.push_back(&node);
  const NodeSpec& chief = spec_.chief();
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
        if (!chief_done.WaitForNotificationWithTimeout(kWaitForTheChief)) CancelAll();
        break;
      }
    }
    if (!all_done.WaitForNotificationWithTimeout(kDrainAfterTheChief)) CancelAll();
  });
  JobControl::LogsCallbacks callbacks;
  callbacks.on_line = [this](const NodeSpec& node, absl::string_view line) {
    reporter_.OutputLine(node.name, line);
  };
  callbacks.cancel_for = [this](const NodeSpec& node) { return CancelFor(node.name); };
  callbacks.on_end = [&](const NodeSpec& node, const absl::StatusOr<int>& result) {
    bool cancelled = CancelFor(node.name)->HasBeenNotified();
    if (&node == &chief) {
      chief_followed_to_the_end = result.ok() && !cancelled;
      chief_done.Notify();
      // The chief out of reach: apply detaches at once; the job goes on.
      if (!result.ok() && !cancelled) CancelAll();
    } else if (!result.ok() && !cancelled && !worker_lost.HasBeenNotified()) {
      worker_lost.Notify();
    }
  };
  std::vector<absl::StatusOr<int>> results =
      JobControl(spec_, connections_).Logs(request, nodes, callbacks);
  all_done.Notify();
  if (!chief_done.HasBeenNotified()) chief_done.Notify();
  drain.join();
  {
    absl::MutexLock lock(&mu_);
    if (interrupted_) {
      // An explicit request: stop the job on every node.
      reporter_.OutputLine(chief.name, "interrupted: stopping the job on every node");
      absl::Status stopped = StopJob();
      return {kExitInterrupted, stopped.ok() ? "interrupted; the job was stopped on every node"
                                             : absl::StrCat("interrupted; ", stopped.message())};
    }
  }
  for (size_t i = 0; i < results.size() && !chief_followed_to_the_end; ++i) {
    if (results[i].ok()) continue;
    return {kExitDetached,
            absl::StrCat("lost the connection to node '", spec_.nodes[i].name, "' (",
                         results[i].status().message(), "); run ", run_id,
                         " goes on without apply. Follow it with ", options_.logs_command,
                         ", see it with ", options_.status_command, ", stop it with ",
                         options_.stop_command)};
  }
  std::optional<NodeJobState> job = ReadChiefJobState();
  if (!job.has_value() || job->run_id != run_id) {
    return {kExitApplyFailed, absl::StrCat("cannot read how run ", run_id,
                                           " ended from the chief's job.json")};
  }
  switch (job->phase) {
    case JobPhase::kSucceeded:
      return {};
    case JobPhase::kFailed: {
      int code = job->exit_status > 0 && job->exit_status < 256 ? job->exit_status
                                                                 : kExitApplyFailed;
      return {code, job->failure.has_value() ? DescribeFailureInFull(*job->failure)
                                             : absl::StrCat("run ", run_id, " failed")};
    }
    case JobPhase::kStopped:
      return {kExitInterrupted, absl::StrCat("run ", run_id, " was stopped")};
    default:
      return {kExitApplyFailed,
              absl::StrCat("run ", run_id, " is still ", JobPhaseName(job->phase),
                           " on the chief although every node's part ended")};
  }
}

}  // namespace fleetplan
