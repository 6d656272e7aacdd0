#include "tools/apply/launch_steps.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tools/apply/job_control.h"
#include "tools/apply/parallel_for.h"
#include "tools/plan/node_scripts.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {
namespace {

std::string Since(absl::Time time) {
  if (time == absl::InfinitePast()) return "";
  return absl::StrCat(" since ", absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", time,
                                                  absl::UTCTimeZone()));
}

}  // namespace

std::optional<NodeJobState> LaunchSteps::ChiefJobState() const {
  return JobControl(context_.spec, context_.channels.all()).ChiefState();
}

absl::Status LaunchSteps::Stop() const {
  return JobControl(context_.spec, context_.channels.all()).Stop();
}

std::vector<std::string> LaunchSteps::ChangesToRunningJob(
    const std::map<std::string, NodeState>& states) const {
  std::vector<StepForecast> forecasts =
      ForecastPlan(context_.plan, states, context_.options.secrets_digest);
  std::vector<std::string> changes;
  size_t index = 0;
  for (const Phase& phase : context_.plan.phases) {
    for (const Step& step : phase.steps) {
      const StepForecast& forecast = forecasts[index++];
      if (forecast.change == Change::kAdd || forecast.change == Change::kChange) {
        changes.push_back(absl::StrCat(PhaseName(phase.kind), " on ", step.node));
      }
    }
  }
  return changes;
}

std::optional<ApplyResult> LaunchSteps::CheckRunningJob(const std::optional<NodeJobState>& job) {
  if (FindPhase(context_.plan, PhaseKind::kLaunch) == nullptr) return std::nullopt;
  // An ended job stays ended until this apply launches: the launch phase
  // decides from it without asking the chief again.
  if (job.has_value() && IsFinal(job->phase)) ended_job_ = job;
  if (!job.has_value() || IsFinal(job->phase) || IsStale(*job, absl::Now())) {
    return std::nullopt;
  }
  const ApplyOptions& options = context_.options;
  std::string running = absl::StrCat("run ", job->run_id, " of this spec is ",
                                     JobPhaseName(job->phase), " (generation ", job->generation,
                                     Since(job->started_at), ")");
  if (options.replace) {
    context_.reporter.OutputLine(context_.spec.chief().name,
                                 absl::StrCat(running, "; stopping it (--replace)"));
    if (absl::Status stopped = Stop(); !stopped.ok()) {
      return ApplyResult{kExitApplyFailed, std::string(stopped.message())};
    }
    return std::nullopt;
  }
  absl::StatusOr<std::map<std::string, NodeState>> states = read_states_();
  if (!states.ok()) return ApplyResult{kExitApplyFailed, std::string(states.status().message())};
  std::vector<std::string> changes = ChangesToRunningJob(*states);
  if (changes.empty()) {
    ApplyResult result;
    result.note = absl::StrCat(running, "; nothing changed, nothing to do. See it with ",
                               options.status_command, " and ", options.logs_command);
    return result;
  }
  constexpr size_t kNamed = 6;
  std::string named = absl::StrJoin(changes.begin(),
                                    changes.begin() + std::min(kNamed, changes.size()), ", ");
  ApplyResult refused{
      kExitApplyFailed,
      absl::StrCat(running, ", and this apply would change it (", named,
                   changes.size() > kNamed ? ", ..." : "", "). Stop it first with ",
                   options.stop_command, ", or apply with --replace (stop, then apply)")};
  refused.job_untouched = true;
  return refused;
}

StepOutcome LaunchSteps::Run(const Step& step) {
  const NodeSpec* node = context_.FindNode(step.node);
  if (node == nullptr) return UnknownNode(step);
  if (absl::Status keyed = context_.channels.DeliverJobKey(*node); !keyed.ok()) {
    return StepOutcome::Failed(absl::StrCat("phase launch: ", keyed.message()));
  }
  if (!step.launch.has_value()) {
    return StepOutcome::Failed(
        absl::StrCat("node '", step.node, "', phase launch: the step has no launch request"));
  }
  // The plan's request, this run's id in it, rendered at the edge.
  AgentLaunch launch = *step.launch;
  launch.run_id = run_id_;
  std::string output;
  return RunStepCommand(context_, step, LaunchCommandLine(*node, launch), &output);
}

