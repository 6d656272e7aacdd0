// The preflight phase of the Executor: every node's checks at once (the
// chief's beside the others, its stdin held until they end), all nodes or
// none, the cluster-wide conclusions and the summary, and a stop before
// launch when anything failed. Also the checks the sync runs first.

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/apply/executor.h"
#include "tools/protocol/check_line.h"

namespace fleetplan {

Executor::Outcome Executor::RunChecks(const Step& step, const std::string& script,
                                      const absl::Notification* serving_done) {
  std::string output;
  Outcome outcome = RunCommand(step, script, &output, serving_done);
  return CheckFindings(step, std::move(outcome), output);
}

Executor::Outcome Executor::CheckFindings(const Step& step, Outcome outcome,
                                          const std::string& output) {
  bool ran = outcome.status != StepStatus::kFailed || outcome.exit_status != 0;
  if (!ran) return outcome;  // the node could not be asked
  CheckOutput found = ParseCheckOutput(output);
  {
    absl::MutexLock lock(&mu_);
    checks_.Add(step.node, found);
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
  Outcome checks = Outcome::Failed(absl::StrCat("node '", step.node, "', phase ",
                                                PhaseName(step.phase), ": ",
                                                absl::StrJoin(failed, "\n  ")));
  checks.stops_phase = false;
  return checks;
}

ApplyResult Executor::RunPreflight(const Phase& phase) {
  if (phase.steps.empty()) return {};
  bool changed;
  {
    absl::MutexLock lock(&mu_);
    changed = checked_inputs_changed_;
  }
  // All nodes or none: the chief's listener waits for every node's connect
  // check. The checks guard the launch: they run whenever it runs after
  // anything they check changed, or after a launch that did not succeed
  // (its record is gone). An edited source file that is not the program
  // (the edit loop) relaunches without them.
  const Phase* launch = FindPhase(plan_, PhaseKind::kLaunch);
  if (!changed && !options_.force && !options_.check_only && AllRecorded(phase) &&
      (launch == nullptr || AllRecorded(*launch))) {
    ReportUnchanged(phase);
    return {};
  }

  std::vector<const Step*> rest;
  std::vector<std::unique_ptr<absl::Notification>> served;
  std::vector<std::thread> serving;
  for (const Step& step : phase.steps) {
    if (not_there_.count(step.node) != 0) {
      SkipChecksOf(step);
      continue;
    }
    if (!step.serves_phase) {
      rest.push_back(&step);
      continue;
    }
    served.push_back(std::make_unique<absl::Notification>());
    serving.emplace_back(
        [this, &step, done = served.back().get()] { RunOneStep(step, done); });
  }
  RunSteps(rest, options_.parallelism);
  for (auto& done : served) done->Notify();
  for (std::thread& thread : serving) thread.join();

  std::string message;
  {
    absl::MutexLock lock(&mu_);
    checks_.Conclude();
    if (failed_) message = failure_;
    else if (checks_.failed()) message = checks_.FailureMessage();
  }
  ReportChecks();
  if (!message.empty()) return {kExitApplyFailed, message};
  return RecordPhase(phase);
}

void Executor::SkipChecksOf(const Step& step) {
  CheckOutput skipped;
  skipped.checks.push_back({std::string(kCheckReach), CheckStatus::kSkip,
                            absl::StrCat(not_there_.at(step.node), "; nothing else checked")});
  absl::MutexLock lock(&mu_);
  checks_.Add(step.node, skipped);
}

void Executor::ReportChecks() {
  absl::MutexLock lock(&mu_);
  if (checks_reported_ || checks_.empty()) return;
  checks_reported_ = true;
  reporter_.ChecksReported(checks_);
}

}  // namespace fleetplan
