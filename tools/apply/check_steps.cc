#include "tools/apply/check_steps.h"

#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/plan/preflight_script.h"
#include "tools/protocol/check_line.h"
#include "tools/protocol/node_layout.h"

namespace fleetplan {
namespace {

std::vector<std::string> NodeNames(const ClusterSpec& spec) {
  std::vector<std::string> names;
  for (const NodeSpec& node : spec.nodes) names.push_back(node.name);
  return names;
}

}  // namespace

CheckSteps::CheckSteps(const StepContext& context, const StepScheduler& scheduler)
    : context_(context), scheduler_(scheduler), report_(NodeNames(context.spec)) {}

void CheckSteps::Reset() {
  absl::MutexLock lock(&mu_);
  report_ = PreflightReport(NodeNames(context_.spec));
  reported_ = false;
}

StepOutcome CheckSteps::Run(const Step& step, const std::string& script,
                            const absl::Notification* serving_done) {
  std::string output;
  StepOutcome outcome = RunStepCommand(context_, step, script, &output, serving_done);
  return Findings(step, std::move(outcome), output);
}

StepOutcome CheckSteps::Findings(const Step& step, StepOutcome outcome,
                                 const std::string& output) {
  bool ran = outcome.status != StepStatus::kFailed || outcome.exit_status != 0;
  if (!ran) return outcome;  // the node could not be asked
  CheckOutput found = ParseCheckOutput(output);
  {
    absl::MutexLock lock(&mu_);
    report_.Add(step.node, found);
  }
  std::vector<std::string> failed;
  for (const CheckResult& result : found.checks) {
    if (result.status == CheckStatus::kFail) {
      failed.push_back(absl::StrCat(result.check, ": ", result.message));
    }
  }
  // No failed check: passed, or the script itself broke (exit status and
  // output in the message).
  if (failed.empty()) return outcome;
  StepOutcome checks = StepOutcome::Failed(absl::StrCat(
      "node '", step.node, "', phase ", PhaseName(step.phase), ": ", absl::StrJoin(failed, "\n  ")));
  checks.stops_phase = false;
  return checks;
}

StepOutcome CheckSteps::Workdir(const Step& step, const NodeSpec& node, uint64_t bytes) {
  AgentSessionConnection* session = context_.channels.SessionOf(node.name);
  if (session == nullptr) {
    StepOutcome workdir = Run(step, WorkdirCheckScript(node, bytes), nullptr);
    workdir.stops_phase = true;
    return workdir;
  }
  // The same check inside the agent: no shell, no df.
  std::string output;
  absl::StatusOr<int> status = session->CheckWorkdir(
      node.workdir, NodeStateDir(node), bytes, context_.options.step_timeout, &output);
  if (!status.ok()) {
    return StepOutcome::Failed(absl::StrCat("node '", node.name, "', phase sync, step ",
                                            StepKindName(step.kind), ": ",
                                            status.status().message()));
  }
  StepOutcome ran =
      *status == 0 ? StepOutcome()
                   : StepOutcome::Failed(absl::StrCat("node '", node.name,
                                                      "', phase sync: the workdir check said: ",
                                                      output),
                                         *status);
  StepOutcome workdir = Findings(step, std::move(ran), output);
  workdir.stops_phase = true;
  return workdir;
}

ApplyResult CheckSteps::RunPhase(const Phase& phase) {
  if (phase.steps.empty()) return {};
  const ApplyOptions& options = context_.options;
  // All nodes or none: the chief's listener waits for every node's connect
  // check. The checks guard the launch: they run whenever it runs after
  // anything they check changed, or after a launch that did not succeed
  // (its record is gone). An edited source file that is not the program
  // (the edit loop) relaunches without them.
  const Phase* launch = FindPhase(context_.plan, PhaseKind::kLaunch);
  if (!context_.state.checked_inputs_changed() && !options.force && !options.check_only &&
      context_.records.AllHold(phase) &&
      (launch == nullptr || context_.records.AllHold(*launch))) {
    for (const Step& step : phase.steps) {
      context_.reporter.StepStarted(step);
      context_.reporter.StepFinished(step, StepStatus::kUnchanged, absl::ZeroDuration(), "");
    }
    return {};
  }
  RunAllOf(phase);
  std::string message;
  {
    absl::MutexLock lock(&mu_);
    report_.Conclude();
    if (report_.failed()) message = report_.FailureMessage();
    if (message.empty() && options.check_only) message = NoCheckRan();
  }
  if (context_.state.failed()) message = context_.state.failure();
  Report();
  if (!message.empty()) return {kExitApplyFailed, message};
  absl::Status recorded = context_.records.RecordPhase(phase);
  if (!recorded.ok()) return {kExitApplyFailed, std::string(recorded.message())};
  return {};
}

// Checks fail closed: a node that is there but where every check was a
// skip passed nothing (`plan --check` before the first apply, whose agent
// is not on the node yet). A node not created yet is said apart.
std::string CheckSteps::NoCheckRan() const {
  std::vector<std::string> lines;
  for (const NodeChecks* node : report_.NoneRan()) {
    if (context_.channels.NotThere(node->node)) continue;
    std::vector<std::string> why;
    for (const CheckResult& result : node->checks) why.push_back(result.message);
    lines.push_back(absl::StrCat("no check could run on node '", node->node, "': ",
                                 why.empty() ? "it reported none" : absl::StrJoin(why, "; ")));
  }
  return absl::StrJoin(lines, "\n");
}

void CheckSteps::RunAllOf(const Phase& phase) {
  std::vector<const Step*> rest;
  std::vector<std::unique_ptr<absl::Notification>> served;
  std::vector<std::thread> serving;
  for (const Step& step : phase.steps) {
    if (context_.channels.NotThere(step.node)) {
      SkipNotThere(step);
      continue;
    }
    if (!step.serves_phase) {
      rest.push_back(&step);
      continue;
    }
    served.push_back(std::make_unique<absl::Notification>());
    serving.emplace_back(
        [this, &step, done = served.back().get()] { scheduler_.RunOne(step, done); });
  }
  scheduler_.RunAll(rest, context_.options.parallelism);
  for (auto& done : served) done->Notify();
  for (std::thread& thread : serving) thread.join();
}

void CheckSteps::SkipNotThere(const Step& step) {
  CheckOutput skipped;
  skipped.checks.push_back(
      {std::string(kCheckReach), CheckStatus::kSkip,
       absl::StrCat(context_.channels.WhyNotThere(step.node), "; nothing else checked")});
  absl::MutexLock lock(&mu_);
  report_.Add(step.node, skipped);
}

void CheckSteps::Report() {
  absl::MutexLock lock(&mu_);
  if (reported_ || report_.empty()) return;
  reported_ = true;
  context_.reporter.ChecksReported(report_);
}

}  // namespace fleetplan