std::string LaunchSteps::StartAgents(const Phase& phase) {
  std::vector<std::string> failures(phase.steps.size());
  std::vector<bool> failed_first(phase.steps.size(), false);
  ParallelFor(phase.steps.size(), static_cast<int>(phase.steps.size()), [&](size_t i) {
    const Step& step = phase.steps[i];
    context_.reporter.StepStarted(step);
    absl::Time start = absl::Now();
    // The record of an earlier launch must not outlive a failure of this
    // one: the next apply would not launch again.
    if (const NodeSpec* node = context_.FindNode(step.node); node != nullptr) {
      context_.channels.Of(step.node)
          .RemoveFiles(NodeStateDir(*node), {StepRecordName(PhaseName(PhaseKind::kLaunch))})
          .IgnoreError();
      context_.records.Forget(step);
    }
    StepOutcome outcome = Run(step);
    // A node that fails before anyone cancelled it is a cause; the others
    // are stopped because of it.
    if (outcome.status == StepStatus::kFailed) {
      if (!context_.channels.CancelFor(step.node)->HasBeenNotified()) {
        failed_first[i] = true;
        context_.channels.CancelAll();
      } else {
        outcome.status = StepStatus::kCancelled;
      }
    }
    context_.reporter.StepFinished(step, outcome.status, absl::Now() - start, outcome.detail);
    failures[i] = std::move(outcome.failure);
  });
  for (size_t i = 0; i < phase.steps.size(); ++i) {
    if (failed_first[i]) return failures[i];
  }
  return "";
}

ApplyResult LaunchSteps::RunPhase(const Phase& phase) {
  if (phase.steps.empty()) return {};
  // All or nothing: a job whose ranks start on some nodes only would wait
  // for the others. Unchanged only after a job that succeeded: one that
  // failed or was stopped runs again.
  if (!context_.state.anything_changed() && !context_.options.force &&
      context_.records.AllHold(phase)) {
    std::optional<NodeJobState> job = ended_job_.has_value() ? ended_job_ : ChiefJobState();
    if (job.has_value() && job->phase == JobPhase::kSucceeded) {
      for (const Step& step : phase.steps) {
        context_.reporter.StepStarted(step);
        context_.reporter.StepFinished(step, StepStatus::kUnchanged, absl::ZeroDuration(), "");
      }
      return {};
    }
  }
  run_id_ = MakeRunId(absl::Now(), getpid());
  std::string first_failure = StartAgents(phase);
  bool interrupted = context_.state.interrupted();
  if (interrupted || !first_failure.empty()) {
    // Whatever did start stops: no rank waits for peers that never come.
    absl::Status stopped = Stop();
    if (interrupted) return {kExitInterrupted, "interrupted"};
    if (!stopped.ok()) absl::StrAppend(&first_failure, "\n", stopped.message());
    return {kExitApplyFailed, first_failure};
  }
  // A node that cannot take the launch's record (its container just died)
  // is the job's to report: the job is followed, and the record's failure
  // said only when the job itself succeeded.
  absl::Status recorded = context_.records.RecordPhase(phase);
  // Launched and recorded: following the job changes nothing, and `stop`
  // must be able to take the lock meanwhile.
  launched_();
  return AfterLaunch(recorded.ok() ? ApplyResult()
                                   : ApplyResult{kExitApplyFailed,
                                                 std::string(recorded.message())});
}

ApplyResult LaunchSteps::AfterLaunch(const ApplyResult& recorded) {
  const ApplyOptions& options = context_.options;
  if (options.detach && recorded.exit_code != 0) return recorded;
  if (options.detach) {
    const size_t nodes = context_.spec.nodes.size();
    ApplyResult result;
    result.note = absl::StrCat("run ", run_id_, " started on ", nodes,
                               nodes == 1 ? " node" : " nodes",
                               "; it runs without apply. Follow it with ", options.logs_command,
                               ", see it with ", options.status_command, ", stop it with ",
                               options.stop_command);
    return result;
  }
  ApplyResult followed = Follow();
  return followed.exit_code == 0 && recorded.exit_code != 0 ? recorded : followed;
}

}  // namespace fleetplan
